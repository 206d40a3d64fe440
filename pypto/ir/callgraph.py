"""Call-graph order of a program's functions (callees before callers), used by the printer,
the passes that add or inline functions, the DSL's ``@pl.program`` and the jit; and which arguments
a call writes."""

from __future__ import annotations

from pypto.ir.census import census
from pypto.ir.enums import ParamDirection
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import written_index


def written_args(call: Call, program: Program) -> tuple[int, ...]:
    """Indices of the arguments ``call`` writes: an op's ``writes`` operand, a callee's Out/InOut params."""
    if isinstance(call.op, GlobalVar):
        callee = program.get_function(call.op.name)
        dirs = callee.param_directions[:len(call.args)] if callee is not None else ()
        return tuple(i for i, d in enumerate(dirs) if d is not ParamDirection.In)
    index = written_index(call)
    return () if index is None else (index,)


def _callees(f: Function, names: dict[str, Function]) -> set[str]:
    return {n for n in census(f).callees if n in names and n != f.name}


def callee_first(funcs: list[Function] | tuple[Function, ...]) -> list[Function]:
    """Functions ordered callees before callers, ties broken by name (the printed order)."""
    by_name = {f.name: f for f in funcs}
    deps = {f.name: _callees(f, by_name) for f in funcs}
    out: list[Function] = []
    done: set[str] = set()
    while len(out) < len(funcs):
        ready = sorted(n for n in by_name if n not in done and deps[n] <= done)
        if not ready:
            ready = sorted(n for n in by_name if n not in done)[:1]
        done.add(ready[0])
        out.append(by_name[ready[0]])
    return out

