"""The ``@pl.jit`` layer: specialization on sample arguments, a per-function compile cache.

Floor: above ``driver`` (a jit compile is ``driver.compile``), ``language``, ``runtime`` and below;
a line inside: ``decorator`` -> ``frontend``, ``disk_cache``, ``specialize`` -> ``meta``.
"""

from pypto.jit.decorator import RUNTIME, JITFunction, jit

__all__ = ["RUNTIME", "JITFunction", "jit"]
