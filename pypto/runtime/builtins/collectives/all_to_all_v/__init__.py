"""Upstream's ``pypto.runtime.builtins.collectives.all_to_all_v``: all_to_all with per-rank counts.

Floor: the runtime's; no imports. This toolchain has no variable-count all_to_all (no ``pld`` op for it); exchange fixed-size
blocks with ``pld.tensor.all_to_all`` and pass the counts as data.
"""
