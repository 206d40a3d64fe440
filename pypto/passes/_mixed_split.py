"""Stage analysis for ExpandMixedKernel: which top-level statements of a mixed kernel run on which core,
and in which order, when cube and vector exchange tiles through GM.

Each top-level statement gets a core (``cube``/``vector``; scalar-only statements get none and are
copied into every stage that needs them) and a stage. Stages alternate cores; a statement runs in the
first stage of its core that comes after everything it depends on (on the other core: strictly after).
Pure statements then sink to the latest stage of their core before their first consumer, so a bias
load sits with the vector ops that use it. Every tile used in a later stage than the one defining it
crosses through a GM temp tensor. :func:`splittable` first makes a kernel fit this model (small loops
mixing both cores are unrolled, a Mat window feeding the vector side is rebuilt there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import CUBE_SPACES, MemorySpace
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, Var, as_int
from pypto.ir.function import Function
from pypto.ir.ops.registry import make_call, op_of, written_index
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ReturnStmt, Stmt, WhileStmt, flatten, seq
from pypto.ir.types import TensorType, TileType, Type
from pypto.ir.visitor import substitute
from pypto.passes._loop_fission import fission, obstacle, tensor_roots, trip_count
from pypto.passes._matmul_carry import carry_matmuls
from pypto.passes._peel import drop_dead_creates
from pypto.passes._rewrite import assign_of, drop_unused, emit, expand_stmts
from pypto.passes._util import (
    base_name,
    bound_vars,
    calls_in,
    follow,
    free_vars,
    iter_stmts,
    map_blocks,
    scalar_dtype,
    tile_space,
)
from pypto.passes.unroll_loops import unrolled

CUBE, VECTOR = "cube", "vector"
OTHER = {CUBE: VECTOR, VECTOR: CUBE}


def core_of(call: Call, dest: Type | None = None) -> str | None:
    """``cube``, ``vector`` or None (no tile involved): the core that executes one op call.

    Ops producing a tile run where the result lives, i.e. in the space of the variable it is assigned
    to (``dest``; ``tile.add`` of an Acc tile into Vec is vector work that reads a cube value);
    other tile ops run where their tile operands live.
    """
    if not isinstance(call.op, str) or not call.op.startswith("tile."):
        return None
    op = op_of(call)
    if op is not None and op.core == CUBE:
        return CUBE
    result = dest if isinstance(dest, TileType) else call.result_type
    if isinstance(result, TileType):
        return CUBE if result.memory_space in CUBE_SPACES else VECTOR
    tiles = [a.type for a in call.args if isinstance(a.type, TileType)]
    if not tiles:
        return None
    return CUBE if all(t.memory_space in CUBE_SPACES for t in tiles) else VECTOR


def stmt_cores(stmt: Stmt) -> set[str]:
    dests = {id(s.value): s.var.var_type for s in iter_stmts(stmt) if isinstance(s, AssignStmt)}
    return {c for c in (core_of(call, dests.get(id(call))) for call in calls_in(stmt)) if c is not None}


@dataclass
class Item:
    """One top-level statement with its def/use and tensor read/write sets."""

    stmt: Stmt
    core: str | None
    defs: list[Var]
    uses: list[Var]
    reads: set[Var] = field(default_factory=set)
    writes: set[Var] = field(default_factory=set)


@dataclass
class Analysis:
    """Items, their stages and the tile values crossing between stages."""

    func: Function
    items: list[Item] = field(default_factory=list)
    roots: dict[Var, Var] = field(default_factory=dict)   # tensor version (store result) -> param
    stage: dict[int, int] = field(default_factory=dict)
    first_core: str = CUBE
    loop_temps: list[Var] = field(default_factory=list)  # GM temps of split loops, see __post_init__

    def __post_init__(self) -> None:
        self.items = [self._item(s) for s in self._top()]
        # tensors the kernel uses without taking them: the GM temps of split loops (_loop_fission)
        self.loop_temps = [v for v in free_vars(self.func.body)
                           if isinstance(v.type, TensorType) and v not in self.func.params]
        self._inherit_cores()
        self._assign_stages()

    def root(self, v: Var) -> Var:
        return follow(self.roots, v)

    def _top(self) -> list[Stmt]:
        """The kernel's top-level statements before its return (kept as ``ret``)."""
        body = flatten(self.func.body)
        self.ret = body[-1] if body and isinstance(body[-1], ReturnStmt) else None
        return body[:-1] if self.ret is not None else body

    def _core(self, s: Stmt) -> str | None:
        cores = stmt_cores(s)
        if len(cores) > 1:
            kind = {ForStmt: "for-loop", WhileStmt: "while-loop", IfStmt: "if/else"}.get(type(s), "statement")
            roots = tensor_roots(self.func.body)
            why = obstacle(s, stmt_cores, lambda v: follow(roots, v)) if isinstance(s, ForStmt) else None
            raise UnsupportedFeatureError(
                f"kernel '{self.func.name}': a {kind} that mixes cube ops (matmul, Mat/Left/Right/Acc tiles) with "
                f"vector ops cannot be split into AIC and AIV kernels" + (f" ({why})" if why else ""), s.span,
                hint="keep each loop/if on one core: do the cube work in one loop and the vector work in another")
        return next(iter(cores)) if cores else None

    def _item(self, s: Stmt) -> Item:
        """The item of ``s``; a tensor version it binds (a store's result) is noted with its root."""
        item = Item(s, self._core(s), bound_vars(s), free_vars(s))
        self.roots.update(tensor_roots(s))  # a loop's carried and returned versions, plain copies
        for call in calls_in(s):
            target = written_index(call)
            for i, a in enumerate(call.args):
                if isinstance(a, Var) and isinstance(a.type, TensorType):
                    (item.writes if i == target else item.reads).add(self.root(a))
            t = call.args[target] if target is not None else None
            if isinstance(t, Var) and isinstance(s, AssignStmt) and s.value is call:
                self.roots[s.var] = self.root(t)
        return item

    def deps(self, i: int) -> set[int]:
        """Earlier items that item ``i`` depends on (data, or the same tensor with a write involved)."""
        prod = {v: j for j, it in enumerate(self.items) for v in it.defs}
        it = self.items[i]
        out = {prod[v] for v in it.uses if v in prod}
        for j, other in enumerate(self.items[:i]):
            if (it.writes & (other.reads | other.writes)) or (it.reads & other.writes):
                out.add(j)
        return out

    def _inherit_cores(self) -> None:
        """Scalar statements computed from a core's values belong to that core."""
        for i, it in enumerate(self.items):
            if it.core is None:
                cores = {self.items[j].core for j in self.deps(i)} - {None}
                if len(cores) == 1:
                    it.core = cores.pop()
                elif cores:
                    raise UnsupportedFeatureError(
                        f"kernel '{self.func.name}': a scalar computed from both cube and vector values cannot be "
                        f"split into AIC and AIV kernels", it.stmt.span)

    def stage_core(self, k: int) -> str:
        return self.first_core if k % 2 == 0 else OTHER[self.first_core]

    def _assign_stages(self) -> None:
        def trial(first: str) -> tuple[str, dict[int, int]]:
            self.first_core = first
            return first, self._asap()

        # the first core with the fewest stages (cube on a tie)
        self.first_core, self.stage = min(map(trial, (CUBE, VECTOR)), key=lambda t: len(set(t[1].values())))
        self._sink()
        self.stage_cores: list[str] = []
        renumber: dict[int, int] = {}
        for k in sorted(set(self.stage.values())):
            if not self.stage_cores or self.stage_cores[-1] != self.stage_core(k):
                self.stage_cores.append(self.stage_core(k))
            renumber[k] = len(self.stage_cores) - 1
        self.stage = {i: renumber[k] for i, k in self.stage.items()}

    def _asap(self) -> dict[int, int]:
        stages: dict[int, int] = {}
        for i, it in enumerate(self.items):
            if it.core is None:
                continue
            req = max((stages[j] + (self.items[j].core != it.core) for j in self.deps(i) if j in stages), default=0)
            stages[i] = req if self.stage_core(req) == it.core else req + 1  # the cores alternate
        return stages

    def _sink(self) -> None:
        succs: dict[int, set[int]] = {i: set() for i in self.stage}
        for i in self.stage:
            for j in self.deps(i):
                if j in succs:
                    succs[j].add(i)
        for i in sorted(self.stage, reverse=True):
            it = self.items[i]
            if it.writes or not succs[i]:  # only pure statements sink
                continue
            limit = min(self.stage[j] - (self.items[j].core != it.core) for j in succs[i])
            k = limit
            while k > self.stage[i] and self.stage_core(k) != it.core:
                k -= 1
            self.stage[i] = max(k, self.stage[i])


