"""AutoTileMatmulL0: a matmul whose operands or result exceed the cube's L0 buffers becomes a tiled loop nest.

It fires on ``c = tile.matmul(A, B)`` in an InCore function when ``A`` and ``B`` are Mat loads of
2-D tensors with static shapes, ``c`` is stored once to DDR (``tile.store(c, [r, s], out)``), and
``A`` (Left), ``B`` (Right) or ``c`` (Acc) exceeds its L0 budget (operands are double-buffered). The output is cut into
``[m, n]`` sub-tiles, each computed by its own K loop over ``[m, k] @ [k, n]`` blocks (split-K,
``k < K``) or by one block (full-K, ``k == K``), and stored straight to its window of ``out``.
The operand blocks are loaded from the tensors window by window, so no tile larger than L0 exists.
Tile choice: upstream's roofline chooser (:mod:`pypto.passes.l0_tile_chooser`), configured as upstream's
pass does (the backend's calibration, operand-stationary schedules and a K peel allowed, a double-buffered
L0C unless the PYPTO planner runs without ``enable_pypto_l0c_double_buffer``, the bias table bounding ``n``).
A ``k`` that does not divide K leaves a narrower last K block, and ``m`` / ``n`` that do not divide M / N
leave a partial last row / column of tiles; both are peeled after their loops. Where the chooser has no
tile (K not a multiple of 16, a dim below 16), a peeled tail would not be whole fractals, or the peeled
regions' tiles would not fit L0 together (:mod:`pypto.passes._matmul_fit` models each planner's sharing), the
pass's own rule applies: the largest ``m * n`` (then the widest ``n``) whose accumulator fits half of L0C, then
the largest ``k`` whose blocks fit half of L0A / L0B; every extent divides its dim and is a multiple of 16 (or
the whole dim). A chain of two matmuls keeps its own row-block rule.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import ForKind, MemorySpace
from pypto.ir.expr import Call, ConstInt, Expr, IterArg, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.options import BackendType, MemoryPlanner
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, SeqStmts, Stmt, YieldStmt
from pypto.ir.types import ScalarType, TileType
from pypto.passes._index import iadd
from pypto.passes._matmul_fit import Tiling, regions_fit, spans
from pypto.passes._matmul_operand import MatmulOperand, int_tuple, matmul_operand
from pypto.passes._rewrite import assign_of, assigns_of, drop_defs, elements, match, shaped
from pypto.passes._util import base_name, iter_stmts, map_blocks, substitute_typed, var_use_counts
from pypto.passes.allocate_memory_addr import CAPACITY
from pypto.passes.base import Pass
from pypto.passes.context import PassContext
from pypto.passes.expand_mixed_kernel import MAX_UNROLL
from pypto.passes.l0_tile_chooser import L0TileConfig, backend_config, choose_l0_tile
from pypto.span import Span

_FRACTAL = 16


def _extents(dim: int) -> list[int]:
    return sorted({dim, *(e for e in range(_FRACTAL, dim, _FRACTAL) if dim % e == 0)}, reverse=True)


def choose_tiling(m_dim: int, n_dim: int, k_dim: int, bytes_ab: tuple[int, int], bytes_c: int,
                  caps: dict[MemorySpace, int], bias_bytes: int = 0) -> Tiling | None:
    """The L0 tile for an ``[M, K] @ [K, N]`` matmul (see the module docstring); None if none fits.
    ``bias_bytes``: the element size of a ``[1, n]`` bias block, which must fit the Bias table."""
    left, right, acc = (caps[s] // 2 for s in (MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc))
    ba, bb = bytes_ab
    grid = [(m, n) for m in _extents(m_dim) for n in _extents(n_dim)
            if m * n * bytes_c <= acc and n * bias_bytes <= caps.get(MemorySpace.Bias, 0)]
    for m, n in sorted(grid, key=lambda mn: (mn[0] * mn[1], mn[1]), reverse=True):
        if (t := _widest_k(m, n, k_dim, (ba, bb), (left, right))) is not None:
            return t
    return None


def _widest_k(m: int, n: int, k_dim: int, nbytes: tuple[int, int], caps: tuple[int, int]) -> Tiling | None:
    """``[m, n]`` tiles with the largest ``k`` whose ``[m, k]`` / ``[k, n]`` blocks fit ``caps`` (L0A, L0B)."""
    k = next((k for k in _extents(k_dim) if m * k * nbytes[0] <= caps[0] and k * n * nbytes[1] <= caps[1]), None)
    return None if k is None else Tiling(m, n, k)


def _fits(m: int, n: int, k: int, bytes_ab: tuple[int, int], bytes_c: int, caps: dict[MemorySpace, int],
          bias_bytes: int = 0) -> bool:
    return (m * k * bytes_ab[0] <= caps[MemorySpace.Left] and k * n * bytes_ab[1] <= caps[MemorySpace.Right]
            and m * n * bytes_c <= caps[MemorySpace.Acc] and n * bias_bytes <= caps.get(MemorySpace.Bias, 0))


class _Builder:
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
        m, n, k = mnk
        sa, va = self.a.window(mi, ko, (m, k), f"{_stem(self.a)}_{suffix}", self.span)
        sb, vb = self.b.window(ko, ni, (k, n), f"{_stem(self.b)}_{suffix}", self.span)
        return [*sa, *sb], va, vb

    def _acc_step(self, acc: Var, mi: Expr, ni: Expr, ko: Expr, mnk: tuple[int, int, int],
                  suffix: str) -> tuple[list[Stmt], Var]:
        stmts, va, vb = self._block(mi, ni, ko, suffix, mnk)
        step = make_call("tile.matmul_acc", [acc, va, vb], {}, span=self.span)
        nxt = Var(acc.name, step.result_type, span=self.span)
        return [*stmts, AssignStmt(nxt, step, span=self.span)], nxt

    def sub_tile(self, mi: Expr, ni: Expr, name: str, m: int, n: int) -> tuple[list[Stmt], Var]:
        """The ``[m, n]`` output block at ``(mi, ni)``: a first K block, a K loop of matmul_acc over the other
        full blocks, then a peeled narrower last block when ``k`` does not divide K."""
        sp, k = self.span, self.t.k
        k_dim = self.a.shape[1]
        full, tail = divmod(k_dim, k)
        stmts, va, vb = self._block(mi, ni, ConstInt(0, span=sp), "k0", (m, n, k))
        first = self._first(va, vb, ni, n, stmts)
        acc = Var(name, first.result_type, span=sp)
        stmts.append(AssignStmt(acc, first, span=sp))
        if full > 1:
            ko = Var("ko", _INDEX, span=sp)
            carry = IterArg(f"{name}_iter", acc.var_type, span=sp)
            body, nxt = self._acc_step(carry, mi, ni, ko, (m, n, k), "k")
            out = Var(name, acc.var_type, span=sp)
            stmts.append(ForStmt(ko, ConstInt(k, span=sp), ConstInt(full * k, span=sp), ConstInt(k, span=sp),
                                 SeqStmts((*body, YieldStmt((nxt,), span=sp)), span=sp), (carry,), (out,), inits=(acc,), span=sp))
            acc = out
        if tail:
            body, acc = self._acc_step(acc, mi, ni, ConstInt(full * k, span=sp), (m, n, tail), "kt")
            stmts += body
        return stmts, acc

    def store_at(self, body: list[Stmt], acc: Var, store: Call, mi: Expr, ni: Expr) -> None:
        sp = self.span
        *lead, row0, col0 = elements(store.args[1])
        offs = int_tuple([*lead, iadd(row0, mi, sp), iadd(col0, ni, sp)], sp)
        body.append(EvalStmt(make_call("tile.store", [acc, offs, store.args[2]], dict(store.kwargs), span=sp),
                             span=sp))

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
        axes = []
        for name, (lo, hi, step) in (("mi", rows), ("ni", cols)):
            axes.append(Var(name, _INDEX, span=sp) if hi - lo > step else ConstInt(lo, span=sp))
        mi, ni = axes
        body, acc = self.sub_tile(mi, ni, f"{base_name(getattr(store.args[0], 'name', 'c'))}_sub", rows[2], cols[2])
        self.store_at(body, acc, store, mi, ni)
        for var, (lo, hi, step) in ((ni, cols), (mi, rows)):
            if isinstance(var, Var):
                kind, attrs = (ForKind.Pipeline, {"pipeline_stages": 2, DOUBLE_BUFFER_C: True}) if double_buffer_c \
                    else (ForKind.Sequential, {})
                body = [ForStmt(var, ConstInt(lo, span=sp), ConstInt(hi, span=sp), ConstInt(step, span=sp),
                                SeqStmts(tuple(body), span=sp), kind=kind, attrs=attrs, span=sp)]
                double_buffer_c = False
        return body

    def rows(self, cast: tuple[Var, Call], second: tuple[Var, Call], store: Call) -> list[Stmt]:
        """Per row block: its rows of ``c`` (full-K or split-K), their cast, times ``E``, stored."""
        sp, t = self.span, self.t
        m_dim = self.a.shape[0]
        mi = Var("mi", _INDEX, span=sp) if t.m < m_dim else ConstInt(0, span=sp)
        body, acc = self.sub_tile(mi, ConstInt(0, span=sp), f"{base_name(cast[0].name)}_acc", t.m, t.n)
        cc = make_call("tile.cast", [acc, *cast[1].args[1:]], dict(cast[1].kwargs), span=sp)
        cb = Var(base_name(cast[0].name), cc.result_type, span=sp)
        dc = make_call("tile.matmul", [cb, *second[1].args[1:]], dict(second[1].kwargs), span=sp)
        d = Var(base_name(second[0].name), dc.result_type, span=sp)
        body += [AssignStmt(cb, cc, span=sp), AssignStmt(d, dc, span=sp)]
        self.store_at(body, d, store, mi, ConstInt(0, span=sp))
        if isinstance(mi, Var):
            body = [ForStmt(mi, ConstInt(0, span=sp), ConstInt(m_dim, span=sp), ConstInt(t.m, span=sp),
                            SeqStmts(tuple(body), span=sp), span=sp)]
        return body


_INDEX = ScalarType(DataType.INDEX)
DOUBLE_BUFFER_C = "pipeline_double_buffer_c"  # upstream's loop attribute: two L0C accumulators in flight


def _stem(op: MatmulOperand) -> str:
    return base_name(getattr(op.tensor, "name", "x"))


@dataclass(frozen=True)
class AutoTileMatmulL0(Pass):
    """Tile matmuls that exceed L0 into ``[m, n]`` sub-tiles stored straight to DDR (see the module doc)."""

    name = "AutoTileMatmulL0"
    backend: BackendType = BackendType.Ascend910B
    memory_planner: MemoryPlanner = MemoryPlanner.PYPTO
    l0c_double_buffer: bool = False
    """Under the PYPTO planner, still let the chooser double-buffer L0C (the other planners always may)."""

    @classmethod
    def from_context(cls, ctx: PassContext) -> AutoTileMatmulL0:
        return cls(backend=ctx.backend_type, memory_planner=ctx.memory_planner,
                   l0c_double_buffer=ctx.enable_pypto_l0c_double_buffer)

    def tiling(self, a: MatmulOperand, b: MatmulOperand, c: Var, mm: Call, loads: dict[Var, Call]) -> Tiling | None:
        """The L0 tile of ``c = A @ B`` (None: it fits L0 whole, or cannot be tiled). Upstream's roofline chooser
        decides, configured as upstream's pass does; where it has no answer this pass's own rule does."""
        caps = CAPACITY[self.backend]
        m_dim, k_dim, n_dim = a.shape[0], a.shape[1], b.shape[1]
        dtype_c = shaped(c).dtype
        cfg = replace(backend_config(self.backend, m_dim, n_dim, k_dim, dtype_a=shaped(a.load).dtype,
                                     dtype_b=shaped(b.load).dtype, dtype_c=dtype_c),
                      allow_a_stationary=True, allow_b_stationary=True, allow_k_boundary=True,
                      allow_double_buffer_c=self.memory_planner is not MemoryPlanner.PYPTO or self.l0c_double_buffer,
                      **_bias_limits(mm, loads, caps, n_dim))
        if (t := _chooser_tiling(cfg)) is not None:
            if (t.m, t.n, t.k) == (m_dim, n_dim, k_dim):
                return None
            shared = self.memory_planner is MemoryPlanner.PYPTO
            # each stage of a dbC loop loads its own operand blocks (an operand-stationary choice holds one
            # panel upstream): when two stages do not fit, the same tiles run single-buffered
            for tt in (t, replace(t, double_buffer_c=False)):
                if regions_fit(tt, cfg, caps, shared=shared, biased=mm.op == "tile.matmul_bias",
                               one_region_at_a_time=self.memory_planner is MemoryPlanner.PTOAS):
                    return tt
        bytes_ab, bytes_c, bias_b = (_bytes(a), _bytes(b)), dtype_c.nbytes, _bias_bytes(mm)
        if _fits(m_dim, n_dim, k_dim, bytes_ab, bytes_c, caps, bias_b):
            return None
        return choose_tiling(m_dim, n_dim, k_dim, bytes_ab, bytes_c, caps, bias_b)

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore or not any(_matmul_of(s) for s in iter_stmts(func.body)):
            return func  # both rewrites start at a ``c = tile.matmul(...)`` statement
        loads = {**assigns_of(func.body, "tile.load"), **assigns_of(func.body, "tile.transpose_view")}
        uses = var_use_counts(func.body)
        caps = CAPACITY[self.backend]
        replaced: dict[Var, Expr] = {}
        dead: set[Var] = set()

        def block(stmts: list[Stmt]) -> list[Stmt]:
            out = list(stmts)
            for i, s in enumerate(stmts):
                rw = _plan_store(s, stmts[i + 1:], loads, uses, self) or _plan_chain(s, stmts[i + 1:], loads, uses, caps)
                if rw is None:
                    continue
                j = out.index(rw.at)
                out[j:j + 1] = rw.stmts
                for x in rw.removed:
                    out.remove(x)
                if (st := assign_of(rw.at, "tile.store")) is not None:
                    dst = st[1].args[2]  # a chain of stores (one per matrix of a batch) resolves to the first's
                    replaced[st[0]] = replaced.get(dst, dst) if isinstance(dst, Var) else dst
                dead.update(v for v in rw.inputs if uses[v] <= 2)
            return out

        new = func.with_(body=map_blocks(func.body, block))
        if new is func:
            return func
        body = substitute_typed(new.body, replaced) if replaced else new.body
        return new.with_(body=drop_defs(body, dead))


@dataclass(frozen=True)
class _Rewrite:
    """Replace the store ``at`` by ``stmts``; drop ``removed``; ``inputs`` may be dead loads afterwards."""

    at: Stmt
    stmts: list[Stmt]
    removed: tuple[Stmt, ...]
    inputs: tuple[Var, ...]


# ``c = tile.matmul(A, B)`` of two Mat loads: c, the call, A, B
_MatmulOfLoads = tuple[Var, Call, MatmulOperand, MatmulOperand]
# the statement and the ``var = call`` of each link after ``c``: its cast, the second matmul, E, the store
_Link = tuple[Stmt, tuple[Var, Call]]
_Chain = tuple[_Link, _Link, MatmulOperand, tuple[Stmt, Call]]


def _matmul_of(s: Stmt) -> tuple[Var, Call] | None:
    return assign_of(s, ("tile.matmul", "tile.matmul_bias"))


def _bias(mm: Call, loads: dict[Var, Call], t: Tiling, n_dim: int) -> tuple[bool, MatmulOperand | None]:
    """Can a matmul_bias be tiled as ``t``, and the bias's Mat load (windowed per sub-tile) if it is one?
    Another bias tile (e.g. one already moved to Bias) is reused whole, so only when N is not tiled."""
    if mm.op != "tile.matmul_bias":
        return True, None
    op = matmul_operand(mm.args[2], loads)
    return op is not None or t.n == n_dim, op


def _matmul_of_loads(s: Stmt, loads: dict[Var, Call], uses: Counter[Var]) -> _MatmulOfLoads | None:
    mm = _matmul_of(s)
    if mm is None:
        return None
    c, call = mm
    a, b = matmul_operand(call.args[0], loads), matmul_operand(call.args[1], loads)
    if a is None or b is None or not isinstance(c.var_type, TileType) or uses[c] != 2:
        return None
    return c, call, a, b


def _plan_store(s: Stmt, rest: list[Stmt], loads: dict[Var, Call], uses: Counter[Var],
                target: AutoTileMatmulL0) -> _Rewrite | None:
    """``c = matmul(A, B); store(c, ...)`` -> an [m, n] grid of sub-tiles stored to DDR."""
    found = _matmul_of_loads(s, loads, uses)
    store = next((x for x in rest if _stores(x, found[0])), None) if found is not None else None
    if found is None or store is None or (store_call := match(store)) is None:
        return None
    c, mm, a, b = found
    t = target.tiling(a, b, c, mm, loads)
    ok, bias = _bias(mm, loads, t, b.shape[1]) if t is not None else (False, None)
    if t is None or not ok:
        return None
    stmts = _Builder(a, b, mm, t, s.span, bias).grid(store_call)
    return _Rewrite(store, stmts, (s,), (*a.defs, *b.defs, *(bias.defs if bias else ())))


def _bias_limits(mm: Call, loads: dict[Var, Call], caps: dict[MemorySpace, int], n_dim: int) -> dict[str, int]:
    """The chooser's N bounds for a matmul_bias: the bias table holds ``max_n`` accumulator-typed values; a
    bias loaded per sub-tile is replicated by the grid's pipelines (upstream's halving per level); any other
    bias is reused whole, so only ``n == N`` is possible."""
    if mm.op != "tile.matmul_bias":
        return {}
    max_n = caps.get(MemorySpace.Bias, 0) // _bias_bytes(mm)
    if matmul_operand(mm.args[2], loads) is None:
        return {"max_n": max_n, "min_n": n_dim}
    return {"max_n": max_n, "max_n_pipelined": max_n // 2, "max_n_nested_pipelined": max_n // 4}


def _chooser_tiling(cfg: L0TileConfig) -> Tiling | None:
    """Upstream's choice for ``cfg``, or None when it has none this pass can emit (no legal tile, or a partial
    last row/column of tiles that is not a whole number of fractals)."""
    try:
        r = choose_l0_tile(cfg)
    except UserError:
        return None
    if (cfg.M % r.m) % _FRACTAL or (cfg.N % r.n) % _FRACTAL:
        return None
    inner = cfg.N // r.n if cfg.N // r.n > 1 else cfg.M // r.m  # the trip count of the grid's inner loop
    # an odd count would leave LowerPipelineLoops a straight-line third copy with tiles of its own
    return Tiling(r.m, r.n, r.k, bool(r.double_buffer_c) and inner > 1 and inner % 2 == 0)


def _nbytes(e: Expr) -> int:
    return shaped(e).dtype.nbytes


def _bias_bytes(mm: Call) -> int:
    return _nbytes(mm.args[2]) if mm.op == "tile.matmul_bias" else 0


def _bytes(op: MatmulOperand) -> int:
    return _nbytes(op.load)


def _stores(s: Stmt, c: Var) -> bool:
    call = match(s, "tile.store")
    return (call is not None and call.args[0] is c
            and isinstance(call.args[1], MakeTuple) and len(call.args[1].elements) >= 2)


def _plan_chain(s: Stmt, rest: list[Stmt], loads: dict[Var, Call], uses: Counter[Var],
                caps: dict[MemorySpace, int]) -> _Rewrite | None:
    """``c = matmul(A, B); cb = cast(c); d = matmul(cb, E); store(d, ...)`` with something too big for L0
    -> a loop over blocks of ``m`` rows, each computing its rows of ``c`` (a K loop of L0-sized blocks when
    ``A``/``B`` exceed L0), their cast and their rows of ``d``. Upstream assembles an oversized ``c`` into a
    Mat scratch (``tinsert``); 0.1.1 has no Acc->Mat move, so ``cb`` is a vector tile that ExpandMixedKernel
    passes to the cube through GM, one row block at a time (its row-block loop is unrolled, <= 16 blocks)."""
    found = _matmul_of_loads(s, loads, uses)
    chain = _chain(found[0], rest, loads, uses) if found is not None else None
    if found is None or chain is None:
        return None
    (c, mm, a, b), (cast, second, e, store) = found, chain
    m_dim, k_dim, n_dim, p_dim = a.shape[0], a.shape[1], b.shape[1], e.shape[1]
    bc, bcb, bd = _nbytes(c), _nbytes(cast[1][0]), _nbytes(second[1][0])
    if _fits(m_dim, n_dim, k_dim, (_bytes(a), _bytes(b)), bc, caps) and \
            _fits(m_dim, p_dim, n_dim, (bcb, _bytes(e)), bd, caps):
        return None
    t = _chain_tiling(m_dim, n_dim, k_dim, p_dim, (_bytes(a), _bytes(b), bcb, _bytes(e)), (bc, bd), caps)
    if t is None:
        return None
    if m_dim // t.m > MAX_UNROLL:
        raise UserError(f"matmul chain: the [{m_dim}, {n_dim}] intermediate of these two matmuls exceeds L0C and "
                        f"needs {m_dim // t.m} row blocks of {t.m}; pypto hands it from cube to vector and back "
                        f"through GM (ptoas 0.1.1 has no Acc->Mat move), which it can do for at most {MAX_UNROLL} "
                        "blocks per kernel", s.span,
                        hint=f"split the rows over several pl.at regions (at most {MAX_UNROLL * t.m} rows each), "
                             "e.g. a pl.range loop in the orchestration around the region")
    ok, bias = _bias(mm, loads, t, n_dim)
    if not ok or n_dim * _bias_bytes(mm) > caps.get(MemorySpace.Bias, 0):
        return None  # the whole [1, N] bias would not fit the Bias table: AllocateMemoryAddr reports it
    stmts = _Builder(a, b, mm, t, s.span, bias).rows(cast[1], second[1], store[1])
    return _Rewrite(store[0], stmts, (s, cast[0], second[0]), (*a.defs, *b.defs, *(bias.defs if bias else ())))


def _next_use(rest: list[Stmt], op: str, first: Var) -> tuple[Stmt, tuple[Var, Call]] | None:
    """The first ``x = op(first, ...)`` of ``rest``: the statement, its Var and its call."""
    return next(((x, m) for x in rest if (m := assign_of(x, op)) is not None and m[1].args[0] is first), None)


def _chain(c: Var, rest: list[Stmt], loads: dict[Var, Call], uses: Counter[Var]) -> _Chain | None:
    cast = _next_use(rest, "tile.cast", c)
    if cast is None or uses[cast[1][0]] != 2:
        return None
    second = _next_use(rest, "tile.matmul", cast[1][0])
    if second is None or uses[second[1][0]] != 2:
        return None
    e = matmul_operand(second[1][1].args[1], loads)
    store = next((x for x in rest if _stores(x, second[1][0])), None)
    if e is None or store is None or (store_call := match(store)) is None:
        return None
    return cast, second, e, (store, store_call)


def _chain_tiling(m_dim: int, n_dim: int, k_dim: int, p_dim: int, nbytes: tuple[int, int, int, int],
                  acc_bytes: tuple[int, int], caps: dict[MemorySpace, int]) -> Tiling | None:
    """Row blocks ``m`` (then the first matmul's ``k``) for a chain; the second matmul is one block."""
    ba, bb, bcb, be = nbytes
    left, right, acc = (caps[sp] // 2 for sp in (MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc))
    if n_dim * p_dim * be > right:
        return None
    for m in _extents(m_dim):
        if m * n_dim * acc_bytes[0] > acc or m * n_dim * bcb > left or m * p_dim * acc_bytes[1] > acc:
            continue
        if (t := _widest_k(m, n_dim, k_dim, (ba, bb), (left, right))) is not None:
            return t
    return None


__all__ = ["AutoTileMatmulL0", "choose_tiling"]
