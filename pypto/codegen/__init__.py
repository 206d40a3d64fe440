"""Codegen: post-pipeline IR -> PTO MLIR units and orchestration C++ (an :class:`Artifact`).

Floor: above ``artifact``, ``ir`` and ``errors``; it knows nothing of the assembler or the runtime
(they meet in :mod:`pypto.artifact`).
"""

from pypto.artifact.model import Artifact, FuncId, KernelFunc, KernelParam, KernelUnit
from pypto.codegen.generate import generate

__all__ = ["Artifact", "FuncId", "KernelFunc", "KernelParam", "KernelUnit", "generate"]
