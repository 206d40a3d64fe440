"""pypto: a pure-Python PyPTO compile flow with pinned toolchains and CPU simulation."""
__version__ = "0.1.0"
