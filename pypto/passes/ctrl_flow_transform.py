"""CtrlFlowTransform: break/continue -> structured control flow (rejected here, see below)."""

from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import UnsupportedFeatureError
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import BreakStmt, ContinueStmt
from pypto.passes._util import iter_stmts
from pypto.passes.base import Pass


@dataclass(frozen=True)
class CtrlFlowTransform(Pass):
    """Programs without break/continue are already structured; break/continue raise UnsupportedFeatureError."""

    name = "CtrlFlowTransform"
    produces = frozenset({IRProperty.StructuredCtrlFlow})

    def run_function(self, func: Function, program: Program) -> Function:
        for s in iter_stmts(func.body):
            if isinstance(s, (BreakStmt, ContinueStmt)):
                kw = "break" if isinstance(s, BreakStmt) else "continue"
                raise UnsupportedFeatureError(
                    f"'{kw}' inside a loop is not supported (function '{func.name}')", s.span,
                    hint="restructure the loop with an if/else around the body")
        return func
