"""``tile.random`` as integer tile ops: ptoas 0.1.1 has no ``pto.trandom``.

The A5 ``TRANDOM`` instruction runs Philox-4x32 (multipliers 0xD2511F53 / 0xCD9E8D57, key bumps
0x9E3779B9 / 0xBB67AE85, 7 or 10 rounds) on 64 lanes. Lane ``l`` starts at ``counter + l`` (a 128-bit
add); for every row and every block of 256 valid columns the lanes' counters advance by ``cols / 4``,
and the four output words go to four consecutive 64-column runs of that block. So element ``(r, c)``
is word ``(c >> 6) & 3`` of Philox at counter
``counter + (c & 63) + (r * ceil(valid_cols / 256) + (c >> 8)) * cols / 4``.

This module computes exactly that on INT32 tiles: a 32x32 -> 64 bit product from 16-bit halves
(``tile.mul`` keeps the low 32 bits; logical shifts are an arithmetic shift and a mask), 128-bit adds
with carries from the usual ``(a & b) | ((a | b) & ~sum)`` sign bit, and the word picked by 0/1 factors.
A UINT32 result is the INT32 tile reinterpreted; a narrower ``valid_shape`` is set on the result.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Call, ConstInt, Expr, Var, as_int
from pypto.ir.function import Function
from pypto.ir.ops.random_ops import valid_dims
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.passes._rewrite import elements, ints, rewrite_blocks
from pypto.passes._util import base_name
from pypto.span import Span

MUL = (0xD2511F53, 0xCD9E8D57)
BUMP = (0x9E3779B9, 0xBB67AE85)
LANES = 64  # 32-bit lanes of one A5 vector register
WORDS = 4
LIVE_TILES = 15  # tiles of the result's size live at once at the peak of the sequence below
MAX_VEC = 248 * 1024  # the larger Vec buffer of the two targets (a5; a2a3 has 192 KiB)


def expand_randoms(func: Function) -> Function:
    body = rewrite_blocks(func.body, {"tile.random": _expand})
    return func if body is func.body else func.with_(body=body)


def _s32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


class _Ops:
    """Emits ``<name>__rnd<n> = op(...)`` statements on INT32 tiles of one shape."""

    def __init__(self, name: str, shape: tuple[int, int], span: Span) -> None:
        self.name, self.shape, self.span = name, shape, span
        self.stmts: list[Stmt] = []
        self._fulls: dict[Any, Var] = {}

    def op(self, op: str, *args: Expr | int, **kw: Any) -> Var:
        exprs = [ConstInt(a, span=self.span) if isinstance(a, int) else a for a in args]
        call = make_call(op, exprs, kw, span=self.span)
        var = Var(f"{self.name}__rnd{len(self.stmts)}", call.result_type, span=self.span)
        self.stmts.append(AssignStmt(var, call, span=self.span))
        return var

    def full(self, value: Expr | int, keep: bool = False) -> Var:
        """A tile of ``value`` (an int32 constant or a scalar seed); ``keep``: made once and reused (the
        constants of every round), else made at its use so it does not stay live across the rounds."""
        if not keep:
            return self.op("tile.full", ints(self.shape, self.span), value, dtype=DataType.INT32)
        key = value if isinstance(value, int) else id(value)
        if key not in self._fulls:
            self._fulls[key] = self.full(value)
        return self._fulls[key]

    def bits(self, x: Var, mask: int, keep: bool = False) -> Var:
        return self.op("tile.and_", x, self.full(_s32(mask), keep))

    def srl(self, x: Var, k: int, keep: bool = False) -> Var:
        """Logical shift right by a constant: the arithmetic shift, then the sign copies masked off."""
        return self.bits(self.op("tile.shr", x, self.full(k, keep)), (1 << (32 - k)) - 1, keep)

    def add_carry(self, a: Var, b: Var) -> tuple[Var, Var]:
        """``a + b`` modulo 2**32 and its carry out (0 or 1)."""
        total = self.op("tile.add", a, b)
        either = self.op("tile.and_", self.op("tile.or_", a, b), self.op("tile.not_", total))
        return total, self.srl(self.op("tile.or_", self.op("tile.and_", a, b), either), 31)

    def mulhilo(self, a: Var, m: int) -> tuple[Var, Var]:
        """The high and low 32 bits of ``a * m`` (both unsigned), from the 16-bit halves of ``a``; each
        partial product is consumed as soon as it is made, so few tiles are live at once."""
        lo = self.op("tile.muls", a, _s32(m))
        al, ah = self.bits(a, 0xFFFF, True), self.srl(a, 16, True)
        mid = self.srl(self.op("tile.muls", al, m & 0xFFFF), 16, True)
        part = self.op("tile.muls", al, m >> 16)
        mid = self.op("tile.add", mid, self.bits(part, 0xFFFF, True))
        hi = self.srl(part, 16, True)
        part = self.op("tile.muls", ah, m & 0xFFFF)
        mid = self.op("tile.add", mid, self.bits(part, 0xFFFF, True))
        hi = self.op("tile.add", hi, self.srl(part, 16, True))
        hi = self.op("tile.add", hi, self.op("tile.muls", ah, m >> 16))
        return self.op("tile.add", hi, self.srl(mid, 16, True)), lo

    def pick(self, bit: Var, if0: Var, if1: Var) -> Var:
        """``if1`` where ``bit`` is 1, ``if0`` where it is 0 (exact modulo 2**32)."""
        return self.op("tile.add", if0, self.op("tile.mul", bit, self.op("tile.sub", if1, if0)))


def _expand(s: Stmt, call: Call) -> list[Stmt]:
    rows, cols = (as_int(d) for d in elements(call.args[6]))
    valid = valid_dims(call.kwargs.get("valid_shape")) or (rows, cols)
    if cols % 8:
        raise UnsupportedFeatureError(
            f"pl.tile.random into a [{rows}, {cols}] tile: TRANDOM's element order assumes 32-byte rows, and "
            f"{cols} 32-bit columns are not a whole number of them", call.span,
            hint="round the tile's columns up to a multiple of 8 and narrow it with valid_shape=[rows, cols]")
    if LIVE_TILES * rows * cols * 4 > MAX_VEC:
        step = f"{-(-valid[1] // (WORDS * LANES))} * {cols // 4}"
        raise UnsupportedFeatureError(
            f"pl.tile.random into a [{rows}, {cols}] tile: ptoas 0.1.1 has no pto.trandom, and pypto's lowering "
            f"into integer tile ops keeps {LIVE_TILES} tiles of this size live, more than the {MAX_VEC // 1024} KiB "
            "Vec buffer holds", call.span,
            hint=f"generate it in blocks of rows: rows r0.. of the same key come from counter0 + r0 * {step} "
                 "(carrying into counter1..3)")
    name = base_name(s.var.name) if isinstance(s, AssignStmt) else "random"
    em = _Ops(name, (rows, cols), call.span)
    out = _generate(em, call, cols, valid[1])
    if call.kwargs.get("dtype", DataType.UINT32) is DataType.UINT32:
        out = em.op("tile.reinterpret_view", out, dtype=DataType.UINT32)
    if valid != (rows, cols):
        out = em.op("tile.set_validshape", out, valid[0], valid[1])
    last = em.stmts.pop()
    assert isinstance(last, AssignStmt)
    var = s.var if isinstance(s, AssignStmt) else last.var
    return [*em.stmts, AssignStmt(var, last.value, span=s.span)]


def _generate(em: _Ops, call: Call, cols: int, valid_cols: int) -> Var:
    rows = em.shape[0]
    blocks = -(-valid_cols // (WORDS * LANES))
    idx = em.op("tile.reshape", em.op("tile.ci", 0, ints((1, rows * cols), em.span), dtype=DataType.INT32),
                ints((rows, cols), em.span))
    if cols & (cols - 1) == 0:
        col = em.bits(idx, cols - 1)
    else:
        row = em.op("tile.ci", 0, ints((1, cols), em.span), dtype=DataType.INT32)
        col = em.op("tile.col_expand", em.full(0), row)
    row_start = em.op("tile.shr", em.op("tile.sub", idx, col), em.full(2))  # r * cols / 4
    step = em.op("tile.add", em.op("tile.muls", row_start, blocks), em.op("tile.muls", em.srl(col, 8), cols // 4))
    offset = em.op("tile.add", em.bits(col, LANES - 1), step)
    seeds = [a if as_int(a) is None else _s32(as_int(a)) for a in call.args[:6]]  # type: ignore[arg-type]
    key = [em.full(k) for k in seeds[:2]]
    word = em.srl(col, 6)  # which of the four words: bits 6 and 7 of the column
    ctr, carry = [], offset
    for seed in seeds[2:]:
        total, carry = em.add_carry(em.full(seed), carry)
        ctr.append(total)
    for _ in range(int(call.kwargs.get("rounds", 10))):
        hi0, lo0 = em.mulhilo(ctr[0], MUL[0])
        hi1, lo1 = em.mulhilo(ctr[2], MUL[1])
        ctr = [em.op("tile.xor", em.op("tile.xor", hi1, ctr[1]), key[0]), lo1,
               em.op("tile.xor", em.op("tile.xor", hi0, ctr[3]), key[1]), lo0]
        key = [em.op("tile.adds", k, _s32(b)) for k, b in zip(key, BUMP, strict=True)]
    low, high = em.bits(word, 1), em.bits(em.srl(word, 1), 1)
    return em.pick(high, em.pick(low, ctr[0], ctr[1]), em.pick(low, ctr[2], ctr[3]))
