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
from pypto.passes._matmul_operand import MatmulOperand, matmul_of_loads, operand_blocks, operand_defs
from pypto.passes._rewrite import call_in, drop_defs, expand_stmts, shaped
from pypto.passes._util import base_name, var_use_counts


def _split(s: Stmt, loads: dict[Var, Call], pick_k: Callable[[int, int, int, int, int], int | None]) -> list[Stmt] | None:
    found = matmul_of_loads(s, loads)
    if found is None:
        return None
    c, mm, a, b = found
    (m, k_dim), n = a.shape, b.shape[1]
    k = pick_k(m, n, k_dim, shaped(a.load).dtype.nbytes, shaped(b.load).dtype.nbytes)
    if k is None or k == k_dim:
        return None
    return _chain(c, mm, a, b, k, s)


def _chain(c: Var, mm: Call, a: MatmulOperand, b: MatmulOperand, k: int, s: Stmt) -> list[Stmt]:
    sp, out = s.span, []
    (m, k_dim), n = a.shape, b.shape[1]
    prev: Expr | None = mm.args[0] if mm.op == "tile.matmul_acc" else None
    init = list(mm.args[3:])  # matmul_acc's init_cond: the first block overwrites where it holds
    name = base_name(c.name)
    for k0 in range(0, k_dim, k):
        zero, at = ConstInt(0, span=sp), ConstInt(k0, span=sp)
        blocks, wa, wb = operand_blocks(a, b, (zero, zero, at), (m, n, k), (f"{name}_a{k0}", f"{name}_b{k0}"), sp)
        out += blocks
        call = make_call("tile.matmul", [wa, wb], dict(mm.kwargs), span=sp) if prev is None \
            else make_call("tile.matmul_acc", [prev, wa, wb, *init], span=sp)
        var = c if k0 + k >= k_dim else Var(f"{name}_k{k0}", call.type, span=c.span)
        out.append(AssignStmt(var, call, span=sp))
        prev, init = var, []
    return out


def split_matmuls_k(func: Function, caps: dict[MemorySpace, int], only: set[int] | None = None) -> Function:
    """``func`` with every matmul of two Mat loads that only L0A / L0B are too small for chained over K
    (with ``only``: of the statements whose ids it holds)."""
    loads = operand_defs(func.body)
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

    def one(s: Stmt) -> list[Stmt] | None:
        new = _split(s, loads, pick_k) if only is None or id(s) in only else None
        if new is not None:
            operands.update(x for x in call_in(s).args if isinstance(x, Var))
        return new

    body = expand_stmts(func.body, one)
    if body is func.body:
        return func
    for _ in range(2):  # a transpose view, then the load under it
        uses = var_use_counts(body)
        dead = [v for v in operands if v in loads and uses[v] <= 1]
        body = drop_defs(body, dead)
        operands |= {x for v in dead for x in loads[v].args[:1] if isinstance(x, Var) and x in loads}
    return dataclasses.replace(func, body=body)
