"""A matmul whose operand blocks do not fit L0A / L0B, whose result does fit L0C, runs as a chain over K.

AutoTileMatmulL0 tiles a matmul whose result is stored once (or a peeled K loop carrying one accumulator
into a store). Any other ``c = tile.matmul(A, B)`` or ``c = tile.matmul_acc(acc, A, B)`` of two Mat loads
-- two accumulators carried by one K loop, a result cast and scaled before its store -- keeps its
``[M, N]`` result, which fits L0C, and is split along K only: ``[M, k] @ [k, N]`` blocks loaded window by
window from the same tensors, the first a ``tile.matmul`` (or a ``tile.matmul_acc`` onto ``acc``), the rest
``tile.matmul_acc`` onto it. ``k`` is the largest extent that divides K, is whole NZ boxes, and whose
blocks fit half of L0A and L0B (double-buffered). Integer results are exact; float sums add the K
blocks in order, as the cube does within one block.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstInt, Expr, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.ir.types import TileType
from pypto.passes._matmul_operand import MatmulOperand, matmul_operand
from pypto.passes._rewrite import assign_of, assigns_of, drop_defs, shaped
from pypto.passes._util import base_name, map_blocks, var_use_counts


def _split(s: Stmt, loads: dict[Var, Call], pick_k: Callable[[int, int, int, int, int], int | None]) -> list[Stmt] | None:
    found = assign_of(s, ("tile.matmul", "tile.matmul_acc"))
    if found is None or found[1].kwargs.get("init_cond") is not None:
        return None
    c, mm = found
    acc = mm.op == "tile.matmul_acc"
    a, b = (matmul_operand(x, loads) for x in mm.args[acc:acc + 2])
    if a is None or b is None or not isinstance(c.var_type, TileType):
        return None
    (m, k_dim), n = a.shape, b.shape[1]
    k = pick_k(m, n, k_dim, shaped(a.load).dtype.nbytes, shaped(b.load).dtype.nbytes)
    if k is None or k == k_dim:
        return None
    return _chain(c, mm, a, b, k, s)


def _chain(c: Var, mm: Call, a: MatmulOperand, b: MatmulOperand, k: int, s: Stmt) -> list[Stmt]:
    sp, out = s.span, []
    (m, k_dim), n = a.shape, b.shape[1]
    prev: Expr | None = mm.args[0] if mm.op == "tile.matmul_acc" else None
    name = base_name(c.name)
    for k0 in range(0, k_dim, k):
        zero, at = ConstInt(0, span=sp), ConstInt(k0, span=sp)
        sa, wa = a.window(zero, at, (m, k), f"{name}_a{k0}", sp)
        sb, wb = b.window(at, zero, (k, n), f"{name}_b{k0}", sp)
        out += [*sa, *sb]
        call = make_call("tile.matmul", [wa, wb], dict(mm.kwargs), span=sp) if prev is None \
            else make_call("tile.matmul_acc", [prev, wa, wb], span=sp)
        last = k0 + k >= k_dim
        var = c if last else Var(f"{name}_k{k0}", call.type, span=c.span)
        out.append(AssignStmt(var, call, span=sp))
        prev = var
    return out


def split_matmuls_k(func: Function, caps: dict[MemorySpace, int], only: set[int] | None = None) -> Function:
    """``func`` with every matmul of two Mat loads that only L0A / L0B are too small for chained over K
    (with ``only``: of the statements whose ids it holds)."""
    loads = {**assigns_of(func.body, "tile.load"), **assigns_of(func.body, "tile.transpose_view")}
    left, right, accum = caps[MemorySpace.Left] // 2, caps[MemorySpace.Right] // 2, caps[MemorySpace.Acc]

    def pick_k(m: int, n: int, k_dim: int, ba: int, bb: int) -> int | None:
        if m * k_dim * ba <= left and k_dim * n * bb <= right:
            return None  # fits whole
        if m * n * 4 > accum:
            return None  # the result is too big for L0C: left to the tiling rewrites' error
        box = max(16, 32 // min(ba, bb))
        return next((k for k in reversed(range(box, k_dim, box))
                     if k_dim % k == 0 and m * k * ba <= left and k * n * bb <= right), None)

    operands: set[Var] = set()

    def block(stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            new = _split(s, loads, pick_k) if only is None or id(s) in only else None
            out.extend([s] if new is None else new)
            if new is not None:
                mm = assign_of(s)
                operands.update(x for x in mm[1].args if isinstance(x, Var))  # type: ignore[index]
        return out

    body = map_blocks(func.body, block)
    if body is func.body:
        return func
    for _ in range(2):  # a transpose view, then the load under it
        uses = var_use_counts(body)
        dead = [v for v in operands if v in loads and uses[v] <= 1]
        body = drop_defs(body, dead)
        operands |= {x for v in dead for x in loads[v].args[:1] if isinstance(x, Var) and x in loads}
    return dataclasses.replace(func, body=body)
