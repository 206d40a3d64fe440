"""Upstream's ``pypto.runtime.builtins.collectives.allreduce_ring``: upstream's ring-ordered allreduce.

Floor: the runtime's; no imports. Ring-mode collectives (``pld.tensor.allreduce(..., mode=ring)``) are not supported on this
toolchain and are a located compile-time error; the one-shot ``pld.tensor.allreduce`` computes
the same result.
"""
