"""Integer scalars bound once to a constant at a function's top level are that constant everywhere.

``M, N = a.shape`` (or ``M = 16``, or ``M = pl.tensor.dim(a, 0)`` of a static extent) gives scalar Vars, and ``pl.load(a, [0, 0], [M, N])`` a tile typed
``[M, N]``: a kernel needs the static ``[16, 32]``. As upstream's Simplify binds a constant scalar
assigned at function-body top level (not inside a loop or branch) and substitutes it into later
expressions and types, every use of such a Var becomes the constant, the op calls that used it are
re-typed, and so are the Vars they define (in turn, until nothing changes). Runs before memory planning
only (a re-derived type carries no MemRef).
"""

from __future__ import annotations

from collections import Counter

from pypto.ir.expr import Call, ConstInt, Expr, Var, as_int
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, ScopeStmt, Stmt, flatten
from pypto.ir.types import ScalarType, ShapedType
from pypto.passes._util import iter_stmts, retype, substitute_typed


def _top_level_constants(body: Stmt) -> dict[Var, Expr]:
    out: dict[Var, Expr] = {}
    for s in flatten(body):
        if isinstance(s, ScopeStmt):
            out.update(_top_level_constants(s.body))
        elif isinstance(s, AssignStmt) and isinstance(t := s.var.var_type, ScalarType):
            if isinstance(s.value, ConstInt) and type(s.var) is Var and t.dtype.is_int:
                out[s.var] = ConstInt(s.value.value, t.dtype, span=s.value.span)
            elif (n := _static_dim(s.value)) is not None:
                out[s.var] = ConstInt(n, t.dtype, span=s.value.span)
    return out


def _static_dim(e: Expr) -> int | None:
    """The extent ``tensor.dim(t, k)`` reads when ``t``'s type gives it as a constant."""
    if not (isinstance(e, Call) and e.op == "tensor.dim" and len(e.args) == 2):
        return None
    shape, axis = getattr(e.args[0].type, "shape", None), as_int(e.args[1])
    if shape is None or axis is None or not -len(shape) <= axis < len(shape):
        return None
    n = shape[axis]
    return n if isinstance(n, int) else None


def _planned(func: Function) -> bool:
    types = [p.type for p in func.params] + [s.var.var_type for s in iter_stmts(func.body) if isinstance(s, AssignStmt)]
    return any(getattr(t, "memref", None) is not None for t in types)


def _symbolic(t: object) -> bool:
    return isinstance(t, ShapedType) and t.static_shape() is None


def propagate_constants(func: Function) -> Function:
    """``func`` with its top-level constant integer scalars substituted into later uses and types."""
    found = _top_level_constants(func.body)
    if not found or _planned(func):
        return func
    defs = Counter(s.var for s in iter_stmts(func.body) if isinstance(s, AssignStmt))
    consts = {v: c for v, c in found.items() if defs[v] == 1}
    body = substitute_typed(func.body, consts, keep_defs=True)  # the body itself when there are none
    if body is func.body:
        return func
    func = func.with_(body=body)
    for _ in range(64):  # each round re-types the Vars whose calls were re-typed by the last one
        stale = {s.var: s.value.result_type for s in iter_stmts(func.body)
                 if isinstance(s, AssignStmt) and isinstance(s.value, Call) and _symbolic(s.var.var_type)
                 and s.value.result_type != s.var.var_type and isinstance(s.value.result_type, ShapedType)}
        if not stale:
            break
        func = retype(func, stale)
    return func
