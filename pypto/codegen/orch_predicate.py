"""``pl.submit(..., predicate=cond)``: the task is dispatched only when ``cond`` holds.

The orchestration evaluates ``cond`` at the dispatch point. When it holds the kernel task is submitted as
usual; otherwise a dependency-only task (``rt_submit_dummy_task``) with the same ``deps`` stands in for
it, so the task id exists either way and a consumer that waits on it is released once the deps are.
The kernel's output tensors keep what they held before (a skipped task writes nothing).
"""

from __future__ import annotations

from typing import Any, Protocol

from pypto.codegen.emitter import Emitter
from pypto.ir.expr import Call


class OrchCodegen(Protocol):
    """What the predicate needs of the orchestration emitter."""

    em: Emitter

    def expr(self, e: Any) -> str: ...

    def deps(self, c: Call, k: int) -> None: ...


def open_predicate(cg: OrchCodegen, c: Call, k: int) -> bool:
    """Start ``if (cond) {`` around task ``k``'s submission; False when the call has no predicate."""
    cond = c.attrs.get("predicate")
    if cond is None:
        return False
    cg.em.line(f"TaskOutputTensors task_{k}_outs;")
    cg.em.line(f"if ({cg.expr(cond)}) {{")
    cg.em.push()
    return True


def close_predicate(cg: OrchCodegen, c: Call, k: int) -> None:
    """``} else {`` a dependency-only task that stands in for the skipped one ``}``."""
    cg.em.pop()
    cg.em.line("} else {")
    cg.em.push()
    cg.em.line(f"CoreTaskArgs params_t{k};")
    cg.deps(c, k)
    cg.em.line(f"task_{k}_outs.id = rt_submit_dummy_task(params_t{k});")
    cg.em.pop()
    cg.em.line("}")
