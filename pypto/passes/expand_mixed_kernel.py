"""ExpandMixedKernel: InCore kernels become AIC (pure cube) or AIV (vector); none stay InCore.

A kernel mixing cube ops (matmul, Mat/Left/Right/Acc tiles) and vector ops (Vec tiles) is split into
one kernel per *stage* (see ``_mixed_split``): e.g. ``<f>_aic`` computing the matmul and ``<f>_aiv``
doing the epilogue. Cube and vector exchange tiles through GM temp tensors, as on a2a3 where every
C<->V transfer goes through a GM slot buffer (ptoas 0.1.1 has no tpush/tpop pipes): the producer
stores the tile (``tile.store`` from Acc or Vec) into a temp param, the consumer loads it (into Vec,
or into Mat for the cube). Every call of the mixed kernel in an orchestration becomes
``tensor.create`` of the temps followed by one call per stage.

Group representation: no Group function is made. With GM intermediates the stages are ordinary
tasks submitted one after another; the runtime's TensorMap orders them through the temps (the
producer writes a temp, the consumer reads it), which is exactly the sequencing a Group with
MixedKernels would need, without co-scheduling. The split is visible in the pass's dump.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from pypto.errors import UnsupportedFeatureError
from pypto.ir.callgraph import callee_first
from pypto.ir.dtypes import DataType
from pypto.ir.enums import FunctionType, MemorySpace, ParamDirection, TensorLayout
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, MakeTuple, TupleGetItem, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, Stmt, seq
from pypto.ir.types import Dim, ScalarType, TensorType, TileType, TupleType
from pypto.ir.visitor import substitute
from pypto.passes._barrier_split import SEGMENT, BarrierAnalysis, has_barrier
from pypto.passes._loop_fission import drop_noop_moves
from pypto.passes._mixed_split import CUBE, MAX_UNROLL, VECTOR, Analysis, splittable, stmt_cores
from pypto.passes._rewrite import (
    LAUNCH_ATTRS,
    call_function,
    create_tensor,
    emit,
    fresh_vars,
    ints,
    last_writes,
    program_call,
    splice_calls,
    store_tile,
)
from pypto.passes._util import (
    NameGen,
    base_name,
    calls_in,
    defined_vars,
    map_blocks,
    scalar_dtype,
    substitute_typed,
    used_vars,
)
from pypto.passes.base import Pass
from pypto.span import Span

__all__ = ["MAX_UNROLL", "ExpandMixedKernel"]

CORE_TYPE = {CUBE: FunctionType.AIC, VECTOR: FunctionType.AIV, SEGMENT: FunctionType.InCore}
LOAD_SPACE = {CUBE: MemorySpace.Mat, VECTOR: MemorySpace.Vec, SEGMENT: MemorySpace.Vec}
STORE_SPACES = frozenset({MemorySpace.Vec, MemorySpace.Acc})


@dataclass
class StageKernel:
    """A stage kernel; its arguments and results are params of the mixed kernel or crossing tiles (GM temps)."""

    func: Function
    args: list[Var]
    results: list[Var]


@dataclass
class _Splitter:
    """Builds the per-stage kernels of one mixed kernel."""

    an: Analysis
    blocks: int | Expr | None = None  # pl.spmd block count (an Expr: known at run time); one row band per block
    temps: dict[Var, Var] = field(default_factory=dict)  # crossing tile -> GM temp param (kernel side)
    _loaded: dict[Var, Expr] = field(default_factory=dict)  # incoming tile -> its load in this stage
    _blk: AssignStmt | None = None  # this stage's ``pipe_blk = tile.get_block_idx()`` (pl.spmd)

    @property
    def func(self) -> Function:
        return self.an.func

    def kernel_name(self, k: int) -> str:
        cores = self.an.stage_cores
        if cores[k] == SEGMENT:
            return f"{self.func.name}_seg{k}"
        suffix = "aic" if cores[k] == CUBE else "aiv"
        return f"{self.func.name}_{suffix}" if len(cores) == len(set(cores)) else f"{self.func.name}_{k}_{suffix}"

    def temp(self, v: Var) -> Var:
        if v not in self.temps:
            t = v.var_type
            assert isinstance(t, TileType)
            if not all(isinstance(d, int) for d in t.shape) or t.memory_space not in STORE_SPACES:
                raise UnsupportedFeatureError(
                    f"kernel '{self.func.name}': tile '{base_name(v.name)}' ({t.memory_space.value if t.memory_space else '?'}, "
                    f"shape {list(t.shape)}) must pass between cube and vector, but only statically shaped Vec/Acc "
                    f"tiles can go through GM", v.span)
            rows: Dim = t.shape[0] * (self.blocks if isinstance(self.blocks, int) else 1)
            if isinstance(self.blocks, Expr):  # each launch sizes it: rows * its block count (_CallRewriter)
                name = f"{self.func.name}_{base_name(v.name)}_rows{len(self.temps)}"  # one dynamic dim each
                rows = Var(name, ScalarType(DataType.INDEX), span=v.span)
            shape = (rows, *t.shape[1:])
            self.temps[v] = Var(f"{base_name(v.name)}_gm", TensorType(shape, t.dtype), span=v.span)
        return self.temps[v]

    def _band(self, tile: Var, span: Span) -> MakeTuple:
        """Offsets of this block's slot in a temp (``[block_idx * rows, 0]`` under pl.spmd, else zeros)."""
        shape = tile.var_type.shape
        if self.blocks is None:
            return ints((0,) * len(shape))
        if self._blk is None:
            call = make_call("tile.get_block_idx", [], span=span)
            self._blk = AssignStmt(Var("pipe_blk", call.result_type, span=span), call, span=span)
        idx = self._blk.var
        row = BinaryExpr(BinOp.Mul, idx, ConstInt(int(shape[0]), scalar_dtype(idx)), scalar_dtype(idx))
        return ints((row, *(0,) * (len(shape) - 1)))

    def crossing(self) -> dict[Var, tuple[int, set[int]]]:
        """Tile vars used outside their defining stage -> (defining stage, consuming stages)."""
        an = self.an
        where = {v: an.stage[i] for i, it in enumerate(an.items) if i in an.stage for v in it.defs}
        out: dict[Var, tuple[int, set[int]]] = {}
        for i, it in enumerate(an.items):
            for v in it.uses:
                if v not in where or i not in an.stage or an.stage[i] == where[v]:
                    continue
                if isinstance(v.var_type, TileType):
                    out.setdefault(v, (where[v], set()))[1].add(an.stage[i])
                elif not isinstance(v.var_type, TensorType):
                    raise UnsupportedFeatureError(
                        f"kernel '{self.func.name}': scalar '{base_name(v.name)}' computed on one core is used on the "
                        f"other; only tiles can pass between cube and vector", it.stmt.span)
        return out

    def build(self, k: int, cross: dict[Var, tuple[int, set[int]]]) -> StageKernel:
        an = self.an
        mine = [i for i in range(len(an.items)) if an.stage.get(i) == k]
        self._blk = None
        incoming = [v for v, (src, dst) in cross.items() if k in dst]
        outgoing = [v for v, (src, _) in cross.items() if src == k]
        loads = self._loads(k, incoming)
        body = _interleave(loads, self._with_scalars(mine), {v: self._store(v) for v in outgoing})
        body = [self._blk, *body] if self._blk is not None else body
        local = {v for s in body for v in defined_vars(s)}
        renames: dict[Var, Expr] = {v: an.root(v) for it in an.items for v in it.defs
                                    if isinstance(v.var_type, TensorType) and an.root(v) is not v and v not in local}
        body = [substitute(s, renames) for s in body]
        used = set(used_vars(body))
        params = [p for p in self.func.params if p in used]
        written = {w for i in mine for w in an.items[i].writes}
        # the GM temps of a split loop (_loop_fission): made by the loop that writes them, read by the other
        temps_in = [t for t in an.loop_temps if t in used and t not in written]
        temps_out = [t for t in an.loop_temps if t in used and t in written]
        results = [p for p in params if p in written and self._dir(p) is not ParamDirection.In] + outgoing + temps_out
        ret_vals = [self._expr(v) for v in results]
        body.append(ReturnStmt(tuple(ret_vals), span=self.func.span))
        args = [*incoming, *temps_in, *params, *outgoing, *temps_out]
        all_params = tuple(self._expr(v) for v in args)
        dirs = (ParamDirection.In,) * (len(incoming) + len(temps_in)) + tuple(self._dir(p) for p in params) \
            + (ParamDirection.Out,) * (len(outgoing) + len(temps_out))
        func = Function(self.kernel_name(k), all_params, dirs, tuple(v.type for v in ret_vals),
                        seq(body, span=self.func.span), CORE_TYPE[an.stage_cores[k]], attrs=dict(self.func.attrs),
                        span=self.func.span)
        return StageKernel(fresh_vars(func), args, results)

    def _expr(self, v: Var) -> Var:
        """A kernel param: the GM temp of a crossing tile, else the mixed kernel's param itself."""
        return self.temp(v) if isinstance(v.var_type, TileType) else v

    def _dir(self, p: Var) -> ParamDirection:
        return self.func.param_directions[self.func.params.index(p)]

    def _loads(self, k: int, incoming: list[Var]) -> list[Stmt]:
        """Loads of the incoming tiles; a ``tile.move`` of an incoming tile becomes the load itself."""
        space = LOAD_SPACE[self.an.stage_cores[k]]
        out: list[Stmt] = []
        self._loaded = {}
        for v in incoming:
            gm, shape = self.temp(v), ints(v.var_type.shape)
            load = make_call("tile.load", [gm, self._band(v, v.span), shape, shape], {"target_memory": space},
                             span=v.span)
            self._loaded[v] = emit(out, v.name, load, v.span)
        return out

    def _with_scalars(self, mine: list[int]) -> list[Stmt]:
        """This stage's statements plus the core-less (scalar) statements they need, in program order."""
        an = self.an
        free_items = {v: i for i, it in enumerate(an.items) if it.core is None for v in it.defs}
        keep = set(mine)
        todo = [v for i in mine for v in an.items[i].uses]
        while todo:
            v = todo.pop()
            j = free_items.get(v)
            if j is not None and j not in keep:
                keep.add(j)
                todo.extend(an.items[j].uses)
        renames: dict[Var, Expr] = dict(self._loaded)
        return drop_noop_moves([substitute_typed(an.items[i].stmt, renames) for i in sorted(keep)])

    def _store(self, v: Var) -> Stmt:
        return store_tile(v, self._band(v, v.span), self.temp(v))


