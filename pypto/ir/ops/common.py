"""Op families shared by the ``tensor.*`` and ``tile.*`` namespaces, registered once per namespace."""

from __future__ import annotations

import dataclasses
from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace, TensorLayout
from pypto.ir.expr import BinOp, Expr, MakeTuple
from pypto.ir.ops.bounds import check_window
from pypto.ir.ops.infer import (
    KIND_NAME,
    batch_dims,
    dims,
    like,
    matrix_dims,
    narrowed_like,
    require_2d,
    same_dtype,
    same_shape,
    shaped,
    tile_shape,
    valid_shape,
)
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import ScalarType, ShapedType, TensorType, TensorView, TileType, Type
from pypto.span import Span

BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "and_", "or_", "xor", "rem", "shl", "shr")
SCALAR = ("adds", "subs", "muls", "divs", "maximums", "minimums", "ands", "ors", "rems", "shls", "shrs")
UNARY = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "recip", "relu", "not_", "sin", "cos")
ROW_REDUCE = ("row_sum", "row_max", "row_min", "row_prod")
COL_REDUCE = ("col_sum", "col_max", "col_min", "col_prod")
ARG_REDUCE = ("row_argmax", "row_argmin", "col_argmax", "col_argmin")  # INT32 indices of the extremum
ROW_EXPAND = ("row_expand", "row_expand_add", "row_expand_sub", "row_expand_mul", "row_expand_div",
              "row_expand_max", "row_expand_min", "row_expand_expdif")
COL_EXPAND = ("col_expand", "col_expand_add", "col_expand_sub", "col_expand_mul", "col_expand_div",
              "col_expand_max", "col_expand_min", "col_expand_expdif")

# scalar form of each binary op, used by unified dispatch when the rhs is a number/Scalar
SCALAR_FORM = {"add": "adds", "sub": "subs", "mul": "muls", "div": "divs", "maximum": "maximums",
               "minimum": "minimums", "and_": "ands", "or_": "ors", "rem": "rems", "shl": "shls",
               "shr": "shrs", "fmod": "fmods"}

# the elementwise op a scalar binary operator becomes on tiles (``x + y`` -> ``add``; its scalar form is
# SCALAR_FORM's)
BINOP_FORM = {BinOp.Add: "add", BinOp.Sub: "sub", BinOp.Mul: "mul", BinOp.FloatDiv: "div", BinOp.Max: "maximum",
              BinOp.Min: "minimum"}

# the row-broadcast form of a tile-scalar op: the scalar as an [M, 1] tile (``muls(x, s)`` is
# ``row_expand_mul(x, col)`` with every row of ``col`` holding ``s``)
ROW_EXPAND_FORM = {"adds": "row_expand_add", "subs": "row_expand_sub", "muls": "row_expand_mul",
                   "divs": "row_expand_div", "maximums": "row_expand_max", "minimums": "row_expand_min"}

_BOOL_RESULT: frozenset[str] = frozenset()

# ops whose integer results have the same bits whether the operands are read signed or unsigned
# (OpDef.signless) among the families above: wrapping add/sub/mul (and their sums and products along rows or
# columns), bitwise ops, left shifts, broadcasts
SIGNLESS = frozenset({"add", "sub", "mul", "and_", "or_", "xor", "shl", "adds", "subs", "muls", "ands", "ors",
                      "shls", "neg", "not_", "row_expand", "col_expand", "row_expand_add", "row_expand_sub",
                      "row_expand_mul", "col_expand_add", "col_expand_sub", "col_expand_mul",
                      "row_sum", "col_sum", "row_prod", "col_prod"})

# Upstream's ``high_precision=`` selects a more precise device algorithm for these ops. ptoas 0.1.1 has
# one mode per instruction, and the simulators compute them in IEEE arithmetic, at least as precise as
# either mode: the flag is kept in the IR (printed, parsed back) and the code is the same.
PRECISION_OPS = frozenset({"div", "log", "recip", "rsqrt"})
_PRECISION = {"high_precision": False}

# Tile ops whose upstream signature takes an optional PTOAS scratch tile (``tmp=``). The rewrites pypto
# emits for ptoas 0.1.1 allocate their own scratch, so the operand is type-checked and otherwise unused.
SCRATCH_OPS = frozenset({"rsqrt", "row_expand_add"})


def _args(ns: str, op: str, args: tuple[str, ...]) -> tuple[str, ...]:
    return (*args, "tmp?") if ns == "tile" and op in SCRATCH_OPS else args


