"""The assembler stage: ptoas per kernel unit, kernel wrappers, ``kernel_config.py``."""

from pypto.backend.assemble import assemble

__all__ = ["assemble"]
