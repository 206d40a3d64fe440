"""pypto: a pure-Python PyPTO compile flow with pinned toolchains and CPU simulation."""
__version__ = "0.1.0"

from pypto.errors import InternalError  # noqa: E402
from pypto.errors import PyptoError as Error  # noqa: E402

_LOGGING = ("LogLevel", "set_log_level", "get_log_level")


def __getattr__(name: str):  # the logging names pull in structlog: only on first use
    if name in _LOGGING:
        from pypto.toolchain import logging as _logging

        value = getattr(_logging, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pypto' has no attribute {name!r}")


__all__ = ["Error", "InternalError", "LogLevel", "__version__", "get_log_level", "set_log_level"]
