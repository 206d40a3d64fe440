"""Control-flow and scope constructs (``pl.range``, ``pl.yield_``, ``pl.at``, ...).

They only have meaning inside a ``@pl.function`` body, which is parsed and never executed; the
parser recognises them by identity. Calling one at run time raises a clear error.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError


class DslConstruct:
    """A name the frontend understands; executing it directly is a user error."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise UserError(f"pl.{self.name}() can only be used inside a @pl.function body "
                        "(function bodies are parsed, not executed)")

    def __repr__(self) -> str:
        return f"pl.{self.name}"


range = DslConstruct("range")  # noqa: A001
parallel = DslConstruct("parallel")
unroll = DslConstruct("unroll")
pipeline = DslConstruct("pipeline")
while_ = DslConstruct("while_")
yield_ = DslConstruct("yield_")
cond = DslConstruct("cond")
const = DslConstruct("const")
at = DslConstruct("at")
cluster = DslConstruct("cluster")
scope = DslConstruct("scope")
manual_scope = DslConstruct("manual_scope")
func_attr = DslConstruct("func_attr")
static_print = DslConstruct("static_print")
dump_tag = DslConstruct("dump_tag")
static_assert = DslConstruct("static_assert")
spmd = DslConstruct("spmd")
submit = DslConstruct("submit")
spmd_submit = DslConstruct("spmd_submit")
task_dummy = DslConstruct("system.task_dummy")  # pl.system.task_dummy(deps=[...])
# the printed form of a @pl.program function deferred at an unsupported construct (system.unsupported)
unsupported = DslConstruct("system.unsupported")

LOOP_KINDS = {"range": "Sequential", "parallel": "Parallel", "unroll": "Unroll", "pipeline": "Pipeline"}
