"""DeriveCallDirections: ``attrs["arg_directions"]`` on every program call, from the callee's params."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.ir.enums import ArgDirection, ParamDirection
from pypto.ir.expr import Call, Expr, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.types import ScalarType
from pypto.ir.visitor import IRMutator
from pypto.passes._util import calls_in
from pypto.passes.base import Pass

PARAM_TO_ARG: dict[ParamDirection, ArgDirection] = {
    ParamDirection.In: ArgDirection.Input,
    ParamDirection.Out: ArgDirection.OutputExisting,
    ParamDirection.InOut: ArgDirection.InOut,
}


def directions(call: Call, callee: Function) -> tuple[ArgDirection, ...]:
    """Scalar args -> scalar; tensors follow the callee's parameter direction."""
    return tuple(ArgDirection.Scalar if isinstance(a.type, ScalarType) else PARAM_TO_ARG[d]
                 for a, d in zip(call.args, callee.param_directions, strict=True))


class _Stamp(IRMutator):
    def __init__(self, program: Program) -> None:
        self.program = program

    def visit_Call(self, call: Call) -> Expr:  # noqa: N802
        call = self.generic_visit(call)
        if not isinstance(call.op, GlobalVar):
            return call
        callee = self.program.get_function(call.op.name)
        if callee is None:
            return call
        dirs = directions(call, callee)
        if call.attrs.get("arg_directions") == dirs:
            return call
        return dataclasses.replace(call, attrs={**call.attrs, "arg_directions": dirs})


@dataclass(frozen=True)
class DeriveCallDirections(Pass):
    """Every call to a program function carries one ArgDirection per argument."""

    name = "DeriveCallDirections"
    produces = frozenset({IRProperty.CallDirectionsResolved})

    def run_function(self, func: Function, program: Program) -> Function:
        if not any(isinstance(c.op, GlobalVar) for c in calls_in(func.body)):
            return func
        body = _Stamp(program).visit(func.body)
        return func if body is func.body else func.with_(body=body)
