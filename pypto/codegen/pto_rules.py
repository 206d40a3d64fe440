"""Lowering rules from ``tile.*`` ops to the ptoas 0.1.1 PTO dialect, keyed by op name.

Each rule is ``rule(cg, call, dst)`` where ``cg`` is the :class:`KernelCodegen` and ``dst`` the
Var receiving the result (None for statements). The two ``ins()`` spellings of 0.1.1 are kept
apart: "list" ops (``ins(%a, %b : A, B)``) and "pair" ops (``ins(%a : A, %b : B)``). Ops 0.1.1 cannot
lower are rewritten into ones it can (``maximums`` -> ``texpands`` + ``tmax``, ``row_expand_add`` ->
``trowexpand`` + ``tadd``) or rejected with a UserError naming the op, the toolchain and an
alternative.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from pypto.codegen import pto_uint32, pto_unsigned
from pypto.codegen.pto_types import TOOLCHAIN, flat_order
from pypto.codegen.pto_values import Tile
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstBool, Var, as_int
from pypto.ir.ops.common import round_mode
from pypto.ir.ops.registry import make_call
from pypto.ir.types import TileType

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen

Rule = Callable[["KernelCodegen", Call, "Var | None"], None]
RULES: dict[str, Rule] = {}


def _list(*xs: Tile) -> str:
    return f"{', '.join('%' + x.ssa for x in xs)} : {', '.join(x.ty for x in xs)}"


def _pair(a: Tile, b: Tile) -> str:
    return f"%{a.ssa} : {a.ty}, %{b.ssa} : {b.ty}"


def _srcs(cg: KernelCodegen, c: Call, n: int) -> list[Tile]:
    return [cg.tile_of(a) for a in c.args[:n]]


# ---------------------------------------------------------------- elementwise
def _binary(pto: str, form: str) -> Rule:
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        a, b = _srcs(cg, c, 2)
        out = cg.def_tile(dst)
        cg.emit_op(pto, _list(a, b) if form == "list" else _pair(a, b), out)
    return rule


def _unary(pto: str) -> Rule:
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        (a,) = _srcs(cg, c, 1)
        cg.emit_op(pto, _list(a), cg.def_tile(dst))
    return rule


def _scalar(pto: str, typing: str, int_form: tuple[str, str] | None = None,
            u32_form: tuple[str, str] | None = None) -> Rule:
    """``typing``: ``tile`` (scalar has the tile dtype), ``f32`` (always f32), ``untyped`` (f32, no type).
    ``int_form``: the binary op (and its ins form) an integer tile uses instead, on the broadcast scalar
    (ptoas 0.1.1 rejects tmuls/tsubs/tmins/trems scalars of an integer tile in every spelling);
    ``u32_form``: the same for a UINT32 tile only (its scalar would be a ui32, which no constant is)."""
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        (a,) = _srcs(cg, c, 1)
        form_of = int_form or (u32_form if a.buf.dtype is DataType.UINT32 else None)
        if form_of is not None and not a.buf.dtype.is_float:
            ty = pto_uint32.scalar_type(a.buf.dtype)
            s = cg.scalar_operand(c.args[1], ty)
            tmp = cg.scratch(a.buf, "scalar_tmp", shared=True)
            pto_uint32.broadcast(cg, s, ty, tmp)
            op, form = form_of
            cg.emit_op(op, _list(a, tmp) if form == "list" else _pair(a, tmp), cg.def_tile(dst))
            return
        ty = a.buf.dtype.mlir if typing == "tile" or not a.buf.dtype.is_float else "f32"
        s = cg.scalar_operand(c.args[1], ty)
        out = cg.def_tile(dst)
        ins = f"%{a.ssa} : {a.ty}, %{s}" if typing == "untyped" else f"%{a.ssa}, %{s} : {a.ty}, {ty}"
        cg.emit_op(pto, ins, out)
    return rule


def _maximums(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    # tmaxs aborts ptoas 0.1.1 (FloatAttr assertion): broadcast the scalar, then tmax
    (a,) = _srcs(cg, c, 1)
    s = cg.scalar_operand(c.args[1], a.buf.dtype.mlir)
    tmp = cg.scratch(a.buf, "maxs_tmp", shared=True)
    cg.emit_op("texpands", f"%{s} : {a.buf.dtype.mlir}", tmp)
    cg.emit_op("tmax", _pair(a, tmp), cg.def_tile(dst))


def _addc(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    cg.emit_op("taddc", _list(*_srcs(cg, c, 3)), cg.def_tile(dst))


def _addsc(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    a, b = cg.tile_of(c.args[0]), cg.tile_of(c.args[2])
    ty = a.buf.dtype.mlir
    s = cg.scalar_operand(c.args[1], ty)
    cg.emit_op("taddsc", f"%{a.ssa}, %{s}, %{b.ssa} : {a.ty}, {ty}, {b.ty}", cg.def_tile(dst))


def _sub_then_sub(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``subc``/``subsc``: a - b - c as two subtractions (the operand order of tsubc/tsubsc differs between
    ISA versions); the result never shares a buffer with ``c`` (its op is registered with ``in_place=False``)."""
    a, last = cg.tile_of(c.args[0]), cg.tile_of(c.args[2])
    out = cg.def_tile(dst)
    if c.op == "tile.subc":
        cg.emit_op("tsub", _list(a, cg.tile_of(c.args[1])), out)
    else:
        cg.emit_op("tsubs", f"%{a.ssa}, %{cg.scalar_operand(c.args[1], 'f32')} : {a.ty}, f32", out)
    cg.emit_op("tsub", _list(out, last), out)


