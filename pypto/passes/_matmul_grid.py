"""The loop nests AutoTileMatmulL0 emits for a matmul cut into L0-sized ``[m, n]`` sub-tiles: each sub-tile's K
blocks (a first block, a K loop of ``matmul_acc`` steps, a peeled narrower last block), the grid of sub-tiles
stored to DDR, and a chain's row blocks."""

from __future__ import annotations

import dataclasses
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.enums import ForKind
from pypto.ir.expr import Call, ConstInt, Expr, IterArg, Var
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, SeqStmts, Stmt, YieldStmt
from pypto.ir.types import ScalarType
from pypto.passes._matmul_fit import Tiling, spans
from pypto.passes._matmul_operand import MatmulOperand, operand_blocks
from pypto.passes._rewrite import clone, emit, store_shifted
from pypto.passes._util import base_name
from pypto.span import Span

_INDEX = ScalarType(DataType.INDEX)
DOUBLE_BUFFER_C = "pipeline_double_buffer_c"  # upstream's loop attribute: two L0C accumulators in flight


def _stem(op: MatmulOperand) -> str:
    return base_name(getattr(op.tensor, "name", "x"))


def const_loop(var: Var, bounds: tuple[int, int, int], body: list[Stmt], span: Span, **kwargs: Any) -> ForStmt:
    """``for var in range(lo, hi, step)`` over ``body`` (``bounds`` constants; ``kwargs``: ForStmt fields)."""
    lo, hi, step = (ConstInt(x, span=span) for x in bounds)
    return ForStmt(var, lo, hi, step, SeqStmts(tuple(body), span=span), span=span, **kwargs)


def _axis(name: str, bounds: tuple[int, int, int], span: Span) -> Expr:
    """The index of a grid axis over ``[lo, hi)``: a loop variable, or ``lo`` itself for a single tile."""
    lo, hi, step = bounds
    return Var(name, _INDEX, span=span) if hi - lo > step else ConstInt(lo, span=span)


