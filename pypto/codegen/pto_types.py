"""Type spellings of the ptoas 0.1.1 PTO dialect: ``!pto.tile_buf<...>``, views, scalars."""

from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace, TileLayout
from pypto.ir.expr import as_int
from pypto.ir.types import Dim, TileType, TileView, default_tile_view
from pypto.span import Span

TOOLCHAIN = "ptoas 0.1.1"

LOC: dict[MemorySpace, str] = {
    MemorySpace.Vec: "ub",
    MemorySpace.Mat: "mat",
    MemorySpace.Left: "left",
    MemorySpace.Right: "right",
    MemorySpace.Acc: "acc",
    MemorySpace.Bias: "bias",
}

# element types of tiles and GM views (BF16 reaches ptoas 0.1.1 spelled f16: pypto.backend.bf16_standin;
# ptoas 0.1.1 holds ui32 tiles, e.g. pl.arange(..., dtype=pl.UINT32) sort indices, as int32_t: same bits)
TILE_DTYPES = frozenset({DataType.FP32, DataType.FP16, DataType.BF16, DataType.INT32, DataType.UINT32,
                         DataType.INT16, DataType.INT8})
# element types 0.1.1 has no tiles of, carried in the signed type of their width (same bits): only through
# ops whose results do not depend on the signedness (OpDef.signless; pto_mlir refuses the others)
CARRIERS = {DataType.UINT16: DataType.INT16}
SCALAR_ARG_TYPES: dict[DataType, str] = {
    DataType.FP32: "f32", DataType.FP16: "f16", DataType.INT32: "i32", DataType.INT16: "i16",
    DataType.INT8: "i8", DataType.BOOL: "i1", DataType.INDEX: "index", DataType.INT64: "i64",
}
FRACTALS = frozenset({16, 32, 512, 1024})

# MLIR type for a device spec that selects the backend's on-chip capacities in PlanMemory
DEVICE_SPEC = {"Ascend910B": "Ascend910B1", "Ascend950": "Ascend910_9599"}


def carrier(dtype: DataType) -> DataType:
    """The element type ptoas 0.1.1 is given for ``dtype`` (UINT16 data travels as INT16)."""
    return CARRIERS.get(dtype, dtype)


def check_dtype(dtype: DataType, what: str, span: Span) -> str:
    """The MLIR spelling of a tile/view element type, or a UserError naming the alternative."""
    if dtype in CARRIERS:
        return CARRIERS[dtype].mlir
    if dtype not in TILE_DTYPES:
        raise UserError(
            f"{what}: element type {dtype.value} cannot be lowered by {TOOLCHAIN} "
            f"(the pinned assembler supports FP32, FP16, BF16, INT32, UINT32, INT16, INT8 tiles; UINT16 is carried as INT16)",
            span,
            hint="compute in pl.FP16 or pl.FP32 instead (pl.cast at the kernel boundary)",
        )
    return dtype.mlir


def scalar_type(dtype: DataType, what: str, span: Span) -> str:
    """MLIR type of a scalar kernel argument."""
    ty = SCALAR_ARG_TYPES.get(dtype)
    if ty is None:
        raise UserError(f"{what}: scalar type {dtype.value} is not supported by {TOOLCHAIN} kernels", span,
                        hint="pass the value as pl.FP32, pl.INT32 or pl.INDEX")
    return ty


@dataclass(frozen=True, slots=True)
class TileBuf:
    """A resolved tile buffer type: its text and the dynamic valid extents (Exprs) if any."""

    text: str
    rows: int
    cols: int
    dtype: DataType
    valid: tuple[Dim, Dim]
    loc: str
    view: TileView  # the layouts, fractal and pad the text spells

    @property
    def operand_axes(self) -> tuple[bool, bool]:
        """Per axis: is the valid extent an ``alloc_tile`` operand (``v_row=?``)? True unless full."""
        return tuple(v is not full and v != full for v, full in zip(self.valid, (self.rows, self.cols), strict=True))

    @property
    def dynamic(self) -> bool:
        return any(self.operand_axes)


