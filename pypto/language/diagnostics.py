"""Frontend diagnostics computed on the parsed IR (pre-pipeline warnings)."""

from __future__ import annotations

from pypto.diagnostics import Diagnostic, Severity
from pypto.ir.enums import ParamDirection
from pypto.ir.expr import Call, Var
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt
from pypto.ir.visitor import IRVisitor


def out_param_write_dropped(func: Function) -> list[Diagnostic]:
    """``out = expr`` on an Out/InOut param that never writes the param: the caller sees nothing.

    A rebinding is fine when the value is a call taking the param itself (``pl.assemble(out, ...)``,
    ``pl.store(t, offs, out)``, ``self.k(..., out)``), which is what ``out[:] = expr`` produces.
    """
    outs = {p.name: p for p, d in zip(func.params, func.param_directions, strict=True)
            if d is not ParamDirection.In}
    found: list[Diagnostic] = []
    written: set[int] = {id(p) for p in outs.values()}

    class _Scan(IRVisitor):
        def visit_AssignStmt(self, s: AssignStmt) -> None:  # noqa: N802
            param = outs.get(s.var.name)
            if param is not None and _writes(s.value, written):
                written.add(id(s.var))
            elif param is not None and s.var is not param:
                found.append(Diagnostic(
                    Severity.WARNING, "OutParamWriteDropped",
                    f"assignment to output parameter '{param.name}' of '{func.name}' rebinds the name only — "
                    f"the caller's buffer is never written. Use '{param.name}[:] = <expr>' to write into it",
                    s.span))
            self.generic_visit(s)

    _Scan().visit(func.body)
    return found


def _writes(value: object, written: set[int]) -> bool:
    return isinstance(value, Call) and any(isinstance(a, Var) and id(a) in written for a in value.args)
