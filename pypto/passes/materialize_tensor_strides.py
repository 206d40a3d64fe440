"""MaterializeTensorStrides: every explicit TensorView gets packed row-major strides."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Expr, Var
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.types import Dim, TensorType
from pypto.passes._util import defined_vars, retype
from pypto.passes.base import Pass


def packed_strides(shape: tuple[Dim, ...]) -> tuple[Dim, ...]:
    """Row-major strides in elements for ``shape`` (symbolic when dims are dynamic)."""
    out: list[Dim] = []
    acc: Dim = 1
    for d in reversed(shape):
        out.append(acc)
        if isinstance(acc, int) and isinstance(d, int):
            acc = acc * d
        else:
            lhs: Expr = ConstInt(acc) if isinstance(acc, int) else acc
            rhs: Expr = ConstInt(d) if isinstance(d, int) else d
            acc = BinaryExpr(BinOp.Mul, lhs, rhs, ConstInt(0).dtype)
    return tuple(reversed(out))


@dataclass(frozen=True)
class MaterializeTensorStrides(Pass):
    """Tensors with a view but no strides get canonical packed strides; others are untouched."""

    name = "MaterializeTensorStrides"
    produces = frozenset({IRProperty.TensorViewCanonical})

    def run_function(self, func: Function, program: Program) -> Function:
        todo: dict[Var, TensorType] = {}
        for v in (*func.params, *defined_vars(func.body)):
            t = v.var_type
            if isinstance(t, TensorType) and t.view is not None and t.view.stride is None:
                todo[v] = dataclasses.replace(t, view=dataclasses.replace(t.view, stride=packed_strides(t.shape)))
        return retype(func, todo)
