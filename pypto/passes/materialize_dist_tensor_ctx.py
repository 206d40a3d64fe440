"""MaterializeDistTensorCtx: rank-dependent kernel scalars become values the caller computes.

A chip kernel gets its rank (and other per-rank values) as an integer scalar parameter and often
converts it at once (``rank_f32 = pl.cast(rank, target_type=pl.FP32)``). ptoas 0.1.1 has no scalar
int-to-float conversion (``arith.sitofp``) in a kernel, so such a conversion moves to every caller:
the kernel gets a new float parameter (the converted value, appended after the others, scalars
last) and each call site passes ``cast(arg)``, which the orchestration computes. Only a conversion
of a parameter at the top level of the kernel body is moved; anything else is left to codegen, which
reports it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from pypto.ir.enums import ArgDirection
from pypto.ir.expr import Call, GlobalVar, UnaryExpr, UnOp, Var
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, flatten
from pypto.ir.types import ScalarType
from pypto.ir.visitor import IRMutator
from pypto.passes._rewrite import with_scalar_params
from pypto.passes.base import Pass


def _hoistable(stmt: object, params: tuple[Var, ...]) -> bool:
    if not (isinstance(stmt, AssignStmt) and isinstance(stmt.value, UnaryExpr) and stmt.value.op is UnOp.Cast):
        return False
    src = stmt.value.operand
    return (isinstance(src, Var) and src in params and isinstance(src.type, ScalarType)
            and src.type.dtype.is_int and stmt.value.dtype.is_float)


def _hoist(func: Function) -> tuple[Function, list[tuple[int, UnaryExpr]]]:
    """The kernel with its top-level parameter casts turned into parameters, and (param index, cast) each."""
    body = flatten(func.body)
    moved = [s for s in body if _hoistable(s, func.params)]
    if not moved:
        return func, []
    casts = [(func.params.index(s.value.operand), s.value) for s in moved]
    return with_scalar_params(func, [s.var for s in moved], [s for s in body if s not in moved]), casts


class _CallSites(IRMutator):
    def __init__(self, casts: dict[str, list[tuple[int, UnaryExpr]]]) -> None:
        self.casts = casts

    def visit_Call(self, call: Call) -> Call:  # noqa: N802
        call = self.generic_visit(call)
        moved = self.casts.get(call.op.name) if isinstance(call.op, GlobalVar) else None
        if not moved:
            return call
        extra = tuple(dataclasses.replace(cast, operand=call.args[i]) for i, cast in moved)
        attrs = dict(call.attrs)
        if attrs.get("arg_directions") is not None:
            attrs["arg_directions"] = tuple(attrs["arg_directions"]) + (ArgDirection.Scalar,) * len(extra)
        return dataclasses.replace(call, args=tuple(call.args) + extra, attrs=attrs)


@dataclass(frozen=True)
class MaterializeDistTensorCtx(Pass):
    name: ClassVar[str] = "MaterializeDistTensorCtx"
    produces: ClassVar[frozenset[IRProperty]] = frozenset({IRProperty.DistTensorCtxMaterialized})

    def run(self, program: Program) -> Program:
        funcs, casts = [], {}
        for f in program.functions:
            new, moved = _hoist(f) if f.is_incore else (f, [])
            if moved:
                casts[f.name] = moved
            funcs.append(new)
        if not casts:
            return program
        sites = _CallSites(casts)
        return program.with_functions([sites.visit_function(f) for f in funcs])
