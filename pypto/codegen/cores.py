"""Which core a kernel runs on: ``aiv`` (vector) or ``aic`` (cube), for PTO and orchestration codegen."""

from __future__ import annotations

from pypto.ir.enums import CUBE_SPACES, FunctionType, MemorySpace
from pypto.ir.expr import Var
from pypto.ir.function import Function
from pypto.ir.types import TileType
from pypto.ir.visitor import IRVisitor

CORE_OF_TYPE = {FunctionType.AIV: "aiv", FunctionType.AIC: "aic"}


class _Spaces(IRVisitor):
    def __init__(self) -> None:
        self.spaces: set[MemorySpace] = set()

    def visit_Var(self, v: Var) -> None:  # noqa: N802
        t = v.type
        if isinstance(t, TileType) and t.memory_space is not None:
            self.spaces.add(t.memory_space)

    visit_IterArg = visit_Var  # noqa: N815


def core_of(func: Function) -> str:
    """``aiv`` or ``aic``: from the function type, else from the memory spaces its tiles use."""
    if func.func_type in CORE_OF_TYPE:
        return CORE_OF_TYPE[func.func_type]
    v = _Spaces()
    v.visit(func.body)
    return "aic" if v.spaces & CUBE_SPACES else "aiv"