def _check_scratch(name: str, args: list[Expr], count: int, span: Span) -> None:
    """The optional trailing ``tmp`` operand, when given, is a tile."""
    if len(args) > count and not isinstance(args[count].type, TileType):
        raise UserError(f"{name}: the scratch operand 'tmp' must be a tile, got {args[count].type}", span,
                        hint="create it with pl.tile.create(shape, dtype=..., target_memory=pl.Mem.Vec)")


def kind_name(kind: type) -> str:
    return KIND_NAME.get(kind, "operand").lower()


def _binary(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "lhs", span, kind)
        b = shaped(args[1], name, "rhs", span, kind)
        same_shape(name, a, b, span)
        same_dtype(name, a, b, span)
        _integer_only(name, a, span)
        return narrowed_like(a, b)
    return infer


_BITWISE = ("and_", "or_", "xor", "shl", "shr", "not_", "ands", "ors", "shls", "shrs")


def _integer_only(name: str, a: ShapedType, span: Span) -> None:
    """Bitwise ops and shifts act on integer bits (tand/tor/txor/tshl/tshr/tnot take integer tiles only)."""
    if name.split(".", 1)[1] in _BITWISE and not a.dtype.is_int:
        raise UserError(f"{name}: needs an integer operand, got {a.dtype.value}", span,
                        hint="pl.cast(x, pl.INT32) first")


def _scalar(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "lhs", span, kind)
        if not isinstance(args[1].type, ScalarType):
            raise UserError(f"{name}: operand 'rhs' must be a scalar, got {args[1].type}", span)
        _integer_only(name, a, span)
        return narrowed_like(a)
    return infer


def _unary(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "x", span, kind)
        _check_scratch(name, args, 1, span)
        if name.endswith(("exp", "log", "sqrt", "rsqrt", "recip", "sin", "cos")) and not a.dtype.is_float:
            raise UserError(f"{name}: needs a floating-point operand, got {a.dtype.value}", span,
                            hint="pl.cast(x, pl.FP32) first")
        _integer_only(name, a, span)
        return narrowed_like(a)
    return infer


def _reduce(name: str, kind: type, axis: int):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "x", span, kind)
        if a.rank > 2 and (axis == 1 or all(d == 1 for d in a.shape[:-2])):
            lead = tuple(a.shape[:-2])  # an N-D row reduction reduces the last axis of every row
            rows, cols = a.shape[-2], a.shape[-1]
        else:
            lead = ()
            rows, cols = require_2d(name, a, span)
        if len(args) > 1 and isinstance(args[1].type, ShapedType):
            tmp = args[1].type
            if tmp.dtype is not a.dtype:
                raise UserError(f"{name}: scratch tile dtype {tmp.dtype.value} does not match the operand's "
                                f"{a.dtype.value}", span, hint=f"create the scratch tile with dtype=pl.{a.dtype.value}")
        return like(a, (*lead, rows, 1) if axis == 1 else (*lead, 1, cols))
    return infer


def _arg_reduce(name: str, kind: type, axis: int):
    """[M, N] -> [M, 1] (row) or [1, N] (col) INT32 indices; the first index wins a tie."""
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = _reduce(name, kind, axis)(args, kw, span)
        if a.dtype is DataType.BOOL:
            raise UserError(f"{name}: needs a numeric operand, got BOOL", span, hint="pl.cast(x, pl.FP32) first")
        return like(a, dtype=DataType.INT32)  # type: ignore[arg-type]
    return infer