def _dims2(shape: tuple[Dim, ...], what: str, span: Span) -> tuple[Dim, Dim]:
    if len(shape) == 1:
        return 1, shape[0]
    if len(shape) != 2:
        raise UserError(f"{what}: tiles must be 1-D or 2-D for {TOOLCHAIN}, got rank {len(shape)}", span,
                        hint="FlattenTileNdTo2D should have flattened this tile; reshape it to 2-D")
    return shape[0], shape[1]


def tile_buf(t: TileType, what: str, span: Span, valid: tuple[Dim, Dim] | None = None) -> TileBuf:
    """The full 10-field ``!pto.tile_buf<...>`` of a tile type.

    ``valid`` is the valid region the producing op gives the tile (a load's ``valid_shapes``, or
    an operand's valid region carried through an elementwise op); an explicit ``TileView``
    valid shape in the type wins.
    """
    space = t.memory_space or MemorySpace.Vec
    loc = LOC.get(space)
    if loc is None:
        raise UserError(f"{what}: memory space {space.value} has no tile location in {TOOLCHAIN}", span)
    dtype = check_dtype(t.dtype, what, span)
    rows, cols = (as_int(d) for d in _dims2(t.shape, what, span))
    if rows is None or cols is None:
        raise UserError(f"{what}: tile shape must be static, got {t.shape}", span,
                        hint="use a static tile shape with a dynamic valid_shape")
    view: TileView = t.view or default_tile_view(t.shape, space)
    if view.fractal not in FRACTALS:
        raise UserError(f"{what}: fractal {view.fractal} is not one of 16, 32, 512, 1024", span)
    valid = (rows, cols) if valid is None else valid
    if view.valid_shape is not None:
        v = _dims2(view.valid_shape, what, span)
        valid = tuple(as_int(x) if as_int(x) is not None else x for x in v)  # type: ignore[assignment]
    # ptoas 0.1.1 drops a static partial v_row/v_col (emits the full shape): a partial valid
    # region is always written '?' and supplied as alloc_tile operands (constants if static)
    vr, vc = (str(x) if x == full else "?" for x, full in zip(valid, (rows, cols), strict=True))
    text = (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={rows}, cols={cols}, v_row={vr}, v_col={vc}, "
            f"blayout={view.blayout.value}, slayout={view.slayout.value}, fractal={view.fractal}, "
            f"pad={int(view.pad)}>")
    return TileBuf(text, rows, cols, carrier(t.dtype), valid, loc, view)


def tensor_view_type(rank: int, dtype: DataType) -> str:
    return f"!pto.tensor_view<{rank}x{carrier(dtype).mlir}>"


def tile_view_type(sizes: tuple[Dim, ...] | list[Dim], dtype: DataType) -> str:
    dims = "x".join(str(d) if isinstance(d, int) else "?" for d in sizes)
    return f"!pto.tile_view<{dims}x{carrier(dtype).mlir}>"


_NONFINITE = {("f32", "inf"): "0x7F800000", ("f32", "-inf"): "0xFF800000", ("f32", "nan"): "0x7FC00000",
              ("f16", "inf"): "0x7C00", ("f16", "-inf"): "0xFC00", ("f16", "nan"): "0x7E00",
              ("bf16", "inf"): "0x7F80", ("bf16", "-inf"): "0xFF80", ("bf16", "nan"): "0x7FC0"}


def float_literal(value: float, mlir_type: str = "f32") -> str:
    """An MLIR float literal: decimal with a dot and exponent (exact for f32), hex for inf/nan."""
    if value != value or value in (float("inf"), float("-inf")):
        return _NONFINITE[(mlir_type, str(value))]
    return f"{value:.9e}"


def flat_order(buf: TileBuf) -> bool:
    """Are the buffer's elements stored densely in row-major (flat) order? (Nx1 column vectors are.)"""
    full = buf.valid == (buf.rows, buf.cols)
    row_major = buf.view.blayout is TileLayout.row_major or buf.cols == 1
    return full and row_major and buf.view.slayout is TileLayout.none_box