def _vec_assemble(stmts: list[Stmt]) -> list[Stmt]:
    """``m = move(assemble(load(x, Mat), acc, off), Vec)`` -> ``m = assemble(load(x, Vec), move(acc, Vec), off)``.

    A Mat tile cannot cross from cube to vector in ptoas 0.1.1 (no Mat->GM store, no ``tinsert``), but
    when it is a GM window with an Acc block inserted, the vector side can build the same value
    itself: reload the window into Vec and insert the block, which crosses as an Acc tile (through a
    GM temp). The Mat load and Mat assemble are dropped when nothing else reads them.
    """
    defs = {s.var: s for s in stmts if isinstance(s, AssignStmt)}
    out: list[Stmt] = []
    for s in stmts:
        to_vec = assign_of(s, "tile.move")
        asm = assign_of(defs.get(to_vec[1].args[0]), "tile.assemble") if to_vec is not None else None
        tgt = assign_of(defs.get(asm[1].args[0]), "tile.load") if asm is not None else None
        if (to_vec is None or asm is None or tgt is None or to_vec[1].kwargs.get("target_memory") is not MemorySpace.Vec
                or tile_space(asm[0]) is not MemorySpace.Mat):
            out.append(s)
            continue
        span, window_load = s.span, tgt[1]
        load = make_call("tile.load", list(window_load.args), {**window_load.kwargs, "target_memory": MemorySpace.Vec},
                         span=window_load.span)
        window = emit(out, f"{base_name(tgt[0].name)}_vec", load, window_load.span)
        block = asm[1].args[1]
        if tile_space(block) is not MemorySpace.Vec:
            move = make_call("tile.move", [block], {"target_memory": MemorySpace.Vec}, span=span)
            block = emit(out, f"{base_name(block.name) if isinstance(block, Var) else 'block'}_vec", move, span)
        ins = make_call("tile.assemble", [window, block, asm[1].args[2]], span=asm[1].span)
        out.append(AssignStmt(to_vec[0], ins, span=span))
    if len(out) == len(stmts):
        return out
    return drop_unused(out, lambda s: tile_space(s.var) is MemorySpace.Mat)  # Mat tiles nothing reads any more