def _expand(name: str, kind: type, axis: int):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "lhs", span, kind)
        b = shaped(args[1], name, "rhs", span, kind)
        _check_scratch(name, args, 2, span)
        if a.rank > 2 or b.rank > 2:  # N-D operands broadcast as their row-major 2-D flattening
            rows, cols = tile_shape(a.shape) if len(tile_shape(a.shape)) == 2 else require_2d(name, a, span)
            want = (rows, 1) if axis == 1 else (1, cols)
            same_shape(name, TileType(want, b.dtype), TileType(tile_shape(b.shape), b.dtype), span)
            same_dtype(name, a, b, span)
            return like(a)
        rows, cols = require_2d(name, a, span)
        want = (rows, 1) if axis == 1 else (1, cols)
        if name == "tile.row_expand_add" and b.rank == 2 and 32 % b.dtype.nbytes == 0:
            if tuple(b.shape) == (rows, 32 // b.dtype.nbytes) and b.shape[1] != 1:
                want = tuple(b.shape)  # a row-major packed 32-byte row vector: its lanes repeat across the row
        same_shape(name, like(b, want), b, span)
        same_dtype(name, a, b, span)
        return like(a)
    return infer


# Rounding modes of a cast; upstream's integer modes 0-6 index the first seven.
ROUND_MODES = ("none", "rint", "round", "floor", "ceil", "trunc", "odd", "cast_rint")


def round_mode(mode: object) -> str | None:
    """The name of a cast's rounding mode (given by name or upstream's int code); None if it names none."""
    if isinstance(mode, bool):
        return None
    if isinstance(mode, int):
        return ROUND_MODES[mode] if 0 <= mode < 7 else None
    text = str(getattr(mode, "value", mode)).lower()
    return text if text in ROUND_MODES else None


def _cast(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "x", span, kind)
        target = kw.get("target_type")
        if not isinstance(target, DataType):
            raise UserError(f"{name}: target_type must be a dtype such as pl.FP16", span)
        if round_mode(kw.get("mode", "round")) is None:
            raise UserError(f"{name}: unknown rounding mode {kw.get('mode')!r}", span,
                            hint=f"one of {', '.join(repr(m) for m in ROUND_MODES)} (or 0-6)")
        return like(a, dtype=target)
    return infer


def _matmul(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "lhs", span, kind)
        b = shaped(args[1], name, "rhs", span, kind)
        if kind is TensorType and a.rank >= 2 and b.rank >= 2:  # N-D tensors: a batch of matrices
            (m, k1), (k2, n), batch = a.shape[-2:], b.shape[-2:], batch_dims(name, a, b, span)
        else:  # tiles are 2-D (an N-D tile is flattened as it is made)
            (m, k1), (k2, n), batch = matrix_dims(name, a, span), matrix_dims(name, b, span), a.shape[:-2]
        if kw.get("a_trans"):
            m, k1 = k1, m
        if kw.get("b_trans"):
            k2, n = n, k2
        same_shape(name, like(a, (k1,)), like(b, (k2,)), span)
        same_dtype(name, a, b, span)
        out = kw.get("out_dtype") or (DataType.FP32 if a.dtype in (DataType.FP16, DataType.BF16, DataType.FP32)
                                      else DataType.INT32)
        return like(a, (*batch, m, n), dtype=out, space=None)
    return infer


def _matmul_acc(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        acc = shaped(args[0], name, "acc", span, kind)
        if len(args) > 3 and not isinstance(args[3].type, ScalarType):
            raise UserError(f"{name}: init_cond must be a boolean scalar such as (k == 0), got {args[3].type}", span)
        prod = _matmul(name, kind)(args[1:3], kw, span)
        assert isinstance(prod, ShapedType)
        same_shape(name, acc, prod, span)
        return like(acc)
    return infer


def _slice(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "x", span, kind)
        shape = dims(args[1], name, "shape", span)
        off = dims(args[2], name, "offset", span)
        if len(shape) != a.rank or len(off) != a.rank:
            raise UserError(f"{name}: shape/offset rank must match operand rank {a.rank}", span)
        check_window(name, a.shape, off, shape, span, what=kind_name(kind))
        return like(a, shape)
    return infer


def _adds_f32_into_float(kw: dict[str, Any], src: Any, tgt: Any) -> bool:
    """An atomic-add assemble of an f32 value (a matmul accumulator) into an f16/bf16/f32 target: the value
    is rounded to the target dtype, then added (upstream's fix-pipe conversion before the atomic add)."""
    return (int(kw.get("atomic") or 0) == 1 and src.dtype is DataType.FP32
            and tgt.dtype in (DataType.FP16, DataType.BF16, DataType.FP32))


def _assemble(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        tgt = shaped(args[0], name, "target", span, kind)
        src = shaped(args[1], name, "source", span)
        if src.rank > tgt.rank:
            raise UserError(f"{name}: source rank {src.rank} > target rank {tgt.rank}", span)
        if not _adds_f32_into_float(kw, src, tgt):
            same_dtype(name, tgt, src, span)
        off = dims(args[2], name, "offset", span) if isinstance(args[2], MakeTuple) else ()
        # a lower-rank source fills the last dims; a narrowed tensor (set_validshape) writes its valid region
        window = (1,) * (tgt.rank - src.rank) + tuple(valid_shape(src))
        if len(off) == tgt.rank:
            check_window(name, tgt.shape, off, window, span, what=f"target {kind_name(kind)}")
        return like(tgt)
    return infer


def _concat(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "src0", span, kind)
        b = shaped(args[1], name, "src1", span, kind)
        r1, c1 = require_2d(name, a, span)
        r2, c2 = require_2d(name, b, span)
        same_dtype(name, a, b, span)
        cols = c1 + c2 if isinstance(c1, int) and isinstance(c2, int) else c1
        return like(a, (r1, cols))
    return infer


def _read(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "src", span, kind)
        return ScalarType(a.dtype)
    return infer


def _same_as_first(name: str, kind: type, what: str = "x"):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        return like(shaped(args[0], name, what, span, kind))
    return infer


def _reshape(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "x", span, kind)
        return like(a, dims(args[1], name, "shape", span))
    return infer


def _axis(name: str, arg: Expr, what: str, rank: int, span: Span) -> int:
    """A constant axis in ``[0, rank)`` (the runtime's view swap takes unsigned axes)."""
    value = getattr(arg, "value", None)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < rank:
        shown = value if isinstance(value, int) else arg
        raise UserError(f"{name}: {what} must be a constant axis in [0, {rank}) for a rank-{rank} operand, "
                        f"got {shown}", span, hint=f"pass one of 0..{rank - 1}")
    return value


def _flattened_axes(name: str, axes: list[Expr], rank: int, span: Span) -> None:
    """A tile axis past a 2-D tile's last: the axis of an N-D tile, which pypto flattens as it is made."""
    values = [getattr(a, "value", None) for a in axes]
    if rank == 2 and any(isinstance(v, int) and not isinstance(v, bool) and v >= rank for v in values):
        raise UserError(f"{name}: axes {values} of an N-D tile: pypto's tiles are 2-D (an N-D tile is flattened to "
                        "[product of the leading dims, last dim] as it is made), so a transpose of an N-D tile's "
                        "axes is not supported", span,
                        hint="transpose each matrix: for b in pl.range(B): t = pl.load(x, [b, 0, 0], [1, R, C]); "
                             "out = pl.store(pl.transpose(t, axis1=0, axis2=1), [b, 0, 0], out)")


def _transpose(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "x", span, kind)
        shape = list(a.shape)
        if kind is TileType:
            _flattened_axes(name, args[1:3], len(shape), span)
        i, j = (_axis(name, arg, what, len(shape), span) for arg, what in zip(args[1:3], ("axis1", "axis2"), strict=True))
        shape[i], shape[j] = shape[j], shape[i]
        out = like(a, tuple(shape))
        if isinstance(a, TensorType) and i != j:
            return transposed_view(a, out, i, j)  # type: ignore[arg-type]
        return out
    return infer


def transposed_view(a: TensorType, out: TensorType, i: int, j: int) -> TensorType:
    """A transposed tensor keeps the source's memory: its strides are the source strides swapped (DN
    when the last axis no longer has stride 1). Rank-2 or static shapes only; otherwise no view."""
    strides = a.view.stride if a.view is not None and a.view.stride is not None else _dense_strides(a.shape)
    if strides is None:
        return out
    st = list(strides)
    st[i], st[j] = st[j], st[i]
    layout = TensorLayout.ND if st[-1] == 1 else TensorLayout.DN
    return dataclasses.replace(out, view=TensorView(stride=tuple(st), layout=layout))


def _dense_strides(shape: tuple) -> tuple | None:
    if len(shape) == 2:
        return (shape[1], 1)
    if not all(isinstance(d, int) for d in shape):
        return None
    st, acc = [], 1
    for d in reversed(shape):
        st.append(acc)
        acc *= d
    return tuple(reversed(st))


SPMD_IDS = ("get_block_idx", "get_block_num", "get_subblock_idx")


def _spmd_id(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    return ScalarType(DataType.INDEX)


def register_common(ns: str) -> None:
    """Register the shared families under namespace ``ns`` (``tensor`` or ``tile``)."""
    kind = TensorType if ns == "tensor" else TileType
    tile = ns == "tile"
    acc = MemorySpace.Acc if tile else None
    for op in BINARY:
        register(OpDef(f"{ns}.{op}", ("lhs", "rhs"), _binary(f"{ns}.{op}", kind), category="binary",
                       kwargs=dict(_PRECISION) if op in PRECISION_OPS else {}, signless=op in SIGNLESS))
    for op in SCALAR:
        register(OpDef(f"{ns}.{op}", ("lhs", "rhs"), _scalar(f"{ns}.{op}", kind), category="scalar",
                       signless=op in SIGNLESS))
    for op in UNARY:
        register(OpDef(f"{ns}.{op}", _args(ns, op, ("x",)), _unary(f"{ns}.{op}", kind), category="unary",
                       in_place=not (tile and op == "recip"), kwargs=dict(_PRECISION) if op in PRECISION_OPS else {},
                       signless=op in SIGNLESS))
    for op in ROW_REDUCE:
        register(OpDef(f"{ns}.{op}", ("x", "tmp_tile?"), _reduce(f"{ns}.{op}", kind, 1), category="reduce",
                       in_place=not tile, signless=op in SIGNLESS))
    for op in COL_REDUCE:
        register(OpDef(f"{ns}.{op}", ("x", "tmp_tile?"), _reduce(f"{ns}.{op}", kind, 0), category="reduce",
                       in_place=not tile, signless=op in SIGNLESS))
    for op in ARG_REDUCE:
        register(OpDef(f"{ns}.{op}", ("x", "tmp_tile?"), _arg_reduce(f"{ns}.{op}", kind, 0 if op[0] == "c" else 1),
                       category="reduce", in_place=False))
    for op in ROW_EXPAND:
        register(OpDef(f"{ns}.{op}", _args(ns, op, ("lhs", "rhs")), _expand(f"{ns}.{op}", kind, 1),
                       category="expand", signless=op in SIGNLESS))
    for op in COL_EXPAND:
        register(OpDef(f"{ns}.{op}", ("lhs", "rhs"), _expand(f"{ns}.{op}", kind, 0), category="expand",
                       signless=op in SIGNLESS))
    register(OpDef(f"{ns}.cast", ("x",), _cast(f"{ns}.cast", kind),
                   {"target_type": None, "mode": "round"}, category="cast"))
    register(OpDef(f"{ns}.matmul", ("lhs", "rhs"), _matmul(f"{ns}.matmul", kind),
                   {"out_dtype": None, "a_trans": False, "b_trans": False, "c_matrix_nz": False},
                   category="matmul", core="cube", result_space=acc, in_place=not tile))
    # the tile form takes init_cond as an operand (upstream's fourth positional), so passes that rename
    # variables (SSA, peeling) reach it; kwargs hold no IR the passes walk
    register(OpDef(f"{ns}.matmul_acc", ("acc", "lhs", "rhs", "init_cond?") if tile else ("acc", "lhs", "rhs"),
                   _matmul_acc(f"{ns}.matmul_acc", kind),
                   {"a_trans": False, "b_trans": False} if tile else {"a_trans": False, "b_trans": False, "init_cond": None},
                   category="matmul", core="cube", result_space=acc, reuses="acc" if tile else None, in_place=not tile))
    register(OpDef(f"{ns}.slice", ("x", "shape", "offset", "valid_shape?"), _slice(f"{ns}.slice", kind),
                   {"pad_value": None}, category="view", view_of=None if tile else "x", signless=True))
    register(OpDef(f"{ns}.assemble", ("target", "source", "offset"), _assemble(f"{ns}.assemble", kind),
                   {"atomic": None}, category="view", writes=None if tile else "target", keeps_operands=tile,
                   signless=True))
    register(OpDef(f"{ns}.concat", ("src0", "src1"), _concat(f"{ns}.concat", kind), category="view",
                   keeps_operands=tile, signless=True))
    register(OpDef(f"{ns}.read", ("src", "offset"), _read(f"{ns}.read", kind), category="access"))
    register(OpDef(f"{ns}.reshape", ("x", "shape"), _reshape(f"{ns}.reshape", kind), category="view",
                   view_of=None if tile else "x", keeps_operands=tile, signless=True, tile_compute=not tile))
    register(OpDef(f"{ns}.transpose", ("x", "axis1", "axis2"), _transpose(f"{ns}.transpose", kind),
                   category="view", view_of=None if tile else "x", in_place=not tile, signless=True))
    register(OpDef(f"{ns}.fillpad", ("x",), _same_as_first(f"{ns}.fillpad", kind),
                   {"pad_value": None}, category="view", tile_compute=not tile))
    register(OpDef(f"{ns}.expands", ("target", "scalar"), _same_as_first(f"{ns}.expands", kind, "target"),
                   category="create", signless=True, tile_compute=not tile))
    for op in SPMD_IDS:  # this block's index / the launch's block count / the AIV lane (INDEX scalars)
        register(OpDef(f"{ns}.{op}", (), _spmd_id, category="spmd", signless=True))