class Builder:
    """Emits the loop nest for one matmul."""

    def __init__(self, a: MatmulOperand, b: MatmulOperand, mm: Call, t: Tiling, span: Span,
                 bias: MatmulOperand | None = None) -> None:
        self.a, self.b, self.mm, self.t, self.span, self.bias = a, b, mm, t, span, bias

    def _first(self, va: Var, vb: Var, ni: Expr, n: int, stmts: list[Stmt]) -> Call:
        """The first K block's matmul; a ``matmul_bias`` adds its bias (the block's ``[1, n]`` window) here
        only, the K loop's ``matmul_acc`` steps do not."""
        if self.mm.op != "tile.matmul_bias":
            return make_call("tile.matmul", [va, vb], dict(self.mm.kwargs), span=self.span)
        bias: Expr = self.mm.args[2]
        if self.bias is not None:
            load, bias = self.bias.window(ConstInt(0, span=self.span), ni, (1, n), f"{_stem(self.bias)}_sub",
                                          self.span)
            stmts += load
        return make_call("tile.matmul_bias", [va, vb, bias], {}, span=self.span)

    def _block(self, mi: Expr, ni: Expr, ko: Expr, suffix: str, mnk: tuple[int, int, int]) -> tuple[list[Stmt], Var, Var]:
        names = (f"{_stem(self.a)}_{suffix}", f"{_stem(self.b)}_{suffix}")
        return operand_blocks(self.a, self.b, (mi, ni, ko), mnk, names, self.span)

    def _acc_step(self, acc: Var, mi: Expr, ni: Expr, ko: Expr, mnk: tuple[int, int, int],
                  suffix: str) -> tuple[list[Stmt], Var]:
        stmts, va, vb = self._block(mi, ni, ko, suffix, mnk)
        nxt = emit(stmts, acc.name, make_call("tile.matmul_acc", [acc, va, vb], {}, span=self.span), self.span)
        return stmts, nxt

    def sub_tile(self, mi: Expr, ni: Expr, name: str, m: int, n: int,
                 acc_in: Var | None = None) -> tuple[list[Stmt], Var]:
        """The ``[m, n]`` output block at ``(mi, ni)``: a first K block, a K loop of matmul_acc over the other
        full blocks, then a peeled narrower last block when ``k`` does not divide K. With ``acc_in`` the first
        block accumulates onto it too (a step of a loop-carried accumulation)."""
        sp, k = self.span, self.t.k
        k_dim = self.a.shape[1]
        full, tail = divmod(k_dim, k)
        stmts, va, vb = self._block(mi, ni, ConstInt(0, span=sp), "k0", (m, n, k))
        first = make_call("tile.matmul_acc", [acc_in, va, vb], {}, span=sp) if acc_in is not None \
            else self._first(va, vb, ni, n, stmts)
        acc = emit(stmts, name, first, sp)
        if full > 1:
            ko = Var("ko", _INDEX, span=sp)
            carry = IterArg(f"{name}_iter", acc.var_type, span=sp)
            body, nxt = self._acc_step(carry, mi, ni, ko, (m, n, k), "k")
            out = Var(name, acc.var_type, span=sp)
            stmts.append(const_loop(ko, (k, full * k, k), [*body, YieldStmt((nxt,), span=sp)], sp, iter_args=(carry,),
                                    return_vars=(out,), inits=(acc,)))
            acc = out
        if tail:
            body, acc = self._acc_step(acc, mi, ni, ConstInt(full * k, span=sp), (m, n, tail), "kt")
            stmts += body
        return stmts, acc

    def grid(self, store: Call) -> list[Stmt]:
        """Every ``[m, n]`` sub-tile stored to its window of the store's tensor: loops over the full tiles of M
        and N, and the partial last row / column of tiles peeled after them."""
        m_dim, n_dim = self.a.shape[0], self.b.shape[1]
        out: list[Stmt] = []
        for rows in spans(m_dim, self.t.m):
            for cols in spans(n_dim, self.t.n):
                out += self._region(store, rows, cols, self.t.double_buffer_c and not out)
        return out

    def _region(self, store: Call, rows: tuple[int, int, int], cols: tuple[int, int, int],
                double_buffer_c: bool = False) -> list[Stmt]:
        """The tiles of extent ``rows[2] x cols[2]`` over ``[rows[0], rows[1]) x [cols[0], cols[1])``; with
        ``double_buffer_c`` (the full tiles only: the peeled tails stay one accumulator) the inner loop is
        ``pl.pipeline(..., stage=2)`` marked ``pipeline_double_buffer_c``."""
        sp = self.span
        mi, ni = _axis("mi", rows, sp), _axis("ni", cols, sp)
        body, acc = self.sub_tile(mi, ni, f"{base_name(getattr(store.args[0], 'name', 'c'))}_sub", rows[2], cols[2])
        body.append(store_shifted(acc, store, mi, ni, sp))
        for var, bounds in ((ni, cols), (mi, rows)):
            if isinstance(var, Var):
                kind, attrs = (ForKind.Pipeline, {"pipeline_stages": 2, DOUBLE_BUFFER_C: True}) if double_buffer_c \
                    else (ForKind.Sequential, {})
                body = [const_loop(var, bounds, body, sp, kind=kind, attrs=attrs)]
                double_buffer_c = False
        return body

    def rows(self, cast: tuple[Var, Call], second: tuple[Var, Call], store: Call) -> list[Stmt]:
        """Per row block: its rows of ``c`` (full-K or split-K), their cast, times ``E``, stored; a loop over
        the full blocks of ``m`` rows, then a peeled last block when ``m`` does not divide M."""
        sp, out = self.span, []
        for bounds in spans(self.a.shape[0], self.t.m):
            mi = _axis("mi", bounds, sp)
            body = self._row_block(mi, bounds[2], cast, second, store)
            out += [const_loop(mi, bounds, body, sp)] if isinstance(mi, Var) else body
        return out

    def _row_block(self, mi: Expr, m: int, cast: tuple[Var, Call], second: tuple[Var, Call],
                   store: Call) -> list[Stmt]:
        sp = self.span
        body, acc = self.sub_tile(mi, ConstInt(0, span=sp), f"{base_name(cast[0].name)}_acc", m, self.t.n)
        cc = make_call("tile.cast", [acc, *cast[1].args[1:]], dict(cast[1].kwargs), span=sp)
        # the cast is a vector op (its result reaches the cube through GM): InferTileMemorySpace places it, not
        # the accumulator's space a tile-level program's cast inherits
        cb = Var(base_name(cast[0].name), dataclasses.replace(cc.result_type, memory_space=None, view=None), span=sp)
        dc = make_call("tile.matmul", [cb, *second[1].args[1:]], dict(second[1].kwargs), span=sp)
        d = Var(base_name(second[0].name), dc.result_type, span=sp)
        body += [AssignStmt(cb, cc, span=sp), AssignStmt(d, dc, span=sp)]
        body.append(store_shifted(d, store, mi, ConstInt(0, span=sp), sp))
        return body


class CarriedBuilder(Builder):
    """The grid of a loop-carried accumulation ``c = matmul(A0, B0); for ...: c = matmul_acc(c, A, B)`` whose
    result is stored once: each ``[m, n]`` sub-tile runs the first matmul on its window of ``A0 @ B0``, then
    its own copy of the loop, each step the same window of ``A @ B`` accumulated onto the sub-tile's carry.
    ``keep`` are the loop body's other statements (the step's offsets), copied into each copy."""

    def __init__(self, first: tuple[MatmulOperand, MatmulOperand], step: tuple[MatmulOperand, MatmulOperand],
                 mm: Call, t: Tiling, span: Span, loop: ForStmt, keep: list[Stmt]) -> None:
        super().__init__(*first, mm, t, span)
        self.step, self.loop, self.keep = Builder(*step, mm, t, span), loop, keep

    def sub_tile(self, mi: Expr, ni: Expr, name: str, m: int, n: int,
                 acc_in: Var | None = None) -> tuple[list[Stmt], Var]:
        sp = self.span
        stmts, acc = super().sub_tile(mi, ni, name, m, n, acc_in)
        carry = IterArg(f"{name}_iter", acc.var_type, span=sp)
        body, nxt = self.step.sub_tile(mi, ni, name, m, n, acc_in=carry)
        loop = dataclasses.replace(self.loop, body=SeqStmts((*self.keep, *body, YieldStmt((nxt,), span=sp)), span=sp),
                                   iter_args=(carry,), inits=(acc,), return_vars=(Var(name, acc.var_type, span=sp),),
                                   kind=ForKind.Sequential, attrs={})
        [loop] = clone([loop], {})  # each sub-tile's copy defines Vars of its own
        assert isinstance(loop, ForStmt)
        return [*stmts, loop], loop.return_vars[0]


__all__ = ["DOUBLE_BUFFER_C", "Builder", "CarriedBuilder", "const_loop"]
