"""Upstream's ``pypto.runtime.builtins``: built-in programs the runtime offers (the collectives).

Floor: the runtime's; data only (docstrings), no imports.
"""
