"""ExpandMixedKernel: InCore kernels become AIC (pure cube) or AIV (vector); none stay InCore."""

from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import FunctionType, MemorySpace
from pypto.ir.expr import Call
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.types import TileType
from pypto.passes._util import calls_in
from pypto.passes.base import Pass

CUBE_OPS = frozenset({"tile.matmul", "tile.matmul_acc", "tile.matmul_bias"})
CUBE_SPACES = frozenset({MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias})


def core_of(call: Call) -> str | None:
    """``cube``, ``vector`` or None (no tile involved) for one op call."""
    if not isinstance(call.op, str) or not call.op.startswith("tile."):
        return None
    if call.op in CUBE_OPS:
        return "cube"
    tiles = [t for t in (call.result_type, *(a.type for a in call.args)) if isinstance(t, TileType)]
    if not tiles:
        return None
    return "cube" if any(t.memory_space in CUBE_SPACES for t in tiles) else "vector"


@dataclass(frozen=True)
class ExpandMixedKernel(Pass):
    """Classify each InCore kernel by the cores its ops need; mixed kernels are rejected."""

    name = "ExpandMixedKernel"
    produces = frozenset({IRProperty.MixedKernelExpanded})

    def run_function(self, func: Function, program: Program) -> Function:
        if func.func_type is not FunctionType.InCore:
            return func
        cores = {c for c in (core_of(call) for call in calls_in(func.body)) if c is not None}
        if cores == {"cube", "vector"}:
            raise UnsupportedFeatureError(
                f"kernel '{func.name}' mixes cube (matmul / Mat-Left-Right-Acc tiles) and vector ops; mixed "
                f"AIC+AIV kernels are not supported", func.span,
                hint="split it into a cube kernel and a vector kernel that communicate through a tensor")
        ftype = FunctionType.AIC if cores == {"cube"} else FunctionType.AIV
        return func.with_(func_type=ftype)