MAX_UNROLL = 16


def _unroll_mixed(s: Stmt) -> list[Stmt] | None:
    """A loop mixing cube and vector work, with a small constant trip count, is unrolled.

    The cube and vector halves of each iteration then become separate stages that exchange their
    tiles through GM, like straight-line code (a loop cannot be cut in two stage kernels here).
    """
    n = trip_count(s) if isinstance(s, ForStmt) and len(stmt_cores(s)) > 1 else None
    if n is None or n > MAX_UNROLL:
        return None
    assert isinstance(s, ForStmt)
    step, start, dtype = as_int(s.step) or 1, as_int(s.start), scalar_dtype(s.loop_var)
    return unrolled(s, (ConstInt(start + k * step, dtype) if start is not None else
                        BinaryExpr(BinOp.Add, s.start, ConstInt(k * step, dtype), dtype) for k in range(n)))


def _carried(f: Function) -> Function:
    """``f`` with its top-level loops adding a matmul into a carried vector tile carrying the matmul's
    accumulator instead (see :mod:`pypto.passes._matmul_carry`)."""
    stmts = flatten(f.body)
    defs = {s.var: s for s in stmts if isinstance(s, AssignStmt)}
    out: list[Stmt] = []
    renames: dict[Var, Expr] = {}
    inits: set[Var] = set()
    for s in stmts:
        s = substitute(s, renames) if renames else s
        done = carry_matmuls(s, defs, lambda x: len(stmt_cores(x)) > 1) if len(stmt_cores(s)) > 1 else None
        if done is None or not isinstance(s, ForStmt):
            out.append(s)
            continue
        out.extend(done[0])
        renames.update(done[1])
        inits.update(v for v in s.inits if isinstance(v, Var))
    if not inits:
        return f
    out = drop_unused(out, lambda s: s.var in inits)  # the zero fills the sums replaced
    return f.with_(body=drop_dead_creates(seq(out, span=f.body.span)))


def _fission_of(f: Function) -> Callable[[Stmt], list[Stmt] | None]:
    """Splits a mixed loop of ``f`` too long to unroll into a loop per core (see :mod:`pypto.passes._loop_fission`)."""
    roots = tensor_roots(f.body)
    return lambda s: fission(s, f.name, stmt_cores, lambda v: follow(roots, v), MAX_UNROLL)


def splittable(f: Function) -> Function:
    """``f`` with its matmul sums carried on the cube, its small mixed loops unrolled and its Mat windows built on
    the vector side (see above)."""
    f = _carried(f)
    body = expand_stmts(f.body, _fission_of(f))  # a perfect nest first, as a whole
    split = _fission_of(f.with_(body=body))  # then a loop whose small inner loops were unrolled
    body = expand_stmts(body, lambda s: _unroll_mixed(s) or split(s))
    body = map_blocks(body, _vec_assemble)
    return f if body is f.body else f.with_(body=body)
