"""The assembler stage: ptoas per kernel unit, kernel wrappers, ``kernel_config.py``.

Floor: above ``artifact``, ``toolchain`` and ``errors``; it takes codegen's :class:`~pypto.artifact.Artifact`
without importing codegen.
"""

from pypto.backend.assemble import assemble

__all__ = ["assemble"]
