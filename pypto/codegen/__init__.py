"""Codegen: post-pipeline IR -> PTO MLIR units, orchestration C++, metadata (an :class:`Artifact`)."""

from pypto.artifact.model import Artifact, FuncId, KernelFunc, KernelParam, KernelUnit
from pypto.codegen.generate import generate

__all__ = ["Artifact", "FuncId", "KernelFunc", "KernelParam", "KernelUnit", "generate"]
