"""pypto: a pure-Python PyPTO compile flow with pinned toolchains and CPU simulation.

Floor: the package face imports nothing (its upstream names load on first use, via ``_LAZY``).
The rooms, ground first (``tests/test_layers.py`` holds the table and fails on an import that runs
back up): ``span`` -> ``diagnostics`` -> ``errors`` ->
``toolchain`` -> ``ir`` -> ``artifact`` -> ``language`` -> ``passes`` -> ``codegen`` | ``backend`` |
``runtime`` -> ``debug`` -> ``compiled`` -> ``driver`` -> ``jit`` -> ``flows`` | ``tools`` -> ``cli``.
"""
__version__ = "0.1.0"

# upstream's top-level names, loaded on first use (the face itself imports nothing)
_LAZY = {"Error": "pypto.errors", "InternalError": "pypto.errors", "LogLevel": "pypto.toolchain.logging",
         "set_log_level": "pypto.toolchain.logging", "get_log_level": "pypto.toolchain.logging"}
_RENAMED = {"Error": "PyptoError"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pypto' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value
    return value


__all__ = ["Error", "InternalError", "LogLevel", "__version__", "get_log_level", "set_log_level"]