def _interleave(loads: list[Stmt], stmts: list[Stmt], stores: dict[Var, Stmt]) -> list[Stmt]:
    """Each incoming tile is loaded right before its first use and each outgoing one stored right after
    its definition, so tiles that cross stages one after another can share a buffer; a tile written in
    place later (``pl.write(t, idx, v)``, which binds no new value) is stored after its last such write."""
    last = last_writes(stmts, set(stores))
    pending = list(loads)
    out: list[Stmt] = []
    for i, s in enumerate(stmts):
        uses = set(used_vars(s))
        out += [ld for ld in pending if ld.var in uses]
        pending = [ld for ld in pending if ld.var not in uses]
        out += [s, *(st for v, st in stores.items() if last.get(v) == i)]
    return pending + out + [st for v, st in stores.items() if v not in last]


def spmd_blocks(program: Program, name: str) -> int | Expr | None:
    """The block count every ``pl.spmd`` launch of kernel ``name`` uses (None: never launched so).

    The stage kernels of an SPMD mixed kernel run as one SPMD task each; block ``b`` of the producer
    stores its crossing tiles into row band ``b`` of the GM temps and block ``b`` of the consumer loads
    them back, so the temps hold one band per block. With a constant count they are sized at compile
    time; when a launch's count is known only at run time (an Expr is returned), every launch creates
    its temps with ``rows * <its block count>`` rows and the stage kernels take them with a run-time
    first dim.
    """
    counts: set[int] = set()
    for f in program.functions:
        for c in calls_in(f.body) if not f.is_incore else ():
            if program_call(c, (name,)) is None or "block_num" not in c.attrs:
                continue
            n = as_int(c.attrs["block_num"])
            if n is None:
                return c.attrs["block_num"]
            counts.add(n)
    if len(counts) > 1:
        raise UnsupportedFeatureError(
            f"the mixed cube+vector kernel '{name}' is launched with different pl.spmd block counts "
            f"{sorted(counts)}; its GM temporaries hold one row band per block, sized once",
            next(f for f in program.functions if f.name == name).span,
            hint="launch it with one block count, or copy the kernel for each count")
    return counts.pop() if counts else None


