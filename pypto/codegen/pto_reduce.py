"""Reductions the pinned ptoas lacks or miscompiles, rewritten into instructions it lowers faithfully.

* ``col_max`` / ``col_min`` / ``col_prod``: ptoas 0.1.1 emits ``TCOLEXPAND`` for ``pto.tcolmax`` /
  ``pto.tcolmin`` and has no ``tcolprod``. They become a loop over the valid rows: ``textract`` of
  row ``i`` into a ``[1, N]`` tile, folded into the result with ``tmax`` / ``tmin`` / ``tmul``.
* ``row_prod`` (and integer ``row_sum``/``row_max``/``row_min``, which 0.1.1 takes as f16/f32 only): no
  ``trowprod``; a loop over the valid columns (``textract`` of column ``j`` into an
  ``[M, 1]`` tile, folded with ``tmul``).
* ``row_argmax`` & co: no ``trowargmax`` family, and ``tcmp``/``tsel`` cannot be used (0.1.1 drops
  tcmp's operands). The index is computed with exact arithmetic: ``d = x - max`` (0 exactly at a
  maximum, else at most -2**-149), scaled by 2**150 in f32 and clamped to -1 gives ``s`` = 0 at a
  maximum and -1 elsewhere; ``idx - C * s`` is the column index at a maximum and at least ``C``
  elsewhere, so its row minimum is the first index of the maximum (torch's tie rule). Columns swap
  with rows for ``col_*``; ``argmin`` negates the scale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypto.codegen.pto_colsum import col_sum_rule
from pypto.codegen.pto_types import TOOLCHAIN
from pypto.codegen.pto_values import Tile
from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Var
from pypto.ir.types import TileType, default_tile_view

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen

_FOLD = {"max": "tmax", "min": "tmin", "prod": "tmul", "sum": "tadd"}
_SCALE = 2.0 ** 75  # applied twice: 2**150 lifts the smallest f32 difference (2**-149) past 1


def _tmp(cg: KernelCodegen, shape: tuple[int, int], dtype: DataType, valid: tuple) -> Tile:
    """A fresh Vec tile with the given valid region (an ``alloc_tile`` with operands when partial)."""
    t = TileType(shape, dtype, memory_space=MemorySpace.Vec, view=default_tile_view(shape, MemorySpace.Vec))
    return cg.def_tile(None, t, valid=tuple(valid))


def _pair(a: Tile, b: Tile) -> str:
    return f"%{a.ssa} : {a.ty}, %{b.ssa} : {b.ty}"


def _one(a: Tile) -> str:
    return f"%{a.ssa} : {a.ty}"


def _extract(cg: KernelCodegen, src: Tile, r: object, c: object, out: Tile) -> None:
    cg.emit_op("textract", f"%{src.ssa}[%{cg.index(r)}, %{cg.index(c)}] : {src.ty}", out)


def fold_lines(cg: KernelCodegen, x: Tile, kind: str, axis: int, out: Tile) -> None:
    """``out`` = the max/min/prod of ``x``'s valid rows (axis 0, out [1, N]) or columns (axis 1, out [M, 1])."""
    n = x.buf.valid[axis]
    _extract(cg, x, 0, 0, out)
    if n == 1:
        return
    line = _tmp(cg, (1, x.buf.cols) if axis == 0 else (x.buf.rows, 1), x.buf.dtype, out.buf.valid)
    iv = cg.names.unique("red_i")
    cg.out.line(f"scf.for %{iv} = %{cg.index(1)} to %{cg.index(n)} step %{cg.index(1)} {{")
    cg.out.push()
    if axis == 0:
        cg.emit_op("textract", f"%{x.ssa}[%{iv}, %{cg.index(0)}] : {x.ty}", line)
    else:
        cg.emit_op("textract", f"%{x.ssa}[%{cg.index(0)}, %{iv}] : {x.ty}", line)
    ins = f"%{out.ssa}, %{line.ssa} : {out.ty}, {line.ty}" if kind == "sum" else _pair(out, line)  # tadd: list form
    cg.emit_op(_FOLD[kind], ins, out)
    cg.out.pop()
    cg.out.line("}")


def _line_reduce(kind: str, axis: int):
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        x = cg.tile_of(c.args[0])
        fold_lines(cg, x, kind, axis, cg.def_tile(dst))
    return rule


def _int_rows(kind: str, float_rule):
    """``row_sum/max/min``: ptoas 0.1.1 takes f16/f32 tiles only for trowsum/trowmax/trowmin, so an integer
    tile folds its valid columns instead (exact)."""
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        x = cg.tile_of(c.args[0])
        if x.buf.dtype.is_float:
            float_rule(cg, c, dst)
            return
        fold_lines(cg, x, kind, 1, cg.def_tile(dst))
    return rule


def _reduced_valid(x: Tile, axis: int) -> tuple:
    vr, vc = x.buf.valid
    return (1, vc) if axis == 0 else (vr, 1)


