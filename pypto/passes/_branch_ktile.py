"""K loops inside the branches of a loop's first-iteration choice, a helper of AutoTileMatmulL0.

A kernel loop that starts its accumulator on its first iteration (``if kb == 0: acc = matmul(A, B) else:
acc = matmul_acc(acc, A, B)``, kept whole until PeelFirstIterations runs after AutoTileMatmulL0) may have
branch matmuls whose operand blocks exceed L0 while the accumulator fits. Upstream's pass K-tiles each such
matmul where it stands; so does this one: the ``matmul`` becomes a two-stage ``pl.pipeline(0, K', k)`` loop
over the K blocks, starting fresh on its first block (``if ko == 0: matmul else matmul_acc``, on a placeholder
``tile.create`` accumulator), the ``matmul_acc`` a ``pl.pipeline(0, K', k)`` loop accumulating onto the
carried value; a ``k`` that does not divide K leaves a narrower last block after the loop (``K'`` is then
the full blocks' extent). PeelFirstIterations later peels the outer loop and the ``ko == 0`` choices alike.

A branch matmul whose accumulator itself needs an ``[m, n]`` grid is not tiled here: the loop is peeled at
once and handed to the loop-carried grid (:class:`pypto.passes._matmul_grid.CarriedBuilder`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pypto.ir.dtypes import DataType
from pypto.ir.enums import ForKind, MemorySpace
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, IterArg, Var
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, SeqStmts, Stmt, YieldStmt, flatten
from pypto.ir.types import ScalarType, TileType
from pypto.ir.visitor import substitute
from pypto.passes._matmul_fit import Tiling
from pypto.passes._matmul_grid import const_loop
from pypto.passes._matmul_operand import MatmulOperand, matmul_of_loads, operand_blocks
from pypto.passes._peel import first_iteration_choice, peelable
from pypto.passes._rewrite import emit, expand_stmts, ints
from pypto.passes._util import base_name, element_dtype
from pypto.span import Span

_INDEX = ScalarType(DataType.INDEX)
_STAGES = {"pipeline_stages": 2}

# the L0 tile of ``var = call`` with operands ``a`` and ``b``; None: it fits L0 whole
TilingOf = Callable[[MatmulOperand, MatmulOperand, Var, Call], Tiling | None]
# do the K loop's blocks of ``t`` fit L0 (the call's operands a, b)
KLoopFits = Callable[[MatmulOperand, MatmulOperand, Call, Tiling], bool]
# a branch matmul that can be K-tiled: the statement, its var, its call, the accumulator it adds onto (or None)
_Site = tuple[AssignStmt, Var, Call, Expr | None, MatmulOperand, MatmulOperand, Tiling]


def _site(s: Stmt, loads: dict[Var, Call], tiling_of: TilingOf, fits: KLoopFits) -> _Site | bool | None:
    """A branch matmul that needs K blocks only (its site), one that needs an ``[m, n]`` grid or whose K loop's
    blocks would not fit L0 (True), or anything else (None)."""
    found = matmul_of_loads(s, loads)
    if found is None or not isinstance(s, AssignStmt):
        return None
    var, call, a, b = found
    acc = call.args[0] if call.op == "tile.matmul_acc" else None
    if acc is not None and len(call.args) != 3:
        return None
    t = tiling_of(a, b, var, call)
    if t is None:
        return None
    if (t.m, t.n) != (a.shape[0], b.shape[1]) or t.k >= a.shape[1] or not fits(a, b, call, t):
        return True
    return s, var, call, acc, a, b, t


def plan(loop: Stmt, loads: dict[Var, Call], tiling_of: TilingOf, fits: KLoopFits) -> list[_Site] | bool | None:
    """The branch matmuls of ``loop``'s first-iteration choices to K-tile, True when one needs a grid (peel
    the loop now), None when nothing exceeds L0 (or ``loop`` makes no such choice)."""
    if not isinstance(loop, ForStmt) or not peelable(loop):
        return None
    body = flatten(loop.body)
    sites: list[_Site] = []
    for s in body:
        if not isinstance(s, IfStmt) or not first_iteration_choice(s, loop, body):
            continue
        for x in (*flatten(s.then_body), *flatten(s.else_body)):
            found = _site(x, loads, tiling_of, fits)
            if found is True:
                return True
            if isinstance(found, tuple):
                sites.append(found)
    return sites or None


def block_copies(call: Call, k_dim: int, k: int) -> int:
    """How many sets of operand blocks the K loop of ``call`` emits once peeled and lowered: the peeled first
    block (a fresh matmul), the pipeline's two stages (fewer when fewer blocks remain), the narrower last one."""
    full, tail = divmod(k_dim, k)
    fresh = call.op == "tile.matmul"
    return int(fresh) + min(2, full - fresh) + (tail > 0)