@dataclass
class _CallRewriter:
    """Rewrites the calls of split kernels in orchestration functions."""

    splits: dict[str, tuple[list[StageKernel], Analysis]]
    launch_attrs: tuple[str, ...]  # the launch attrs each stage call keeps
    names: NameGen = field(default_factory=lambda: NameGen("rv"))

    def block(self, stmts: list[Stmt]) -> list[Stmt]:
        return splice_calls(stmts, self.expand)[0]

    def expand(self, s: Stmt) -> tuple[list[Stmt], list[Expr]] | None:
        """A call of a split kernel: the temps' creation and the stage calls; the results it stands for."""
        found = program_call(s, self.splits)
        if found is None:
            return None
        call, name = found
        kernels, an = self.splits[name]
        span = call.span
        launch = {a: call.attrs[a] for a in self.launch_attrs if a in call.attrs}
        env: dict[Var, Expr] = dict(zip(an.func.params, call.args, strict=True))
        stmts: list[Stmt] = []
        tid = _task_id(call.result_type)  # ``with pl.at(...) as tid``: a dummy task joins the stages' tasks
        tids: list[Expr] = []
        for k in kernels:
            for src, param in zip(k.args, k.func.params, strict=True):
                if src in an.loop_temps and src not in env:  # the GM temp of a split loop
                    env[src], create = create_tensor(base_name(src.name), src.var_type, span, layout=TensorLayout.ND)
                    stmts.append(create)
                elif isinstance(src.var_type, TileType) and src not in env:  # a crossing tile: create its GM temp
                    t = param.var_type
                    if not isinstance(t.shape[0], int):  # one band of the tile's rows per block of this launch
                        t = _per_launch(t, src, call)
                    env[src], create = create_tensor(f"{base_name(src.name)}_gm", t, span, layout=TensorLayout.ND)
                    stmts.append(create)
            kcall = call_function(k.func, [env[a] for a in k.args], span, **launch)
            stmts.extend(self._bind(k, kcall, env, tid, tids))
        return stmts, [*self._results(an, env), *self._join(tids, stmts, span)]

    def _join(self, tids: list[Expr], stmts: list[Stmt], span: Span) -> list[Expr]:
        """The task id standing for every stage: the one stage's, else a ``system.task_dummy`` joining them."""
        if len(tids) < 2:
            return tids
        join = make_call("system.task_dummy", [MakeTuple(tuple(tids), span=span)], span=span)
        return [emit(stmts, self.names("tid"), join, span)]

    def _bind(self, k: StageKernel, kcall: Call, env: dict[Var, Expr], tid: ScalarType | None,
              tids: list[Expr]) -> list[Stmt]:
        """The stage call with its results bound in ``env``; with ``tid``, its task id is a last result
        item (appended to ``tids``)."""
        span, n = kcall.span, len(k.results)
        names = ["out" if tid is not None or r not in k.args else base_name(k.func.params[k.args.index(r)].name)
                 for r in k.results]
        if tid is None and n < 2:
            if not n:
                return [EvalStmt(kcall, span=span)]
            env[k.results[0]] = var = Var(self.names(names[0]), kcall.result_type, span=span)
            return [AssignStmt(var, kcall, span=span)]
        if tid is not None:
            rt = kcall.result_type
            types = () if not n else rt.types if isinstance(rt, TupleType) else (rt,)
            kcall = dataclasses.replace(kcall, result_type=TupleType((*types, tid)))
        tup = Var(self.names(f"{k.func.name}_out"), kcall.result_type, span=span)
        stmts: list[Stmt] = [AssignStmt(tup, kcall, span=span)]
        for i, (r, name) in enumerate(zip(k.results, names, strict=True)):
            env[r] = emit(stmts, self.names(name), TupleGetItem(tup, i, span=span), span)
        if tid is not None:
            tids.append(emit(stmts, self.names("tid"), TupleGetItem(tup, n, span=span), span))
        return stmts

    def _results(self, an: Analysis, env: dict[Var, Expr]) -> list[Expr]:
        """The mixed kernel's return values, as the split calls' results."""
        out: list[Expr] = []
        for v in an.ret.values if an.ret is not None else ():
            root = an.root(v) if isinstance(v, Var) else v
            if root not in an.func.params:
                raise UnsupportedFeatureError(f"kernel '{an.func.name}' returns a value that is not one of its "
                                              f"tensor params; a mixed kernel can only return its outputs", v.span)
            out.append(env[root])
        return out


