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
leave a partial last row / column of tiles; both are peeled after their loops. A matmul neither form
takes whose operands alone exceed L0A / L0B is chained over K (:mod:`pypto.passes._matmul_ksplit`). Where the chooser has no
tile (K not a multiple of 16, a dim below 16), a peeled tail would not be whole fractals, or the peeled
regions' tiles would not fit L0 together (:mod:`pypto.passes._matmul_fit` models each planner's sharing), the
pass's own rule applies: the largest ``m * n`` (then the widest ``n``) whose accumulator fits half of L0C, then
the largest ``k`` whose blocks fit half of L0A / L0B; every extent divides its dim and is a multiple of 16 (or
the whole dim). A chain of two matmuls keeps its own row-block rule.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from pypto.errors import UnsupportedFeatureError, UserError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Expr, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.options import BackendType, MemoryPlanner
from pypto.ir.stmt import AssignStmt, ForStmt, SeqStmts, Stmt, YieldStmt
from pypto.passes._branch_ktile import block_copies, k_tile, plan
from pypto.passes._matmul_fit import Tiling, regions_fit
from pypto.passes._matmul_grid import Builder as _Builder
from pypto.passes._matmul_grid import CarriedBuilder
from pypto.passes._matmul_ksplit import split_matmuls_k
from pypto.passes._matmul_operand import MatmulOperand, matmul_of_loads, matmul_operand, operand_defs
from pypto.passes._peel import drop_dead_creates, peel
from pypto.passes._rewrite import assign_of, drop_defs, expand_stmts, match, shaped
from pypto.passes._util import iter_stmts, map_blocks, substitute_typed, used_vars, var_use_counts
from pypto.passes.allocate_memory_addr import CAPACITY
from pypto.passes.base import Pass
from pypto.passes.context import PassContext
from pypto.passes.expand_mixed_kernel import MAX_UNROLL
from pypto.passes.l0_tile_chooser import L0TileConfig, backend_config, choose_l0_tile

_FRACTAL = 16


def _extents(dim: int, align: int = _FRACTAL) -> list[int]:
    return sorted({dim, *(e for e in range(align, dim, align) if dim % e == 0)}, reverse=True)