def k_tile(loop: ForStmt, sites: list[_Site]) -> tuple[ForStmt, set[Var]]:
    """``loop`` with each site replaced by its K loop; the operand Vars the sites no longer read."""
    by_stmt = {id(site[0]): site for site in sites}
    renames: dict[Var, Expr] = {}

    def one(x: Stmt) -> list[Stmt] | None:
        site = by_stmt.get(id(x))
        if site is None:
            return None
        stmts, renames[site[1]] = KLoop(*site[4:], site[2], site[0].span).emit(site[1].name, site[3])
        return stmts

    body = substitute(expand_stmts(loop.body, one), renames)
    operands = {v for site in sites for op in (site[4], site[5]) for v in op.defs}
    return dataclasses.replace(loop, body=body), operands


class KLoop:
    """Upstream's K loop for one ``[M, K] @ [K, N]`` matmul whose accumulator fits L0 (``t.m == M``,
    ``t.n == N``)."""

    def __init__(self, a: MatmulOperand, b: MatmulOperand, t: Tiling, mm: Call, span: Span) -> None:
        self.a, self.b, self.t, self.mm, self.span = a, b, t, mm, span

    def _block(self, ko: Expr, k: int, tag: str, name: str) -> tuple[list[Stmt], Var, Var]:
        zero, mnk = ConstInt(0, span=self.span), (self.a.shape[0], self.b.shape[1], k)
        return operand_blocks(self.a, self.b, (zero, zero, ko), mnk, (f"{name}_l0_a{tag}", f"{name}_l0_b{tag}"), self.span)

    def _fresh(self, va: Var, vb: Var) -> Call:
        kwargs = dict(self.mm.kwargs)
        if self.mm.op == "tile.matmul_acc":
            kwargs["out_dtype"] = element_dtype(self.mm)
        return make_call("tile.matmul", [va, vb], kwargs, span=self.span)

    def _acc(self, acc: Expr, va: Var, vb: Var) -> Call:
        return make_call("tile.matmul_acc", [acc, va, vb], {}, span=self.span)

    def emit(self, name: str, acc_in: Expr | None) -> tuple[list[Stmt], Var]:
        """The statements computing the matmul (onto ``acc_in`` when given) and the Var holding the result."""
        sp, k, k_dim = self.span, self.t.k, self.a.shape[1]
        name = base_name(name)
        full, tail = divmod(k_dim, k)
        out: list[Stmt] = []
        if full >= 2:
            acc = self._loop(out, name, full, acc_in, has_tail=bool(tail))
        else:
            stmts, va, vb = self._block(ConstInt(0, span=sp), k, "0", name)
            out += stmts
            acc = emit(out, f"{name}_l0_c0", self._acc(acc_in, va, vb) if acc_in is not None else self._fresh(va, vb),
                       sp)
        if tail:
            stmts, va, vb = self._block(ConstInt(full * k, span=sp), tail, "t", name)
            out += stmts
            acc = emit(out, name, self._acc(acc, va, vb), sp)
        return out, acc

    def _loop(self, out: list[Stmt], name: str, full: int, acc_in: Expr | None, has_tail: bool) -> Var:
        sp, k = self.span, self.t.k
        acc_t = self.mm.result_type
        assert isinstance(acc_t, TileType)
        init = acc_in
        if init is None:  # a placeholder the first block's fresh matmul replaces (peeled away later)
            create = make_call("tile.create", [ints(acc_t.shape, sp)],
                               {"dtype": acc_t.dtype, "target_memory": MemorySpace.Acc}, span=sp)
            init = emit(out, f"{name}_l0_init", create, sp)
        ko = Var(f"{name}_l0_ko", _INDEX, span=sp)
        carry = IterArg(f"{name}_l0_c", acc_t, span=sp)
        body, va, vb = self._block(ko, k, "", name)
        if acc_in is not None:
            step = emit(body, f"{name}_l0_c_acc", self._acc(carry, va, vb), sp)
        else:
            step = self._choice(body, name, ko, carry, va, vb)
        body.append(YieldStmt((step,), span=sp))
        result = Var(f"{name}_l0_kmain" if has_tail else name, acc_t, span=sp)
        out.append(const_loop(ko, (0, full * k, k), body, sp, iter_args=(carry,), return_vars=(result,), inits=(init,),
                              kind=ForKind.Pipeline, attrs=dict(_STAGES)))
        return result

    def _choice(self, body: list[Stmt], name: str, ko: Var, carry: IterArg, va: Var, vb: Var) -> Var:
        """``if ko == 0: fresh else: matmul_acc(carry)``, its result."""
        sp = self.span
        then: list[Stmt] = []
        first = emit(then, f"{name}_l0_c_first", self._fresh(va, vb), sp)
        other: list[Stmt] = []
        nxt = emit(other, f"{name}_l0_c_acc", self._acc(carry, va, vb), sp)
        phi = Var(f"{name}_l0_c_phi", first.var_type, span=sp)
        cond = BinaryExpr(BinOp.Eq, ko, ConstInt(0, span=sp), DataType.BOOL, span=sp)
        body.append(IfStmt(cond, SeqStmts((*then, YieldStmt((first,), span=sp)), span=sp),
                           SeqStmts((*other, YieldStmt((nxt,), span=sp)), span=sp), (phi,), span=sp))
        return phi


__all__ = ["KLoop", "block_copies", "k_tile", "plan"]
