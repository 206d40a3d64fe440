"""The assembler stage: ptoas per kernel unit, kernel wrappers, ``kernel_config.py``.

Floor: above ``artifact``, ``toolchain`` and ``errors``; it takes codegen's :class:`~pypto.artifact.Artifact`
without importing codegen.

Also the public face upstream programs import from ``pypto.backend``: ``BackendType`` (the pass and
codegen target, defined in :mod:`pypto.ir.options`), upstream's chip model (:mod:`pypto.backend.soc`:
``Backend910B``/``Backend950`` with their ``SoC``/``Die``/``Cluster``/``Core``/``Mem`` hierarchy and
the process-wide ``set_backend_type`` configuration) and, in :mod:`pypto.backend.pto_backend`,
``PartialCodegenError``.
"""

from pypto.backend.assemble import assemble
from pypto.backend.soc import (
    Backend,
    Backend910B,
    Backend950,
    Cluster,
    Core,
    Die,
    Mem,
    SoC,
    get_backend_instance,
    get_backend_type,
    is_backend_configured,
    reset_for_testing,
    set_backend_type,
)
from pypto.ir.options import BackendType

__all__ = ["Backend", "Backend910B", "Backend950", "BackendType", "Cluster", "Core", "Die", "Mem", "SoC", "assemble",
           "get_backend_instance", "get_backend_type", "is_backend_configured", "reset_for_testing",
           "set_backend_type"]
