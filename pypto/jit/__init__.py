"""The ``@pl.jit`` layer: specialization on sample arguments, a per-function compile cache."""

from pypto.jit.decorator import RUNTIME, JITFunction, jit

__all__ = ["RUNTIME", "JITFunction", "jit"]