def _extremum(cg: KernelCodegen, x: Tile, kind: str, axis: int) -> Tile:
    """``x - max`` (or ``x - min``) broadcast back over ``x``'s valid region, as f32."""
    rows, cols = x.buf.rows, x.buf.cols
    red_shape = (1, cols) if axis == 0 else (rows, 1)
    m = _tmp(cg, red_shape, x.buf.dtype, _reduced_valid(x, axis))
    d = _tmp(cg, (rows, cols), x.buf.dtype, x.buf.valid)
    if axis == 1:
        if kind == "max":
            cg.emit_op("trowmax", _one(x), m)
        else:
            cg.zero_fill(d)
            cg.emit_op("trowmin", f"%{x.ssa}, %{d.ssa} : {x.ty}, {d.ty}", m)
        cg.emit_op("trowexpandsub", f"%{x.ssa}, %{m.ssa} : {x.ty}, {m.ty}", d)
    else:
        fold_lines(cg, x, kind, 0, m)
        cg.emit_op("tcolexpand", _one(m), d)
        cg.emit_op("tsub", f"%{x.ssa}, %{d.ssa} : {x.ty}, {d.ty}", d)
    if x.buf.dtype is DataType.FP32:
        return d
    d32 = _tmp(cg, (rows, cols), DataType.FP32, x.buf.valid)
    cg.emit_op("tcvt", _one(d), d32, " {rmode = #pto<round_mode CAST_RINT>}")
    return d32


def _indices(cg: KernelCodegen, x: Tile, axis: int) -> Tile:
    """An f32 tile over ``x``'s valid region holding each element's column (axis 1) or row (axis 0) index."""
    rows, cols = x.buf.rows, x.buf.cols
    n = cols if axis == 1 else rows
    ramp = _tmp(cg, (1, n), DataType.INT32, (1, n))
    cg.emit_op("tci", f"%{cg.const(0, 'i32')} : i32", ramp)
    ramp32 = _tmp(cg, (1, n), DataType.FP32, (1, n))
    cg.emit_op("tcvt", _one(ramp), ramp32, " {rmode = #pto<round_mode CAST_RINT>}")
    idx = _tmp(cg, (rows, cols), DataType.FP32, x.buf.valid)
    if axis == 1:
        cg.emit_op("tcolexpand", _one(ramp32), idx)
        return idx
    column = _tmp(cg, (rows, 1), DataType.FP32, (rows, 1))
    cg.emit_op("treshape", _one(ramp32), column)
    cg.emit_op("trowexpand", _one(column), idx)
    return idx


def _refuse_int(cg: KernelCodegen, op: str, x: Tile) -> None:
    if x.buf.dtype in (DataType.FP16, DataType.BF16, DataType.FP32):
        return
    raise UnsupportedFeatureError(
        f"{op} on {x.buf.dtype.value} tiles is not supported with {TOOLCHAIN}: it has no pto.trowargmax / "
        "pto.tcolargmax (a newer ptoas has them), and pypto's rewrite of the op is exact for floating-point "
        "operands only", cg.span,
        hint="cast the operand first, e.g. pl.tile.row_argmax(pl.cast(x, pl.FP32)) (exact for |x| <= 2**24)")


def _arg_reduce(kind: str, axis: int):
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        x = cg.tile_of(c.args[0])
        _refuse_int(cg, c.op_name, x)
        s = _extremum(cg, x, kind, axis)
        scale = _SCALE if kind == "max" else -_SCALE
        cg.emit_op("tmuls", f"%{s.ssa}, %{cg.const(scale, 'f32')} : {s.ty}, f32", s)
        cg.emit_op("tmuls", f"%{s.ssa}, %{cg.const(_SCALE, 'f32')} : {s.ty}, f32", s)
        floor = _tmp(cg, (x.buf.rows, x.buf.cols), DataType.FP32, x.buf.valid)
        cg.emit_op("texpands", f"%{cg.const(-1.0, 'f32')} : f32", floor)
        cg.emit_op("tmax", _pair(s, floor), s)  # 0 at an extremum, -1 elsewhere
        n = x.buf.cols if axis == 1 else x.buf.rows
        cg.emit_op("tmuls", f"%{s.ssa}, %{cg.const(-float(n), 'f32')} : {s.ty}, f32", s)
        idx = _indices(cg, x, axis)
        cg.emit_op("tadd", f"%{s.ssa}, %{idx.ssa} : {s.ty}, {idx.ty}", s)
        first = _tmp(cg, (1, x.buf.cols) if axis == 0 else (x.buf.rows, 1), DataType.FP32, _reduced_valid(x, axis))
        if axis == 1:
            cg.emit_op("trowmin", f"%{s.ssa}, %{floor.ssa} : {s.ty}, {floor.ty}", first)
        else:
            fold_lines(cg, s, "min", 0, first)
        cg.emit_op("tcvt", _one(first), cg.def_tile(dst), " {rmode = #pto<round_mode CAST_RINT>}")
    return rule


def register(rules: dict) -> None:
    """Add the rewritten reductions to a rule table."""
    for kind in ("max", "min"):
        rules[f"tile.col_{kind}"] = _line_reduce(kind, 0)
        rules[f"tile.row_arg{kind}"] = _arg_reduce(kind, 1)
        rules[f"tile.col_arg{kind}"] = _arg_reduce(kind, 0)
    rules["tile.col_prod"] = _line_reduce("prod", 0)
    rules["tile.row_prod"] = _line_reduce("prod", 1)
    for kind in ("sum", "max", "min"):
        rules[f"tile.row_{kind}"] = _int_rows(kind, rules[f"tile.row_{kind}"])
    rules["tile.col_sum"] = col_sum_rule(rules["tile.col_sum"])  # with a scratch: the binary tree
