"""ConvertTensorToTileOps: inside InCore functions, tensor ops become tile.load / tile.<op> / tile.store."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from math import prod

from pypto.errors import InternalError, UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import AtomicType, MemorySpace
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, IterArg, MakeTuple, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.op_conversion import lookup_conversion
from pypto.ir.ops.common import (
    SPMD_IDS,
)
from pypto.ir.ops.registry import OpDef, get_op, make_call, op_of
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import (
    AssignStmt,
    ForStmt,
    IfStmt,
    ScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
    flatten,
    seq,
)
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import substitute
from pypto.passes import _convert_facts as facts
from pypto.passes import _expand_clone, _kernel_writes
from pypto.passes._acc_windows import carry_acc_windows
from pypto.passes._atomic_store import expand_atomic_stores
from pypto.passes._concat_sink import sink_concats
from pypto.passes._kernel_reads import write_values
from pypto.passes._merge_lists import merge_lists
from pypto.passes._mscatter import expand_mscatters
from pypto.passes._peel import drop_dead_creates, peel_first_iterations
from pypto.passes._random import expand_randoms
from pypto.passes._rewrite import emit, load_whole, match, shaped
from pypto.passes._util import base_name, calls_in, trailing_yield
from pypto.passes.base import Pass


@dataclass
class _Converter:
    tiles: dict[Var, Var] = field(default_factory=dict)
    windows: dict[Var, tuple[Var, Call]] = field(default_factory=dict)  # slice of a tile: (tile, the slice)
    renames: dict[Var, Var] = field(default_factory=dict)
    cube_operands: set[Var] = field(default_factory=set)  # tensors only ever read by a matmul
    gm_views: set[Var] = field(default_factory=set)  # slices/reshapes of the kernel's tensor parameters
    write_values: set[Var] = field(default_factory=set)  # read scalars only ever written (_kernel_writes)
    gm_windows: dict[Var, tuple[Expr, Expr]] = field(default_factory=dict)  # slice -> (tensor, its offsets)
    gather_only: set[Var] = field(default_factory=set)  # tensors only ever gathered from
    created: set[Var] = field(default_factory=set)  # pl.create_tensor / pl.full of the kernel
    accumulators: set[Var] = field(default_factory=set)  # creates a first-iteration choice starts (Acc tiles)

    def tile_of(self, e: Expr, space: MemorySpace, out: list[Stmt]) -> Expr:
        """The tile for operand ``e``: already a tile, a converted temp, or a fresh tile.load."""
        if not isinstance(e, Var) or not isinstance(e.var_type, TensorType):
            return e
        if e in self.windows:
            raise _window_error(self.windows[e][1])
        if e in self.tiles:
            return self.tiles[e]
        self.tiles[e] = emit(out, f"{base_name(e.name)}__tile", load_whole(e, space, e.span), e.span)
        return self.tiles[e]

    def block(self, body: Stmt) -> Stmt:
        """Convert a body in program order, outer statements first, so a carried tensor whose value
        became a tile is carried as that tile (its loop or if is retyped before its uses are seen)."""
        out: list[Stmt] = []
        for s in flatten(body):
            out.extend(self.structured(s))
        return seq(out, span=body.span)

    def structured(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, (ForStmt, WhileStmt)):
            return self.loop(s)
        if isinstance(s, IfStmt):
            return self.branch(s)
        if isinstance(s, ScopeStmt):
            return [dataclasses.replace(s, body=self.block(s.body))]
        if isinstance(s, AssignStmt) and isinstance(s.value, Var) and s.value in self.tiles:
            self.tiles[s.var] = self.tiles[s.value]  # ``mi = mi_new``: a second name of the same tile
            return []
        if isinstance(s, YieldStmt):
            values = tuple(self.tiles.get(v, v) if isinstance(v, Var) else v for v in s.values)
            return [dataclasses.replace(s, values=values)]
        return self.stmt(s)

    def loop(self, s: ForStmt | WhileStmt) -> list[Stmt]:
        """A tensor carried from a tile (``acc = pl.full(...)`` then ``acc = pl.add(acc, x)``) is carried as a tile."""
        iter_args, inits = [], []
        for ia, init in zip(s.iter_args, s.inits, strict=True):
            tile = self.tiles.get(init) if isinstance(init, Var) else None
            if tile is None or not isinstance(ia.var_type, TensorType):
                iter_args.append(ia)
                inits.append(init)
                continue
            new = IterArg(f"{base_name(ia.name)}__tile", tile.type, span=ia.span)
            self.tiles[ia] = new
            if init in self.created:  # window writes into the carried value assemble into it, as before the loop
                self.created.add(ia)
            iter_args.append(new)
            inits.append(tile)
        if isinstance(s, WhileStmt) and any(a is not b for a, b in zip(iter_args, s.iter_args, strict=True)):
            s = dataclasses.replace(s, cond=substitute(s.cond, self.tiles))
        body = self.block(s.body)
        return_vars = tuple(self._carry_result(rv, ia) for rv, ia in zip(s.return_vars, iter_args, strict=True))
        self.created.update(rv for rv, ia in zip(s.return_vars, s.iter_args, strict=True) if ia in self.created)
        return [dataclasses.replace(s, body=body, iter_args=tuple(iter_args), inits=tuple(inits),
                                    return_vars=return_vars)]

    def branch(self, s: IfStmt) -> list[Stmt]:
        """An if whose branches yield tiles for a tensor result yields a tile result."""
        then = self.block(s.then_body)
        other = self.block(s.else_body) if s.else_body is not None else None
        yielded = [trailing_yield(then), trailing_yield(other)]
        return_vars = []
        for i, rv in enumerate(s.return_vars):
            vals = [y.values[i] for y in yielded if y is not None and i < len(y.values)]
            tiles = len(vals) >= 2 and all(isinstance(v, Var) and isinstance(v.var_type, TileType) for v in vals)
            return_vars.append(self._carry_result(rv, vals[0]) if tiles else rv)
        return [dataclasses.replace(s, then_body=then, else_body=other, return_vars=tuple(return_vars))]

    def _carry_result(self, rv: Var, carried: Var) -> Var:
        if not isinstance(carried.var_type, TileType) or not isinstance(rv.var_type, TensorType):
            return rv
        new = Var(f"{base_name(rv.name)}__tile", carried.var_type, span=rv.span)
        self.tiles[rv] = new
        return new

    def stmt(self, s: Stmt) -> list[Stmt]:
        """The tile-level statements for one statement (a tensor op's rule, else the statement itself)."""
        value = match(s)
        op = op_of(value)
        if value is None or op is None or op.namespace != "tensor":
            return [s]
        user = lookup_conversion(value.op)
        if user is not None:
            return self.user_rule(s, value, user)
        rule = self.rule(op)
        if op.short == "transpose" and value.args and value.args[0] in self.tiles:
            rule = self.compute  # a computed tile: pto.ttrans (a GM tensor's transpose stays a view)
        if rule is None or (not isinstance(s, AssignStmt) and rule in (self.ci, self.create)):
            raise UnsupportedFeatureError(f"tensor op '{value.op}' inside an InCore kernel", value.span,
                                          hint="use the tile-level op (pl.tile.*) or move it to the orchestration")
        return rule(s, value)

    def user_rule(self, s: Stmt, value: Call, rule: object) -> list[Stmt]:
        """A rule registered with ``ir.register_op_conversion`` / ``@ir.op_conversion``."""
        out: list[Stmt] = []
        args = [self.tile_of(a, MemorySpace.Vec, out) for a in value.args]
        if isinstance(rule, str):
            result: Expr = make_call(rule, args, value.kwargs, span=value.span)
        else:
            got = rule(args, list(value.kwargs.items()), value.span)  # type: ignore[operator]
            stmts, result = got if isinstance(got, tuple) else ([], got)
            out.extend(stmts)
        if isinstance(s, AssignStmt):
            out.append(self.bind(s, result))
        return out

    def rule(self, op: OpDef) -> Callable[[Stmt, Call], list[Stmt]] | None:
        """The conversion of a tensor op: a rule of its own, else elementwise or cube compute."""
        rules = {"assemble": self.assemble, "slice": self.slice_, "ci": self.ci, "random": self.ci, "create": self.create,
                 "gather": self.gather, "dim": self.dim, "full": self.create, "read": self.read,
                 "concat": self.compute,  # stored block by block (pto_views); see _concat_sink
                 "write": lambda s, v: _kernel_writes.write(self, s, v),
                 "expand_clone": lambda s, v: _expand_clone.expand_clone(self.tiles, s, v),
                 **dict.fromkeys(SPMD_IDS, self.spmd_id)}
        return rules.get(op.short) or (self.compute if op.computes_on_tiles or op.core == "cube" else None)

    def compute(self, s: Stmt, value: Call) -> list[Stmt]:
        """Operands loaded into Vec (Mat for the cube), the tile op, its result a tile."""
        out: list[Stmt] = []
        space = MemorySpace.Mat if get_op(value.op).core == "cube" else MemorySpace.Vec
        args = [self.tile_of(a, space, out) for a in value.args]
        counts = _batch_counts(value) if get_op(value.op).short == "matmul" else None
        if counts is not None:  # a batch of matrices: FlattenTileNdTo2D issues one matmul each
            kwargs = {k: v for k, v in value.kwargs.items() if k != "c_matrix_nz"}
            kwargs.update(a_trans=bool(kwargs.get("a_trans")), b_trans=bool(kwargs.get("b_trans")),
                          lhs_batch=counts[0], rhs_batch=counts[1])  # every kwarg the parser fills in
            call = make_call("tile.batch_matmul", args, kwargs, span=value.span)
        else:
            kwargs = self._transposed_operands(value, args, out) if space is MemorySpace.Mat else value.kwargs
            if kwargs.get("init_cond") is not None:  # an operand of tile.matmul_acc
                args.append(kwargs["init_cond"])
            kwargs = {k: v for k, v in kwargs.items() if k != "init_cond"}
            call = make_call(f"tile.{get_op(value.op).short}", args, kwargs, span=value.span)
        if isinstance(s, AssignStmt):
            out.append(self.bind(s, call))
        return out

    def _transposed_operands(self, value: Call, args: list[Expr], out: list[Stmt]) -> dict:
        """``matmul(a, b, b_trans=True)``: ptoas 0.1.1 has no transposed matmul, so the operand becomes
        ``tile.transpose_view`` of its Mat load, which ResolveBackendOpLayouts turns into a load through
        the transposed GM view; the flag goes."""
        first = 1 if get_op(value.op).short.endswith("_acc") else 0
        kwargs = dict(value.kwargs)
        for flag, i in (("a_trans", first), ("b_trans", first + 1)):
            if not kwargs.get(flag) or i >= len(args) or not isinstance(args[i], Var):
                continue
            view = make_call("tile.transpose_view", [args[i]], span=value.span)
            args[i] = emit(out, f"{base_name(args[i].name)}__t", view, value.span)
            kwargs[flag] = False
        return kwargs

    def bind(self, s: AssignStmt, value: Expr) -> AssignStmt:
        """``<s.var>__tile = value``, the tile that stands for ``s.var`` from now on."""
        tile = Var(f"{base_name(s.var.name)}__tile", value.type, span=s.var.span)
        self.tiles[s.var] = tile
        return AssignStmt(tile, value, span=s.span)

    def read(self, s: Stmt, value: Call) -> list[Stmt]:
        if isinstance(s, AssignStmt) and s.var in self.write_values:
            return _kernel_writes.read_into_tile(self, s, value)
        return _no_scalar_read(s, value)

    def spmd_id(self, s: Stmt, value: Call) -> list[Stmt]:
        call = make_call(f"tile.{get_op(value.op).short}", [], span=value.span)
        return [dataclasses.replace(s, value=call) if isinstance(s, AssignStmt) else s]

    def dim(self, s: Stmt, value: Call) -> list[Stmt]:
        """``n = tensor.dim(t, axis)`` of a kernel tensor: the extent its type gives (a constant, or the
        dynamic dimension the kernel already reads from the tensor's shape)."""
        src, axis = self.tiles.get(value.args[0], value.args[0]), as_int(value.args[1])
        shape = getattr(src.type, "shape", None)
        if not isinstance(s, AssignStmt) or shape is None or axis is None or not -len(shape) <= axis < len(shape):
            raise UnsupportedFeatureError("tensor.dim inside a kernel needs a constant axis (the kernel reads "
                                          "each extent from its tensor's type)", value.span,
                                          hint="write the axis as an int literal, e.g. pl.tensor.dim(t, 0)")
        extent = shape[axis]  # a static one at the top level is already a constant (Simplify)
        expr = ConstInt(extent, DataType.INDEX, span=value.span) if isinstance(extent, int) else extent
        return [AssignStmt(s.var, expr, span=s.span)]

    def ci(self, s: Stmt, value: Call) -> list[Stmt]:
        assert isinstance(s, AssignStmt)
        op = f"tile.{get_op(value.op).short}"  # tensor.ci / tensor.random: the same op on a Vec tile
        return [self.bind(s, make_call(op, list(value.args), value.kwargs, span=value.span))]

    def assemble(self, s: Stmt, value: Call) -> list[Stmt]:
        copied = _kernel_writes.created_tile_assemble(self, s, value)  # t[:, :] or t[:, a:b] = v of a created tile
        if copied is not None:
            return copied
        out: list[Stmt] = []
        target, src, offsets = value.args
        tile = self.tile_of(src, MemorySpace.Vec, out)
        atomic = {"atomic": AtomicType.Add} if value.kwargs.get("atomic") == AtomicType.Add else {}
        store = make_call("tile.store", [tile, offsets, target], atomic, span=value.span)  # see _atomic_store
        name = s.var.name if isinstance(s, AssignStmt) else getattr(target, "name", "out")
        result = emit(out, f"{base_name(name)}__tile", store, s.span)
        if isinstance(s, AssignStmt):
            self.renames[s.var] = result  # later writes into the same tensor chain on the store result
        return out

    def slice_(self, s: Stmt, value: Call) -> list[Stmt]:
        """A window of a tensor parameter (or of a window of one) is a load from the parameter; a window
        of a computed tile (also of a reshaped load) that only mask-pattern gathers read is kept as a
        window (they read it in place); otherwise it is copied out with ``tile.slice`` (``pto.textract``)."""
        src, shape, offset = value.args[:3]
        if isinstance(src, Var) and src in self.gm_windows:
            src, offset = _compose(self.gm_windows[src], offset)
        elif isinstance(src, Var) and (src in self.tiles or src in self.windows) and src not in self.gm_views:
            if not isinstance(s, AssignStmt):
                return []
            if src in self.tiles and _whole(value, self.tiles[src]):
                return self._narrowed(s, self.tiles[src], value)
            out: list[Stmt] = []
            tile = self.tile_of(src, MemorySpace.Vec, out)
            if s.var in self.gather_only:
                self.windows[s.var] = (tile, value)
                return out
            return [*out, self.bind(s, make_call("tile.slice", [tile, *value.args[1:]], span=value.span))]
        valid = value.args[3] if len(value.args) > 3 else shape
        space = MemorySpace.Mat if isinstance(s, AssignStmt) and s.var in self.cube_operands else MemorySpace.Vec
        load = make_call("tile.load", [src, offset, shape, valid], {"target_memory": space}, span=value.span)
        if isinstance(s, AssignStmt):
            self.gm_windows[s.var] = (src, offset)
        return [self.bind(s, load)] if isinstance(s, AssignStmt) else []

    def _narrowed(self, s: AssignStmt, tile: Var, value: Call) -> list[Stmt]:
        """``t[0:R, 0:C]`` of a whole computed ``[R, C]`` tile is the tile; with ``valid_shape=[r, c]``
        it is ``tile.set_validshape(t, r, c)`` (the same bytes with a narrower valid region)."""
        valid = value.args[3] if len(value.args) > 3 else None
        if not isinstance(valid, MakeTuple) or ints_of(valid) == list(shaped(tile).shape):
            self.tiles[s.var] = tile
            return []
        narrowed = make_call("tile.set_validshape", [tile, *valid.elements], span=value.span)
        return [self.bind(s, narrowed)]

    def gather(self, s: Stmt, value: Call) -> list[Stmt]:
        """A mask-pattern gather; from ``t[:, 0:n]`` of a computed tile ``t`` it reads the first ``n``
        columns of ``t`` (ptoas 0.1.1 has no tile sub-window; pto.tgather indexes ``t`` directly)."""
        src = value.args[0]
        if value.kwargs.get("cmp_mode") is not None:
            raise UnsupportedFeatureError(
                "pl.tensor.gather(..., kvalue=, cmp_mode=, out_cols=) (the compare form, tile.gather_compare) is "
                "not supported with ptoas 0.1.1: its pto.tgather has no compare form and its pto.tcmp is "
                "miscompiled, so no match mask can be built on chip (nor does a later ptoas lower it reliably yet: "
                "upstream skips its compare-form tests pending a PTOAS fix)", value.span,
                hint="find the matching columns on the host (torch.nonzero(src == k)) and pass them in, or "
                     "gather by index with pl.gather(src, dim=-1, index=...)")
        if value.kwargs.get("dim") is not None:
            return self._gather_dim(s, value)
        if not (isinstance(src, Var) and src in self.windows):
            return self.compute(s, value)
        tile, window = self.windows[src]
        offsets, shape = ints_of(window.args[2]), ints_of(window.args[1])
        rows = shaped(tile).shape[0]
        if offsets != [0, 0] or shape is None or shape[0] != rows:
            raise _window_error(window)
        call = make_call("tile.gather", [tile], {**value.kwargs, "src_cols": shape[1]}, span=value.span)
        return [self.bind(s, call)] if isinstance(s, AssignStmt) else []

    def _gather_dim(self, s: Stmt, value: Call) -> list[Stmt]:
        """``gather(src, index, dim=d)``: the tile op gets the N-D shapes (FlattenTileNdTo2D makes the tiles
        2-D; pypto.codegen.pto_gather computes flat positions from them); from a column window
        ``t[:, a:b]`` of a computed tile it reads ``t`` from column ``a`` on."""
        src, index = value.args[0], value.args[1]
        kw = {**value.kwargs, "dim": value.kwargs["dim"] % shaped(src).rank,
              "src_shape": tuple(as_int(n) for n in shaped(src).shape),
              "index_shape": tuple(as_int(n) for n in shaped(index).shape)}
        if isinstance(src, Var) and src in self.windows:
            tile, window = self.windows[src]
            offsets = ints_of(window.args[2])
            if offsets is None or len(offsets) != 2 or offsets[0] != 0:
                raise _window_error(window)
            out: list[Stmt] = []
            call = make_call("tile.gather", [tile, self.tile_of(index, MemorySpace.Vec, out)],
                             {**kw, "src_col0": offsets[1]}, span=value.span)
            return [*out, self.bind(s, call)] if isinstance(s, AssignStmt) else out
        return self.compute(s, make_call("tensor.gather", list(value.args), kw, span=value.span))

    def create(self, s: Stmt, value: Call) -> list[Stmt]:
        assert isinstance(s, AssignStmt)
        short = get_op(value.op).short
        kw = {"dtype": value.kwargs.get("dtype")}
        if short == "create":
            kw["target_memory"] = MemorySpace.Acc if s.var in self.accumulators else MemorySpace.Vec
        self.created.add(s.var)
        return [self.bind(s, make_call(f"tile.{short}", list(value.args), kw, span=value.span))]


def _batch_counts(value: Call) -> tuple[int, int] | None:
    """How many matrices each operand of an N-D ``tensor.matmul`` holds, when the result is a batch of
    more than one; None for a single matrix. Batches other than equal counts or 1 are rejected."""
    def count(t: object) -> int | None:
        dims = getattr(t, "shape", ())[:-2]
        return prod(dims) if all(isinstance(d, int) for d in dims) else None

    out, na, nb = count(value.type), count(value.args[0].type), count(value.args[1].type)
    if out in (None, 1):
        return None
    if na is None or nb is None or out != max(na, nb) or 1 < min(na, nb) < max(na, nb):
        raise UnsupportedFeatureError(
            f"tensor.matmul of batches {value.args[0].type} and {value.args[1].type}: pypto issues one matmul per "
            "matrix (ptoas 0.1.1 has no batched matmul) and needs static batch dims, equal or 1", value.span,
            hint="give both operands the same static batch dims, or loop over the batch with pl.range")
    return na, nb


def ints_of(e: Expr) -> list[int] | None:
    """The constant elements of a list operand (None when one is not a constant)."""
    vals = [as_int(x) for x in getattr(e, "elements", ())]
    return None if any(v is None for v in vals) else vals  # type: ignore[return-value]


def _whole(window: Call, tile: Var) -> bool:
    """A slice at offset 0 whose shape is the whole (static, 2-D) tile."""
    full = shaped(tile).shape
    return (len(full) == 2 and ints_of(window.args[2]) == [0, 0]
            and ints_of(window.args[1]) == list(full))


def _window_error(window: Call) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(
        "a window of a tile computed in this kernel is only supported as the source of a mask-pattern "
        "pl.gather over its leading columns (t[:, 0:n] of all rows): ptoas 0.1.1 has no tile sub-window op",
        window.span, hint="store the tile (pl.assemble into a GM tensor) and load the window from there")


def _no_scalar_read(s: Stmt, value: Call) -> list[Stmt]:
    raise UnsupportedFeatureError(
        "scalar read of a tensor inside a kernel: ptoas 0.1.1 has no scalar load from GM (pypto moves a "
        "read at the top of a pl.at region, at indices known before it, into the orchestration, and a "
        "kernel made of one loop over the tensors it stores into, with its reads at the top of the loop "
        "body, becomes an orchestration loop of kernel tasks; this read is in neither place)", value.span,
        hint="read it in the orchestration (or at the top of the pl.at region) and pass it to the kernel "
             "as a pl.Scalar argument")


def _compose(window: tuple[Expr, Expr], offset: Expr) -> tuple[Expr, Expr]:
    """A window at ``offset`` of the window ``(tensor, base)``: the same bytes as a window of ``tensor``."""
    tensor, a = window
    if not (isinstance(a, MakeTuple) and isinstance(offset, MakeTuple) and len(a.elements) == len(offset.elements)):
        raise InternalError(f"cannot compose window offsets {a!r} and {offset!r}")
    return tensor, MakeTuple(tuple(y if as_int(x) == 0 else x if as_int(y) == 0 else
                                   BinaryExpr(BinOp.Add, x, y, DataType.INDEX, span=y.span)
                                   for x, y in zip(a.elements, offset.elements, strict=True)), span=offset.span)


@dataclass(frozen=True)
class ConvertTensorToTileOps(Pass):
    """Tensor-level compute in kernels becomes explicit loads, tile compute and stores.

    A tensor a loop or if carries from a tile is carried as that tile; a loop that chooses on its first
    iteration is peeled first (see :mod:`pypto.passes._peel`), unless the choice computes on the cube
    (``if k == 0: acc = matmul else: acc = matmul_acc(acc)``): that one PeelFirstIterations peels after
    AutoTileMatmulL0; a ``matmul_acc`` into a window of an Acc tile carries a
    window-sized accumulator instead (see :mod:`pypto.passes._acc_windows`). Atomic-add stores (``pl.store`` or ``pl.assemble``
    with ``atomic=pl.AtomicType.Add``) become read-modify-writes (see :mod:`pypto.passes._atomic_store`)."""

    name = "ConvertTensorToTileOps"
    produces = frozenset({IRProperty.IncoreTileOps})

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore:
            return func
        return expand_atomic_stores(expand_randoms(expand_mscatters(self._convert(merge_lists(func)))), program)

    def _convert(self, func: Function) -> Function:
        func = carry_acc_windows(func)
        func_body = func.body
        if not any(isinstance(c.op, str) and c.op.startswith("tensor.") for c in calls_in(func.body)):
            return func
        peeled = peel_first_iterations(func, cube=False)
        func = sink_concats(facts.drop_full_validshapes(peeled))
        conv = _Converter(cube_operands=facts.cube_only_operands(func), gm_views=facts.gm_views(func),
                          write_values=write_values(func.body), gather_only=facts.gather_only(func),
                          accumulators=facts.first_iteration_accumulators(func))
        body = conv.block(func.body)
        if peeled.body is not func_body:  # a peeled choice's uninitialised create is dead now
            body = drop_dead_creates(body)
        return dataclasses.replace(func, body=substitute(body, conv.renames) if conv.renames else body)
