"""NormalizeReturnOrder: kernels return their Out/InOut params themselves, in parameter order."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.ir.enums import ParamDirection
from pypto.ir.expr import Expr
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import ReturnStmt, flatten, seq
from pypto.ir.types import TensorType
from pypto.passes._buffer_roots import collect_buffer_roots
from pypto.passes.base import Pass


@dataclass(frozen=True)
class NormalizeReturnOrder(Pass):
    """Returned tensors are replaced by the Out/InOut params they were written into."""

    name = "NormalizeReturnOrder"
    produces = frozenset({IRProperty.ReturnParamsExplicit})

    def run_function(self, func: Function, program: Program) -> Function:
        stmts = flatten(func.body)
        if not func.is_incore or not stmts or not isinstance(stmts[-1], ReturnStmt):
            return func
        ret = stmts[-1]
        roots = collect_buffer_roots(func, program)
        outs = {p for p, d in zip(func.params, func.param_directions, strict=True) if d is not ParamDirection.In}
        # a returned write result (``c__store = tile.store(t, off, c)``) names the param it updated
        values: list[Expr] = [(roots.root(v) or v) if isinstance(v.type, TensorType) and not roots.is_ambiguous(v)
                              else v for v in ret.values]
        if all(a is b for a, b in zip(values, ret.values, strict=True)) or \
                any(isinstance(v.type, TensorType) and v not in outs for v in values):
            return func
        return func.with_(body=seq([*stmts[:-1], dataclasses.replace(ret, values=tuple(values))]))
