"""``system.task_dummy``: an orchestration task with no work that joins its dependencies.

Its one operand is the list of task ids (``TASK_ID`` scalars or ``pl.Array`` s of them) it waits
for; its result is its own task id, which completes once every listed task has completed, so one id
can stand for a whole fan-in in later ``deps=[...]`` lists.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Expr, MakeTuple
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import ArrayType, ScalarType, Type
from pypto.span import Span


def _is_task_ids(t: Type) -> bool:
    return isinstance(t, ScalarType | ArrayType) and t.dtype is DataType.TASK_ID


def _task_dummy(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    deps = args[0]
    if not isinstance(deps, MakeTuple):
        raise UserError("system.task_dummy: deps must be a list of task ids", span)
    for d in deps.elements:
        if not _is_task_ids(d.type):
            raise UserError(f"system.task_dummy: every dependency must be a task id (pl.TASK_ID) or an array of "
                            f"them, got {d.type}", span,
                            hint="pass the task id of a pl.submit (out, tid = pl.submit(...)) or a "
                                 "pl.array.create(N, pl.TASK_ID) array")
    return ScalarType(DataType.TASK_ID)


register(OpDef("system.task_dummy", ("deps",), _task_dummy, category="system",
               doc="a dependency-only task: completes when every task in deps has completed"))


def _unsupported(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    from pypto.ir.types import UnknownType

    return UnknownType()


# A @pl.program function whose body uses an upstream construct that ptoas 0.1.1 cannot express: the
# parser keeps the program definable (so the rest of a module imports and its other programs run) and
# leaves this one statement, at the construct's location, in place of the body. Compiling it raises
# the construct's UnsupportedFeatureError (``pypto.passes.guards.reject_unsupported``).
register(OpDef("system.unsupported", (), _unsupported, {"construct": "", "message": "", "hint": ""},
               category="system", effect=True,
               doc="an upstream construct ptoas 0.1.1 cannot express; compiling it is an UnsupportedFeatureError"))