def choose_tiling(m_dim: int, n_dim: int, k_dim: int, bytes_ab: tuple[int, int], bytes_c: int,
                  caps: dict[MemorySpace, int], bias_bytes: int = 0, operand_sets: int = 1) -> Tiling | None:
    """The L0 tile for an ``[M, K] @ [K, N]`` matmul (see the module docstring); None if none fits.
    ``bias_bytes``: the element size of a ``[1, n]`` bias block, which must fit the Bias table.
    ``operand_sets``: the operand blocks are loaded that many times per sub-tile (each set gets its share)."""
    acc = caps[MemorySpace.Acc] // 2
    left, right = (caps[s] // (2 * operand_sets) for s in (MemorySpace.Left, MemorySpace.Right))
    ba, bb = bytes_ab
    grid = [(m, n) for m in _extents(m_dim) for n in _extents(n_dim, c0(bb))
            if m * n * bytes_c <= acc and n * bias_bytes <= caps.get(MemorySpace.Bias, 0)]
    for m, n in sorted(grid, key=lambda mn: (mn[0] * mn[1], mn[1]), reverse=True):
        if (t := _widest_k(m, n, k_dim, (ba, bb), (left, right))) is not None:
            return t
    return None


def c0(nbytes: int) -> int:
    """The column alignment of a Mat tile of ``nbytes`` elements: its NZ boxes are 32 bytes wide (16 at least)."""
    return max(_FRACTAL, 32 // nbytes)


def _widest_k(m: int, n: int, k_dim: int, nbytes: tuple[int, int], caps: tuple[int, int]) -> Tiling | None:
    """``[m, n]`` tiles with the largest ``k`` whose ``[m, k]`` / ``[k, n]`` blocks fit ``caps`` (L0A, L0B)."""
    k = next((k for k in _extents(k_dim, c0(min(nbytes))) if m * k * nbytes[0] <= caps[0] and k * n * nbytes[1] <= caps[1]),
             None)
    return None if k is None else Tiling(m, n, k)


def _fits(m: int, n: int, k: int, bytes_ab: tuple[int, int], bytes_c: int, caps: dict[MemorySpace, int],
          bias_bytes: int = 0) -> bool:
    return (m * k * bytes_ab[0] <= caps[MemorySpace.Left] and k * n * bytes_ab[1] <= caps[MemorySpace.Right]
            and m * n * bytes_c <= caps[MemorySpace.Acc] and n * bias_bytes <= caps.get(MemorySpace.Bias, 0))


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

    def tiling(self, a: MatmulOperand, b: MatmulOperand, c: Var, mm: Call, loads: dict[Var, Call],
               carried: bool = False) -> Tiling | None:
        """The L0 tile of ``c = A @ B`` (None: it fits L0 whole, or cannot be tiled). Upstream's roofline chooser
        decides, configured as upstream's pass does; where it has no answer this pass's own rule does.
        ``carried``: the first step of a loop-carried accumulation (two sets of operand blocks, one L0C)."""
        caps = CAPACITY[self.backend]
        m_dim, k_dim, n_dim = a.shape[0], a.shape[1], b.shape[1]
        dtype_c = shaped(c).dtype
        cfg = replace(backend_config(self.backend, m_dim, n_dim, k_dim, dtype_a=shaped(a.load).dtype,
                                     dtype_b=shaped(b.load).dtype, dtype_c=dtype_c),
                      allow_a_stationary=True, allow_b_stationary=True, allow_k_boundary=True,
                      allow_double_buffer_c=self.memory_planner is not MemoryPlanner.PYPTO or self.l0c_double_buffer,
                      **_bias_limits(mm, loads, caps, n_dim))
        t = _chooser_tiling(cfg)
        bytes_ab = ba, bb = _bytes(a), _bytes(b)
        if t is not None and carried and (t.n % c0(bb) or t.k % c0(min(ba, bb)) or (
                self.memory_planner is MemoryPlanner.PTOAS and (m_dim % t.m or n_dim % t.n))):
            # blocks whose Mat tiles are not whole NZ boxes take more bytes than planned; under PTOAS whole
            # tiles only (ptoas 0.1.1 plans each peeled region's tiles by their logical bytes)
            t = None
        if t is not None:
            if (t.m, t.n, t.k) == (m_dim, n_dim, k_dim):
                return None
            # each stage of a dbC loop loads its own operand blocks (an operand-stationary choice holds one
            # panel upstream): when two stages do not fit, the same tiles run single-buffered
            for tt in ((t,) if not carried else ()) + (replace(t, double_buffer_c=False),):
                if regions_fit(tt, cfg, caps, shared=self.memory_planner is MemoryPlanner.PYPTO, biased=mm.op == "tile.matmul_bias",
                               one_region_at_a_time=self.memory_planner is MemoryPlanner.PTOAS,
                               operand_sets=1 + carried):
                    return tt
        bytes_c, bias_b = dtype_c.nbytes, _bias_bytes(mm)
        if _fits(m_dim, n_dim, k_dim, bytes_ab, bytes_c, caps, bias_b):
            return None
        return choose_tiling(m_dim, n_dim, k_dim, bytes_ab, bytes_c, caps, bias_b, 1 + carried)

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore or not any(assign_of(s, ("tile.matmul", "tile.matmul_bias")) for s in iter_stmts(func.body)):
            return func  # both rewrites start at a ``c = tile.matmul(...)`` statement
        func = self._first_iterations(func)
        loads = operand_defs(func.body)
        uses = var_use_counts(func.body)
        caps = CAPACITY[self.backend]
        replaced: dict[Var, Expr] = {}
        dead: set[Var] = set()

        def block(stmts: list[Stmt]) -> list[Stmt]:
            out = list(stmts)
            for i, s in enumerate(stmts):
                found = matmul_of_loads(s, loads, ("tile.matmul", "tile.matmul_bias"))
                if found is None or uses[found[0]] != 2:
                    continue
                rest = stmts[i + 1:]
                rw = _plan_store(s, found, rest, loads, self) or _plan_chain(s, found, rest, loads, uses, caps) \
                    or _plan_carried(s, found, rest, loads, uses, self)
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
        if new is not func:
            new = new.with_(body=drop_defs(substitute_typed(new.body, replaced), dead))
        # the user's matmuls neither rewrite took whose operands alone exceed L0 (not the grids' own blocks)
        return split_matmuls_k(new, caps, only={id(s) for s in iter_stmts(func.body)})

    def _k_loop_fits(self, a: MatmulOperand, b: MatmulOperand, mm: Call, t: Tiling) -> bool:
        """Under PTOAS ptoas 0.1.1 gives each copy of a K loop's blocks bytes of its own (the peeled first block,
        the two stages, a narrower last one): they must fit L0A / L0B side by side. The other planners share."""
        if self.memory_planner is not MemoryPlanner.PTOAS:
            return True
        caps, n = CAPACITY[self.backend], block_copies(mm, a.shape[1], t.k)
        return (n * t.m * t.k * _bytes(a) <= caps[MemorySpace.Left]
                and n * t.k * t.n * _bytes(b) <= caps[MemorySpace.Right])

    def _first_iterations(self, func: Function) -> Function:
        """Loops choosing their accumulator on their first iteration (``if kb == 0: matmul else matmul_acc``):
        branch matmuls exceeding L0 get K loops where they stand, or the loop is peeled at once when one needs
        an ``[m, n]`` grid (the loop-carried grid below takes it); see :mod:`pypto.passes._branch_ktile`."""
        loads = operand_defs(func.body)
        renames: dict[Var, Expr] = {}
        dead: set[Var] = set()

        def one(s: Stmt) -> list[Stmt] | None:
            found = plan(s, loads, lambda a, b, c, mm: self.tiling(a, b, c, mm, loads), self._k_loop_fits)
            if found is None or not isinstance(s, ForStmt):
                return None
            if isinstance(found, bool):  # plan's True: the loop is peeled now
                return peel(s, renames)
            loop, operands = k_tile(s, found)
            dead.update(operands)
            return [loop]

        body = expand_stmts(func.body, one)
        if body is func.body:
            return func
        body = substitute_typed(body, renames)
        uses = var_use_counts(body)
        return func.with_(body=drop_dead_creates(drop_defs(body, {v for v in dead if uses[v] <= 1})))


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


def _bias(mm: Call, loads: dict[Var, Call], t: Tiling, n_dim: int) -> tuple[bool, MatmulOperand | None]:
    """Can a matmul_bias be tiled as ``t``, and the bias's Mat load (windowed per sub-tile) if it is one?
    Another bias tile (e.g. one already moved to Bias) is reused whole, so only when N is not tiled."""
    if mm.op != "tile.matmul_bias":
        return True, None
    op = matmul_operand(mm.args[2], loads)
    return op is not None or t.n == n_dim, op


def _plan_store(s: Stmt, found: _MatmulOfLoads, rest: list[Stmt], loads: dict[Var, Call],
                target: AutoTileMatmulL0) -> _Rewrite | None:
    """``c = matmul(A, B); store(c, ...)`` -> an [m, n] grid of sub-tiles stored to DDR."""
    store = _store_of(rest, found[0])
    if store is None:
        return None
    (c, mm, a, b), (store, store_call) = found, store
    t = target.tiling(a, b, c, mm, loads)
    ok, bias = _bias(mm, loads, t, b.shape[1]) if t is not None else (False, None)
    if t is None or not ok:
        return None
    stmts = _Builder(a, b, mm, t, s.span, bias).grid(store_call)
    return _Rewrite(store, stmts, (s,), (*a.defs, *b.defs, *(bias.defs if bias else ())))


def _plan_carried(s: Stmt, found: _MatmulOfLoads, rest: list[Stmt], loads: dict[Var, Call], uses: Counter[Var],
                  target: AutoTileMatmulL0) -> _Rewrite | None:
    """``c = matmul(A0, B0); for ..: c = matmul_acc(c, A, B); store(c, ...)`` (a K loop whose first iteration was
    peeled) -> a grid of ``[m, n]`` sub-tiles, each running the first matmul and then the loop on its window."""
    loop = next((x for x in rest if isinstance(x, ForStmt) and found[0] in x.inits), None)
    if loop is None or found[1].op != "tile.matmul" or len(loop.iter_args) != 1:
        return None
    c, mm, a0, b0 = found
    step = _carried_step(loop, loads, uses)
    out = loop.return_vars[0]
    store = _store_of(rest, out)
    if step is None or store is None or uses[out] != 2:
        return None
    (acc_stmt, a, b), (store, store_call) = step, store
    if (a.shape, b.shape) != (a0.shape, b0.shape):
        return None
    _check_boxes(a0, b0, target, s)
    t = target.tiling(a0, b0, c, mm, loads, carried=True)
    if t is None:
        return None
    dead = {*a.defs, *b.defs}
    body = list(_body(loop))
    keep = [x for x in body[:-1] if x is not acc_stmt and not (isinstance(x, AssignStmt) and x.var in dead)]
    stmts = CarriedBuilder((a0, b0), (a, b), mm, t, s.span, loop, keep).grid(store_call)
    return _Rewrite(store, stmts, (s, loop), (*a0.defs, *b0.defs))


def _check_boxes(a: MatmulOperand, b: MatmulOperand, target: AutoTileMatmulL0, s: Stmt) -> None:
    """Under PTOAS ptoas 0.1.1 plans a Mat tile by its logical bytes, while its NZ boxes are 32 bytes wide: a
    1-byte operand whose N (or K) is no multiple of 32 would get too few bytes, and wrong numbers."""
    nbytes = (_bytes(a), _bytes(b))
    n_dim, k_dim = b.shape[1], a.shape[1]
    if target.memory_planner is not MemoryPlanner.PTOAS or not (n_dim % c0(nbytes[1]) or k_dim % c0(min(nbytes))):
        return
    raise UnsupportedFeatureError(
        f"this [{a.shape[0]}, {k_dim}] @ [{k_dim}, {n_dim}] accumulation of {min(nbytes)}-byte operands exceeds L0 "
        f"and its N ({n_dim}) or K ({k_dim}) is no multiple of 32: under memory_planner=PTOAS, ptoas 0.1.1 would "
        "give its Mat blocks fewer bytes than their 32-byte-wide NZ boxes take (no ptoas version is known to "
        "size them)", s.span,
        hint="use memory_planner=PYPTO (or DSA_RP), or pad N and K to multiples of 32")


def _body(loop: ForStmt) -> tuple[Stmt, ...]:
    return loop.body.stmts if isinstance(loop.body, SeqStmts) else (loop.body,)


def _carried_step(loop: ForStmt, loads: dict[Var, Call], uses: Counter[Var]) \
        -> tuple[Stmt, MatmulOperand, MatmulOperand] | None:
    """The loop's ``c = matmul_acc(carry, A, B)`` (yielded, the carry used nowhere else) and its operands."""
    # the first step onto the carry whose operands are loads: another one would read the carry a second time
    body, carry = _body(loop), loop.iter_args[0]
    hit = next(((x, m) for x in body if (m := matmul_of_loads(x, loads, ("tile.matmul_acc",))) is not None
                and m[1].args[0] is carry and len(m[1].args) == 3), None)
    if hit is None or not isinstance(body[-1], YieldStmt) or body[-1].values != (hit[1][0],) or uses[hit[1][0]] != 2:
        return None
    x, (_, _, a, b) = hit
    if sum(v is carry for s in body for v in used_vars(s)) != 1 or any(uses[v] != 2 for v in (*a.defs, *b.defs)):
        return None
    return x, a, b


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


def _store_of(rest: list[Stmt], c: Var) -> tuple[Stmt, Call] | None:
    """The first ``tile.store(c, [.., r, s], out)`` of ``rest`` (at least two offsets) and its call."""
    return next(((x, call) for x in rest if (call := match(x, "tile.store")) is not None and call.args[0] is c
                 and isinstance(call.args[1], MakeTuple) and len(call.args[1].elements) >= 2), None)


def _plan_chain(s: Stmt, found: _MatmulOfLoads, rest: list[Stmt], loads: dict[Var, Call], uses: Counter[Var],
                caps: dict[MemorySpace, int]) -> _Rewrite | None:
    """``c = matmul(A, B); cb = cast(c); d = matmul(cb, E); store(d, ...)`` with something too big for L0
    -> a loop over blocks of ``m`` rows, each computing its rows of ``c`` (a K loop of L0-sized blocks when
    ``A``/``B`` exceed L0), their cast and their rows of ``d``. Upstream assembles an oversized ``c`` into a
    Mat scratch (``tinsert``); 0.1.1 has no Acc->Mat move, so ``cb`` is a vector tile that ExpandMixedKernel
    passes to the cube through GM, one row block at a time (its row-block loop is unrolled, <= 16 blocks)."""
    chain = _chain(found[0], rest, loads, uses)
    if chain is None:
        return None
    (c, mm, a, b), (cast, second, e, store) = found, chain
    m_dim, k_dim, n_dim, p_dim = a.shape[0], a.shape[1], b.shape[1], e.shape[1]
    bc, bcb, bd = _nbytes(c), _nbytes(cast[1][0]), _nbytes(second[1][0])
    if _fits(m_dim, n_dim, k_dim, (_bytes(a), _bytes(b)), bc, caps) and \
            _fits(m_dim, p_dim, n_dim, (bcb, _bytes(e)), bd, caps):
        return None
    # a matmul_bias chain takes a peeled last row block too (its wrong numbers on a5sim were the NZ-boxed bias
    # Mat tile ptoas 0.1.1 placed short; InferTileMemorySpace lays a bias stage out as one ND row now)
    t = _chain_tiling(m_dim, n_dim, k_dim, p_dim, (_bytes(a), _bytes(b), bcb, _bytes(e)), (bc, bd), caps)
    if t is None:
        return None
    if -(-m_dim // t.m) > MAX_UNROLL:
        raise UserError(f"matmul chain: the [{m_dim}, {n_dim}] intermediate of these two matmuls exceeds L0C and "
                        f"needs {m_dim // t.m} row blocks of {t.m}; pypto hands it from cube to vector and back "
                        f"through GM (ptoas 0.1.1 has no Acc->Mat move), which it can do for at most {MAX_UNROLL} "
                        "blocks per kernel", s.span,
                        hint=f"split the rows over several pl.at regions (at most {MAX_UNROLL * t.m} rows each), "
                             "e.g. a pl.range loop in the orchestration around the region")
    ok, bias = _bias(mm, loads, t, n_dim)
    if not ok:
        return None
    if (need := n_dim * _bias_bytes(mm)) > (room := caps.get(MemorySpace.Bias, 0)):
        raise UnsupportedFeatureError(
            f"matmul chain: this matmul_bias's [{m_dim}, {n_dim}] result exceeds L0C, and pypto computes it in blocks "
            f"of whole rows (ptoas 0.1.1 has no Acc->Mat move to assemble column blocks on the cube), whose [1, "
            f"{n_dim}] bias takes {need} B of the {room} B Bias table", s.span,
            hint="split the columns of the first matmul over several pl.at regions (or add the bias on the vector "
                 f"core): at most {room // _bias_bytes(mm)} columns per matmul_bias")
    stmts = _Builder(a, b, mm, t, s.span, bias).rows(cast[1], second[1], store[1])
    return _Rewrite(store[0], stmts, (s, cast[0], second[0]), (*a.defs, *b.defs, *(bias.defs if bias else ())))


def _next_use(rest: list[Stmt], op: str, first: Var, uses: Counter[Var]) -> tuple[Stmt, tuple[Var, Call]] | None:
    """The first ``x = op(first, ...)`` of ``rest`` (the statement, its Var and its call), when ``x`` is read once."""
    hit = next(((x, m) for x in rest if (m := assign_of(x, op)) is not None and m[1].args[0] is first), None)
    return hit if hit is not None and uses[hit[1][0]] == 2 else None


def _chain(c: Var, rest: list[Stmt], loads: dict[Var, Call], uses: Counter[Var]) -> _Chain | None:
    cast = _next_use(rest, "tile.cast", c, uses)
    second = _next_use(rest, "tile.matmul", cast[1][0], uses) if cast is not None else None
    if cast is None or second is None:
        return None
    e = matmul_operand(second[1][1].args[1], loads)
    store = _store_of(rest, second[1][0])
    return None if e is None or store is None else (cast, second, e, store)


def _chain_tiling(m_dim: int, n_dim: int, k_dim: int, p_dim: int, nbytes: tuple[int, int, int, int],
                  acc_bytes: tuple[int, int], caps: dict[MemorySpace, int]) -> Tiling | None:
    """Row blocks ``m`` (then the first matmul's ``k``) for a chain; the second matmul is one block. Past
    MAX_UNROLL blocks, wider blocks with a peeled last one may be taken."""
    ba, bb, bcb, be = nbytes
    left, right, acc = (caps[sp] // 2 for sp in (MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc))
    if n_dim * p_dim * be > right:
        return None
    # row blocks that divide M first; past MAX_UNROLL blocks, wider ones with a peeled last block
    tails = [m for m in range(m_dim // _FRACTAL * _FRACTAL, 0, -_FRACTAL)
             if m_dim % m and -(-m_dim // m) <= MAX_UNROLL]
    found = []
    for m in _extents(m_dim) + tails:
        if m * n_dim * acc_bytes[0] > acc or m * n_dim * bcb > left or m * p_dim * acc_bytes[1] > acc:
            continue
        if (t := _widest_k(m, n_dim, k_dim, (ba, bb), (left, right))) is not None:
            found.append(t)
    return next((t for t in found if -(-m_dim // t.m) <= MAX_UNROLL), found[0] if found else None)


__all__ = ["AutoTileMatmulL0", "choose_tiling"]