def _task_id(t: object) -> ScalarType | None:
    """The trailing TASK_ID item of a call's tuple result (a launch bound ``as tid``), else None."""
    last = t.types[-1] if isinstance(t, TupleType) and t.types else None
    return last if isinstance(last, ScalarType) and last.dtype is DataType.TASK_ID else None


def _per_launch(t: TensorType, tile: Var, call: Call) -> TensorType:
    """A GM temp of a launch with a run-time block count: ``tile rows * block_num`` rows."""
    blocks = call.attrs["block_num"]
    dtype = scalar_dtype(blocks) if isinstance(blocks, Expr) else DataType.INDEX
    count = blocks if isinstance(blocks, Expr) else ConstInt(int(blocks), dtype)
    rows = ConstInt(int(tile.var_type.shape[0]), dtype)
    return TensorType((BinaryExpr(BinOp.Mul, count, rows, dtype), *t.shape[1:]), t.dtype)


def _segments(f: Function) -> Function | Analysis:
    """A kernel with ``pl.system.syncall`` barriers, cut into one InCore kernel per segment (_barrier_split)."""
    kernel = f.func_type in (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
    return BarrierAnalysis(f) if kernel and has_barrier(f) else f


def _stages(f: Function) -> Function | Analysis:
    """An InCore kernel typed AIC or AIV, or, when it mixes cube and vector work, analysed for its split."""
    if f.func_type is not FunctionType.InCore:
        return f
    f = splittable(f)
    cores = stmt_cores(f.body)
    if len(cores) > 1:
        return Analysis(f)
    return f.with_(func_type=FunctionType.AIC if cores == {CUBE} else FunctionType.AIV)


def _split(program: Program, analyse: Callable[[Function], Function | Analysis],
           launch_attrs: tuple[str, ...]) -> Program:
    """``program`` with each function ``analyse`` analyses replaced by its stage kernels, and their calls
    by calls of the stages (keeping ``launch_attrs``); the other functions as ``analyse`` gives them."""
    funcs: list[Function] = []
    splits: dict[str, tuple[list[StageKernel], Analysis]] = {}
    for f in program.functions:
        got = analyse(f)
        if isinstance(got, Function):
            funcs.append(got)
            continue
        sp = _Splitter(got, spmd_blocks(program, f.name))
        if sp.blocks is not None and got.loop_temps:
            raise UnsupportedFeatureError(
                f"kernel '{f.name}' is launched with pl.spmd and has a mixed cube+vector loop too long to unroll; "
                f"the GM buffer its split loops share has no slot per block", f.span,
                hint="launch it without pl.spmd, or do the loop's cube work and vector work in two loops yourself")
        cross = sp.crossing()
        splits[f.name] = [sp.build(k, cross) for k in range(len(got.stage_cores))], got
        funcs.extend(k.func for k in splits[f.name][0])
    if not splits:
        return program if all(a is b for a, b in zip(funcs, program.functions, strict=True)) \
            else program.with_functions(callee_first(funcs))
    rw = _CallRewriter(splits, launch_attrs)
    funcs = [f if f.is_incore else f.with_(body=map_blocks(f.body, rw.block)) for f in funcs]
    return program.with_functions(callee_first(funcs))


@dataclass(frozen=True)
class ExpandMixedKernel(Pass):
    """Type each InCore kernel AIC or AIV; split mixed ones into per-stage AIC/AIV kernels (see module doc)."""

    name = "ExpandMixedKernel"
    produces = frozenset({IRProperty.MixedKernelExpanded})

    def run(self, program: Program) -> Program:
        # the barriers are now the order between the segment tasks: their blocks need not start together
        # (sync_start asked co-residency for the barrier only), so a launch larger than the cores runs in waves
        program = _split(program, _segments, ("block_num",))
        return _split(program, _stages, LAUNCH_ATTRS)