def _ci(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    out = cg.def_tile(dst)
    ty = pto_uint32.scalar_type(out.buf.dtype)  # arith constants are signless
    desc = " {descending = true}" if c.kwargs.get("descending") else ""
    cg.emit_op("tci", f"%{cg.scalar_operand(c.args[0], ty)} : {ty}", out, desc)


def _extract(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    src = cg.tile_of(c.args[0])
    r, col = cg.index(c.args[1]), cg.index(c.args[2])
    cg.emit_op("textract", f"%{src.ssa}[%{r}, %{col}] : {src.ty}", cg.def_tile(dst, valid=None))


def _part(pto: str) -> Rule:
    """``tpartadd``/``tpartmax``/``tpartmin``: the result is valid where either operand is."""
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        a, b = _srcs(cg, c, 2)
        valid: tuple | str = "inherited"
        if a.buf.valid != b.buf.valid:
            if not all(isinstance(x, int) for x in (*a.buf.valid, *b.buf.valid)):
                raise cg.error(f"{c.op} of tiles with different run-time valid extents cannot be lowered by "
                               f"{TOOLCHAIN} (the result's valid region must be known)",
                               hint="load both operands with static valid shapes")
            valid = tuple(max(x, y) for x, y in zip(a.buf.valid, b.buf.valid, strict=True))
        cg.emit_op(pto, _pair(a, b), cg.def_tile(dst, valid=valid))
    return rule


def _fill(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    out = cg.def_tile(dst)
    ty = pto_uint32.scalar_type(out.buf.dtype)
    pto_uint32.broadcast(cg, cg.scalar_operand(c.args[1], ty), ty, out)


def _create(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    cg.def_tile(dst)  # contents undefined; a read before any write zero-fills it


# ---------------------------------------------------------------- reductions / broadcasts
def _reduce(pto: str, needs_tmp: bool) -> Rule:
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        (a,) = _srcs(cg, c, 1)
        ins = [a]
        if needs_tmp:
            tmp = cg.tile_of(c.args[1]) if len(c.args) > 1 else cg.scratch(a.buf, "red_tmp", shared=True)
            if tmp.ssa not in cg.written:
                cg.zero_fill(tmp)
            ins.append(tmp)
        # col_sum given a scratch tile reduces pairwise (binary tree), as upstream's 4-argument TCOLSUM does
        binary = pto == "tcolsum" and len(c.args) > 1
        cg.emit_op(pto, _list(*ins), cg.def_tile(dst), " isBinary = true" if binary else "")
    return rule


def _expand_direct(pto: str, binary: bool) -> Rule:
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        lhs, rhs = _srcs(cg, c, 2)
        cg.emit_op(pto, _list(lhs, rhs) if binary else _list(rhs), cg.def_tile(dst))
    return rule


_COMBINE = {"add": ("tadd", "list"), "sub": ("tsub", "list"), "mul": ("tmul", "pair"),
            "div": ("tdiv", "list"), "max": ("tmax", "pair"), "min": ("tmin", "pair")}


def _expand_then(expand: str, combine: str) -> Rule:
    """Broadcast ``rhs`` into a scratch tile, then combine ``lhs`` with it (``expdif`` = exp(lhs - rhs))."""
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        lhs, rhs = _srcs(cg, c, 2)
        tmp = cg.scratch(lhs.buf, "expand_tmp", shared=True)
        cg.emit_op(expand, _list(rhs), tmp)
        out = cg.def_tile(dst)
        op, form = _COMBINE["sub" if combine == "expdif" else combine]
        cg.emit_op(op, _list(lhs, tmp) if form == "list" else _pair(lhs, tmp), out)
        if combine == "expdif":
            cg.emit_op("texp", _list(out), out)
    return rule


def _row_expand_add(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """A ``[M, 1]`` row vector broadcasts with ``trowexpand``; a row-major packed ``[M, 32 B]`` one repeats
    its lanes across the row (see :func:`pto_sort.packed_row_expand_add`)."""
    from pypto.codegen.pto_sort import packed_row_expand_add

    lhs, rhs = _srcs(cg, c, 2)
    if rhs.buf.cols == 1:
        _expand_then("trowexpand", "add")(cg, c, dst)
    else:
        packed_row_expand_add(cg, lhs, rhs, dst)


def _by_dtype(float_rule: Rule, int_rule: Rule) -> Rule:
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        (float_rule if cg.tile_of(c.args[0]).buf.dtype.is_float else int_rule)(cg, c, dst)
    return rule


def _row_expdif(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    lhs, rhs = _srcs(cg, c, 2)
    out = cg.def_tile(dst)
    cg.emit_op("trowexpandsub", _list(lhs, rhs), out)
    cg.emit_op("texp", _list(out), out)


# ---------------------------------------------------------------- memory
def _move(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    (a,) = _srcs(cg, c, 1)
    cg.emit_op("tmov", _list(a), cg.def_tile(dst))


def _reshape(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """Same tile type: a no-op. Otherwise ``pto.treshape`` (a view of the same bytes), allowed when both
    sides hold the same elements densely in the same order: e.g. [32, 1] col-major <-> [1, 32] row-major."""
    (a,) = _srcs(cg, c, 1)
    if dst is None:
        raise cg.error("tile.reshape needs a result")
    want = cg.buf_type(dst.type)  # type: ignore[arg-type]
    if want.text == a.ty or ((want.rows, want.cols) == (a.buf.rows, a.buf.cols)
                             and cg.buf_type(dst.type, tuple(a.buf.valid)).text == a.ty):  # type: ignore[arg-type]
        cg.env[dst] = a  # the same 2-D tile (an N-D load flattened already), its valid region kept
        return
    same = want.loc == a.buf.loc and want.dtype is a.buf.dtype and want.rows * want.cols == a.buf.rows * a.buf.cols
    if not (same and flat_order(a.buf) and flat_order(want)):
        raise cg.error(f"tile.reshape between these tile layouts is not supported by the {TOOLCHAIN} codegen: "
                       "pto.treshape only reinterprets the same bytes, so both tiles must be fully valid and "
                       "stored densely in the same element order",
                       hint="load the data with the target shape instead")
    cg.emit_op("treshape", _list(a), cg.view_tile(a, want, dst))


def _cast(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    (a,) = _srcs(cg, c, 1)
    mode = round_mode(c.kwargs.get("mode", "round"))
    if mode is None:  # the op's type inference rejects these
        raise cg.error(f"tile.cast: unknown rounding mode {c.kwargs.get('mode')!r}")
    suffix = f" {{rmode = #pto<round_mode {mode.upper()}>}}"
    if pto_unsigned.is_carried_cast(c, dst):
        pto_unsigned.cast(cg, c, dst, suffix)
        return
    cg.emit_op("tcvt", _list(a), cg.def_tile(dst), suffix)


def _spmd_id(pto: str) -> Rule:
    """``%x = pto.get_block_idx`` (an i64; ``arith.index_cast`` to index where an index is needed)."""
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        from pypto.codegen.pto_mlir import Scalar

        if dst is None:
            return
        if c.op in cg.id_args:  # a loop bound: the wrapper passes it as an index argument
            cg.env[dst] = Scalar(cg.id_args[c.op], "index")
            return
        ssa = cg.names.unique(pto.removeprefix("get_"))
        cg.op(f"%{ssa} = pto.{pto}")
        cg.env[dst] = Scalar(ssa, "i64")
    return rule


# ---------------------------------------------------------------- cube
def _matmul(pto: str, n: int) -> Rule:
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        if c.kwargs.get("a_trans") or c.kwargs.get("b_trans"):
            raise cg.error(f"{c.op_name} with a_trans/b_trans is not supported by the {TOOLCHAIN} codegen",
                           hint="transpose the operand when loading it (a DN tensor view)")
        if pto == "tmatmul.acc" and len(c.args) > 3:
            _init_cond(cg, c, dst)
            return
        t = dst.type if dst is not None else None
        if isinstance(t, TileType) and t.memory_space is None:
            t = replace(t, memory_space=MemorySpace.Acc)  # before InferTileMemorySpace
        cg.emit_op(pto, _list(*_srcs(cg, c, n)), cg.def_tile(dst, t if isinstance(t, TileType) else None))
    return rule


def _init_cond(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``matmul_acc(acc, a, b, init_cond)`` left after peeling: a constant picks tmatmul or tmatmul.acc."""
    arg = c.args[3]
    cond = arg.value if isinstance(arg, ConstBool) else as_int(arg)
    if cond is None:
        raise cg.error("tile.matmul_acc with an init_cond that is not the first iteration of its loop cannot be "
                       f"lowered by {TOOLCHAIN} (an Acc tile cannot be zeroed or chosen between branches; pypto "
                       "peels a loop whose init_cond is (k == start))",
                       hint="write init_cond=(k == <loop start>) on the loop variable k, or start the "
                            "accumulation with pl.matmul before the loop")
    call = replace(c, args=c.args[:3]) if not cond else make_call("tile.matmul", list(c.args[1:3]), {
        **c.kwargs, "out_dtype": c.result_type.dtype}, span=c.span)  # type: ignore[attr-defined]
    RULES[call.op](cg, call, dst)  # type: ignore[index]


def _unsupported(op: str, alternative: str) -> Rule:
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        raise cg.error(f"{op} cannot be lowered by {TOOLCHAIN} (the pinned assembler has no such "
                       "instruction)", hint=alternative)
    return rule


def _register() -> None:
    for op, pto in (("add", "tadd"), ("sub", "tsub"), ("div", "tdiv"), ("and_", "tand"), ("xor", "txor")):
        RULES[f"tile.{op}"] = _binary(pto, "list")
    for op, pto in (("mul", "tmul"), ("maximum", "tmax"), ("minimum", "tmin"), ("or_", "tor"),
                    ("rem", "trem"), ("shl", "tshl"), ("shr", "tshr")):
        RULES[f"tile.{op}"] = _binary(pto, "pair")
    for op in ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "recip", "relu"):
        RULES[f"tile.{op}"] = _unary(f"t{op}")
    RULES["tile.not_"] = _unary("tnot")
    RULES.update({
        "tile.adds": _scalar("tadds", "tile", u32_form=("tadd", "list")),
        "tile.subs": _scalar("tsubs", "f32", ("tsub", "list")),
        "tile.muls": _scalar("tmuls", "f32", ("tmul", "pair")), "tile.divs": _scalar("tdivs", "tile"),
        "tile.minimums": _scalar("tmins", "untyped", ("tmin", "pair")),
        "tile.rems": _scalar("trems", "untyped", ("trem", "pair")),
        "tile.maximums": _maximums, "tile.xors": _scalar("txors", "tile", u32_form=("txor", "list")),
        "tile.prelu": _binary("tprelu", "pair"), "tile.addc": _addc, "tile.addsc": _addsc,
        "tile.subc": _sub_then_sub, "tile.subsc": _sub_then_sub, "tile.ci": _ci, "tile.extract": _extract,
        "tile.part_add": _part("tpartadd"), "tile.part_max": _part("tpartmax"), "tile.part_min": _part("tpartmin"),
        "tile.row_sum": _reduce("trowsum", False), "tile.row_max": _reduce("trowmax", False),
        "tile.row_min": _reduce("trowmin", True), "tile.col_sum": _reduce("tcolsum", True),
        "tile.row_expand": _expand_direct("trowexpand", False),
        "tile.col_expand": _expand_direct("tcolexpand", False),
        "tile.row_expand_expdif": _row_expdif,
        "tile.move": _move, "tile.reshape": _reshape,
        "tile.cast": _cast, "tile.create": _create, "tile.full": _fill, "tile.expands": _fill,
        "tile.matmul": _matmul("tmatmul", 2), "tile.matmul_acc": _matmul("tmatmul.acc", 3),
        "tile.matmul_bias": _matmul("tmatmul.bias", 3),
    })
    for op in ("get_block_idx", "get_block_num", "get_subblock_idx"):
        RULES[f"tile.{op}"] = _spmd_id(op)
    from pypto.codegen import (
        pto_fmod,
        pto_gm,
        pto_intdiv,
        pto_reduce,
        pto_scatter,
        pto_sort,
        pto_views,
        pto_write,
    )

    pto_gm.register(RULES)
    pto_reduce.register(RULES)
    pto_sort.register(RULES)
    pto_scatter.register(RULES)
    pto_write.register(RULES)
    pto_fmod.register(RULES)
    pto_intdiv.register(RULES)

    RULES["tile.concat"] = pto_views.concat
    RULES["tile.assemble"] = pto_views.assemble
    RULES["tile.fillpad"] = pto_views.fillpad
    RULES["tile.fillpad_expand"] = pto_views.fillpad_expand
    RULES["tile.reinterpret_view"] = pto_views.reinterpret_view
    RULES["tile.slice"] = pto_views.slice_
    RULES["tile.fillpad_inplace"] = pto_views.fillpad  # same values; the result gets its own buffer
    for k in ("sub", "mul", "div"):
        RULES[f"tile.row_expand_{k}"] = _expand_direct(f"trowexpand{k}", True)
    for k in ("sub", "mul"):  # 0.1.1 takes f16/f32 only for trowexpandsub/mul: integers broadcast, then combine
        RULES[f"tile.row_expand_{k}"] = _by_dtype(RULES[f"tile.row_expand_{k}"], _expand_then("trowexpand", k))
    for k in ("add", "max", "min"):
        RULES[f"tile.row_expand_{k}"] = _expand_then("trowexpand", k)
    RULES["tile.row_expand_add"] = _row_expand_add
    for k in ("add", "sub", "mul", "div", "max", "min", "expdif"):
        RULES[f"tile.col_expand_{k}"] = _expand_then("tcolexpand", k)
    for op in ("array.create", "array.get_element", "array.update_element"):
        RULES[op] = _unsupported(op, "keep pl.Array values in the orchestration (there is no !pto.local_array "
                                     "in ptoas 0.1.1); pass the elements a kernel needs as scalar arguments")
    RULES["system.task_dummy"] = _unsupported("pl.system.task_dummy", "join task ids in the orchestration "
                                                                    "function (outside pl.at regions)")
    for op, alt in (("sin", "compute it on the host"),
                    ("cos", "compute it on the host"),
                    ("ands", "broadcast the scalar with pl.tile.full and use tile.and_"),
                    ("ors", "broadcast the scalar with pl.tile.full and use tile.or_"),
                    ("shls", "broadcast the scalar with pl.tile.full and use tile.shl"),
                    ("shrs", "broadcast the scalar with pl.tile.full and use tile.shr")):
        RULES[f"tile.{op}"] = _unsupported(f"tile.{op}", alt)
    RULES["tile.transpose"] = pto_views.transpose
    pto_uint32.register(RULES)  # last: it wraps the ordering rules above for UINT32 operands


_register()
