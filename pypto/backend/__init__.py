"""The assembler stage: ptoas per kernel unit, kernel wrappers, ``kernel_config.py``.

Floor: above ``artifact``, ``toolchain`` and ``errors``; it takes codegen's :class:`~pypto.artifact.Artifact`
without importing codegen.

Also the public face upstream programs import from ``pypto.backend``: ``BackendType`` (the pass and
codegen target, defined in :mod:`pypto.ir.options`) and, in :mod:`pypto.backend.pto_backend`,
``PartialCodegenError``.
"""

from pypto.backend.assemble import assemble
from pypto.ir.options import BackendType

__all__ = ["BackendType", "assemble"]
