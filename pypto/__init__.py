"""pypto: a pure-Python PyPTO compile flow with pinned toolchains and CPU simulation.

Floor: the package face imports nothing (its upstream names load on first use, via ``_LAZY``, and its
submodule names, ``pypto.ir`` and the like, are imported when first read).
The rooms, ground first (``tests/test_layers.py`` holds the table and fails on an import that runs
back up): ``span`` -> ``diagnostics`` -> ``errors`` ->
``toolchain`` -> ``ir`` | ``testing`` -> ``artifact`` -> ``language`` -> ``passes`` -> ``codegen`` | ``backend`` |
``runtime`` | ``compile_profiling`` -> ``debug`` -> ``compiled`` -> ``driver`` -> ``jit`` -> ``flows`` | ``tools``
-> ``cli``.
"""
__version__ = "0.1.0"

_DTYPES = ("BOOL", "INT4", "INT8", "INT16", "INT32", "INT64", "UINT4", "UINT8", "UINT16", "UINT32", "UINT64",
           "FP4", "FP8E4M3FN", "FP8E5M2", "FP8E8M0", "FP16", "FP32", "BF16", "HF4", "HF8", "INDEX")
# upstream's top-level names, loaded on first use (the face itself imports nothing)
_LAZY = {"Error": "pypto.errors", "InternalError": "pypto.errors", "LogLevel": "pypto.toolchain.logging",
         "set_log_level": "pypto.toolchain.logging", "get_log_level": "pypto.toolchain.logging",
         "log_debug": "pypto.toolchain.logging", "log_info": "pypto.toolchain.logging",
         "log_warn": "pypto.toolchain.logging", "log_error": "pypto.toolchain.logging",
         "log_fatal": "pypto.toolchain.logging", "log_event": "pypto.toolchain.logging",
         "check": "pypto.errors", "internal_check": "pypto.errors", "internal_check_span": "pypto.errors",
         "DataType": "pypto.ir.dtypes", **{f"DT_{d}": "pypto.ir.dtypes" for d in _DTYPES}}
_RENAMED = {"Error": "PyptoError"}
_SUBMODULES = ("codegen", "compile_profiling", "ir", "language", "passes", "runtime", "testing")


def __getattr__(name: str):
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f"pypto.{name}")  # the import system binds it as an attribute
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pypto' has no attribute {name!r}")
    owner = importlib.import_module(module)
    value = getattr(owner.DataType, name[3:]) if name.startswith("DT_") else getattr(owner, _RENAMED.get(name, name))
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_LAZY, *_SUBMODULES})


__all__ = ["Error", "InternalError", "LogLevel", "__version__", "get_log_level", "set_log_level",
           "log_debug", "log_info", "log_warn", "log_error", "log_fatal", "log_event",
           "check", "internal_check", "internal_check_span", "DataType", *(f"DT_{d}" for d in _DTYPES),
           *_SUBMODULES]
