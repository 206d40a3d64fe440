"""An elementwise op of a column concat in a kernel becomes the concat of the op on each half.

ptoas 0.1.1 has no ``tconcat`` or ``tinsert``: a ``tile.concat`` result is kept as blocks that are only
written out when stored (:mod:`pypto.codegen.pto_views`), so it cannot be an operand. When the one use of
``c = pl.concat(a, b)`` is a cast, a unary op or an op with a scalar (``y = pl.cast(c, pl.BF16)``), the
op runs on each half instead (``y = pl.concat(pl.cast(a, ...), pl.cast(b, ...))``): the same elements,
and ``y`` can again be stored block by block.
"""

from __future__ import annotations

from pypto.ir.expr import Call, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import make_call, op_of
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.ir.types import TensorType, TileType
from pypto.passes._rewrite import emit, match
from pypto.passes._util import base_name, map_blocks, var_use_counts

_ELEMENTWISE = ("cast", "unary", "scalar")  # OpDef categories: one tensor operand, the result of its shape


def _sinkable(v: Call | None, concats: dict[Var, Call]) -> bool:
    op = op_of(v)
    if v is None or op is None or op.category not in _ELEMENTWISE or not v.args or v.args[0] not in concats:
        return False
    return not any(isinstance(getattr(a, "type", None), TensorType | TileType) for a in v.args[1:])


def sink_concats(func: Function) -> Function:
    """``func`` with every elementwise op whose operand is a concat used once done on the halves."""
    counts = var_use_counts(func.body)

    def block(stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        concats: dict[Var, Call] = {}
        at: dict[Var, int] = {}  # a concat's statement in ``out``
        dead: set[int] = set()
        for s in stmts:
            v = match(s) if isinstance(s, AssignStmt) else None
            if isinstance(s, AssignStmt) and _sinkable(v, concats) and counts[src := v.args[0]] == 2:
                halves = [emit(out, f"{base_name(s.var.name)}_{i}",
                               make_call(v.op, [h, *v.args[1:]], v.kwargs, span=v.span), v.span)
                          for i, h in enumerate(concats[src].args)]
                s = AssignStmt(s.var, make_call(f"{v.op.split('.')[0]}.concat", halves, span=v.span),
                               span=s.span)
                v = s.value
                dead.add(at[src])
            if isinstance(s, AssignStmt) and isinstance(v, Call) and v.op in ("tensor.concat", "tile.concat"):
                concats[s.var], at[s.var] = v, len(out)
            out.append(s)
        return [s for i, s in enumerate(out) if i not in dead] if dead else stmts

    body = map_blocks(func.body, block)
    return func if body is func.body else func.with_(body=body)
