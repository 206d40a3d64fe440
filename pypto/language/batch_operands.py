"""``pl.batch_matmul(a, b)`` on tiles: how many matrices each operand stacks.

Tiles are 2-D here (an N-D load is flattened as it is made: ``[B, M, K]`` is ``[B * M, K]``), so the
batch of an operand is read off the ``pl.load`` that made it, and a ``pl.tile.transpose_view`` of such
a load becomes the op's ``a_trans``/``b_trans`` flag on the load itself (each matrix is transposed,
not the stack). FlattenTileNdTo2D then issues one ``tile.matmul`` per matrix.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.expr import Call, Expr, MakeTuple, Var, as_int


def _load_count(value: Expr | None) -> int:
    """How many matrices a ``tile.load`` with N-D ``shapes`` stacks (1 for anything else)."""
    if not isinstance(value, Call) or value.op != "tile.load" or not isinstance(value.args[2], MakeTuple):
        return 1
    count = 1
    for d in value.args[2].elements[:-2]:
        n = as_int(d)
        if n is None:
            return 1
        count *= n
    return count


def _operand(defs: dict[Var, Expr], arg: Any) -> tuple[Any, int, bool]:
    """``(operand, batch, transposed)``: a transposed view of a batched load is the load, transposed."""
    trans, v = False, arg
    while isinstance(v, Var) and isinstance(defs.get(v), Call) and defs[v].op == "tile.transpose_view":
        trans, v = not trans, defs[v].args[0]
    count = _load_count(defs.get(v)) if isinstance(v, Var) else 1
    return (v, count, trans) if count > 1 else (arg, 1, False)


def batch_kwargs(defs: dict[Var, Expr], args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The operands and kwargs of ``tile.batch_matmul(lhs, rhs)`` with each operand's batch filled in."""
    if len(args) != 2:
        return args, kwargs
    (lhs, na, ta), (rhs, nb, tb) = _operand(defs, args[0]), _operand(defs, args[1])
    out = dict(kwargs)
    out.setdefault("lhs_batch", na)
    out.setdefault("rhs_batch", nb)
    out["a_trans"] = bool(out.get("a_trans")) != ta
    out["b_trans"] = bool(out.get("b_trans")) != tb
    return [lhs, rhs], out
