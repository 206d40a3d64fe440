"""pypto: a pure-Python PyPTO compile flow with pinned toolchains and CPU simulation.

Floor: the package face imports nothing. The rooms, ground first (``tests/test_layers.py`` holds the
table and fails on an import that runs back up): ``span`` -> ``diagnostics`` -> ``errors`` ->
``toolchain`` -> ``ir`` -> ``artifact`` -> ``language`` -> ``passes`` -> ``codegen`` | ``backend`` |
``runtime`` -> ``compiled`` -> ``driver`` -> ``jit`` -> ``flows`` -> ``cli``.
"""
__version__ = "0.1.0"
