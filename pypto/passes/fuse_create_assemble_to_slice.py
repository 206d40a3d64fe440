"""FuseCreateAssembleToSlice: an orchestration tensor that is created, filled by kernels and then
assembled once into a window of another tensor becomes that window.

``row = pl.create_tensor([1, N]); ... kernels write row ...; out = pl.assemble(out, row, [b, 0])``:
the create becomes ``row = tensor.slice(out, [1, N], [b, 0])`` (a view, no buffer of its own) and the
assemble becomes ``out = out``, so the kernels store straight into ``out`` (the orchestration has no
copy instruction; an assemble there would be a located error). Applied when the tensor (by buffer
root) is assembled exactly once, without ``atomic=``, with the same dtype, at offsets and into a
target that are already defined where the tensor is created, and when the window is one contiguous
run of a dense target (kernels address their tensor parameters as packed). A created tensor of lower rank than the
target is padded with leading 1s (``[4, 16]`` into ``[2, 4, 16]`` at ``[b, 0, 0]`` is the window
``[1, 4, 16]``) and viewed at its own shape with ``tensor.reshape``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.ir.expr import Call, Expr, MakeTuple, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt
from pypto.ir.types import TensorType
from pypto.passes._buffer_roots import collect_buffer_roots
from pypto.passes._rewrite import assign_of, ints, match
from pypto.passes._util import iter_stmts, map_blocks, used_vars
from pypto.passes.base import Pass


def _contiguous(window: TensorType, target: TensorType) -> bool:
    """Is a ``window``-shaped window of the dense ``target`` one run of its elements?"""
    if target.view is not None and getattr(target.view, "stride", None) is not None:
        return False
    part, full = [as_int(d) for d in window.shape], [as_int(d) for d in target.shape]
    if None in part or None in full or len(part) != len(full):
        return False
    k = next((i for i in range(len(part)) if part[i] != 1), len(part))
    return all(part[j] == full[j] for j in range(k + 1, len(part)))


def _visible_before(body: Stmt, params: list[Var]) -> dict[Stmt, set[Var]]:
    """For each statement: the Vars defined before it in it or an enclosing block (or enclosing loops)."""
    seen: dict[Stmt, set[Var]] = {}

    def walk(s: Stmt, visible: set[Var]) -> None:
        stmts = list(s.stmts) if isinstance(s, SeqStmts) else [s]
        for st in stmts:
            seen[st] = set(visible)
            if isinstance(st, ForStmt):
                inner = visible | {st.loop_var, *st.iter_args}
                walk(st.body, inner)
            elif isinstance(st, WhileStmt):
                walk(st.body, visible | set(st.iter_args))
            elif isinstance(st, IfStmt):
                walk(st.then_body, visible)
                if st.else_body is not None:
                    walk(st.else_body, visible)
            elif isinstance(st, ScopeStmt):
                walk(st.body, visible)
            if isinstance(st, AssignStmt):
                visible.add(st.var)
            visible.update(getattr(st, "return_vars", ()) or ())

    walk(body, set(params))
    return seen


@dataclass(frozen=True)
class FuseCreateAssembleToSlice(Pass):
    """A created tensor assembled once into a window of another becomes a view of that window."""

    name = "FuseCreateAssembleToSlice"

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_orchestration:
            return func
        creates = {s.var: s for s in iter_stmts(func.body) if assign_of(s, "tensor.create") is not None}
        if not creates:
            return func
        roots = collect_buffer_roots(func, program)
        assembles: dict[Var, list[AssignStmt]] = {}
        for s in iter_stmts(func.body):
            c = match(s, "tensor.assemble") if isinstance(s, AssignStmt) else None
            root = roots.root(c.args[1]) if c is not None and len(c.args) == 3 else None
            if root in creates:
                assembles.setdefault(root, []).append(s)  # type: ignore[arg-type]
        visible = _visible_before(func.body, list(func.params))
        fused: dict[Stmt, list[Stmt]] = {}
        for var, found in assembles.items():
            if len(found) == 1 and not roots.is_ambiguous(found[0].value.args[1]):
                fused.update(_fuse(creates[var], found[0], visible[creates[var]]))
        if not fused:
            return func
        body = map_blocks(func.body, lambda stmts: [n for s in stmts for n in fused.get(s, [s])])
        return func.with_(body=body)


def _padded(w: TensorType, t: TensorType) -> TensorType | None:
    """``w`` at ``t``'s rank, leading 1s added (None when ``w`` has the higher rank)."""
    pad = len(t.shape) - len(w.shape)
    return None if pad < 0 else w if pad == 0 else dataclasses.replace(w, shape=(1,) * pad + tuple(w.shape))


def _fuse(create: AssignStmt, assemble: AssignStmt, visible: set[Var]) -> dict[Stmt, list[Stmt]]:
    call = assemble.value
    assert isinstance(call, Call)
    target, _src, offsets = call.args
    t, w = getattr(target, "type", None), create.var.type
    if call.kwargs.get("atomic") not in (None, 0) or not isinstance(offsets, MakeTuple) \
            or not isinstance(target, Var) or not isinstance(t, TensorType) or not isinstance(w, TensorType) \
            or t.dtype != w.dtype:
        return {}
    wide = _padded(w, t)
    if wide is None or len(offsets.elements) != len(t.shape) or not _contiguous(wide, t):
        return {}
    if any(v not in visible for v in used_vars(offsets) + [target]):
        return {}
    sp = create.span
    view = make_call("tensor.slice", [target, ints(wide.shape, sp), offsets], span=sp)
    alias: Expr = target
    done = [dataclasses.replace(assemble, value=alias)]
    if wide is w:
        return {create: [dataclasses.replace(create, value=view)], assemble: done}
    window = Var(f"{create.var.name}_window", view.type, span=sp)
    flat = make_call("tensor.reshape", [window, ints(w.shape, sp)], span=sp)
    return {create: [AssignStmt(window, view, span=sp), dataclasses.replace(create, value=flat)], assemble: done}
