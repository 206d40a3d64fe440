"""``pl.dump_tag(t)`` before calls of inline functions whose ``pl.at`` scopes pass ``t`` to kernels.

A tag marks ``t`` for every later ``pl.at(level=CORE_GROUP)`` scope of its function. When the scopes
are in an inline function (``@pl.jit.inline``) the caller calls, they only join the caller's body when
InlineFunctions splices them in; until then the call carries the tags (``attrs[DUMP_TAGS_ATTR]``) and
InlineFunctions adds them to the dumps of the scopes it splices.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, Expr, GlobalVar, Var
from pypto.ir.stmt import DUMP_TAGS_ATTR, Stmt
from pypto.ir.visitor import IRMutator


def forward_to_inline_calls(stmts: list[Stmt], tags: list[Var], externals: dict[str, Any]) -> list[Stmt] | None:
    """``stmts`` with each tag put on the inline-function calls that pass it; None when no call does."""
    found = False

    class _Calls(IRMutator):
        def visit_Call(self, c: Call) -> Expr:  # noqa: N802
            nonlocal found
            c = self.generic_visit(c)
            callee = externals.get(c.op.name) if isinstance(c.op, GlobalVar) else None
            passed = tuple(t for t in tags if any(a is t for a in c.args))
            if getattr(callee, "func_type", None) is not FunctionType.Inline or not passed:
                return c
            found = True
            return dataclasses.replace(c, attrs={**c.attrs, DUMP_TAGS_ATTR: passed})

    out = [_Calls().visit(s) for s in stmts]
    return out if found else None
