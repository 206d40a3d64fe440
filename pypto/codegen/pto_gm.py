"""Lowering rules for GM access in kernels: ``tile.load`` / ``tile.store`` through ``pto.subview`` windows of
the kernel's tensor views, and the kernel-side ``tensor.transpose`` / ``tensor.reshape`` views that
ResolveBackendOpLayouts makes (a second ``pto.make_tensor_view`` of the same pointer).

N-D windows arrive flattened to 2-D (:mod:`pypto.codegen.pto_ndview`); every window is bounds-checked
against its tensor first, so an out-of-range load or store is a located error, not a wild access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypto.codegen.emitter import base_name
from pypto.codegen.pto_ndview import flat_rows, flat_window
from pypto.codegen.pto_types import TOOLCHAIN, tile_view_type
from pypto.codegen.pto_values import GmView, Tile
from pypto.ir.expr import Call, Expr, MakeTuple, Var, as_int
from pypto.ir.ops.bounds import check_window
from pypto.ir.types import TensorType

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen
    from pypto.codegen.pto_rules import Rule


def _dims(cg: KernelCodegen, e: Expr | None) -> list:
    if not isinstance(e, MakeTuple):
        raise cg.error(f"expected a list of dims, got {e!r}")
    return [as_int(x) if as_int(x) is not None else x for x in e.elements]


def _window(cg: KernelCodegen, view: GmView, offsets: list, sizes: list, op: str = "tile.load") -> str:
    """``pto.subview`` of a GM view; rank-1 tensors get a leading [0] / [1] (N-D windows arrive flattened)."""
    if len(offsets) == 1:
        offsets, sizes = [0, *offsets], [1, *sizes]
    if len(offsets) != view.rank or len(sizes) != view.rank:
        raise cg.error(f"window rank {len(offsets)} does not match tensor rank {view.tensor.rank}")
    shape = view.tensor.shape if len(view.tensor.shape) == view.rank else (1, *view.tensor.shape)
    if view.nd:
        shape = (flat_rows(view.nd), view.nd[-1])
    check_window(op, shape, offsets, sizes, cg.span, what="output tensor" if op == "tile.store" else "tensor")
    offs = ", ".join("%" + cg.index(o) for o in offsets)
    szs = ", ".join("%" + cg.index(s) for s in sizes)
    ssa = cg.names.unique(f"{view.ssa.removesuffix('_view')}_sv")
    cg.op(f"%{ssa} = pto.subview %{view.ssa}, offsets = [{offs}], sizes = [{szs}] : {view.ty} -> "
          f"{tile_view_type(sizes, view.tensor.dtype)}")
    return ssa


def _gm(cg: KernelCodegen, e: Expr) -> GmView:
    v = cg.env.get(e) if isinstance(e, Var) else None
    if not isinstance(v, GmView):
        what = f"'{base_name(e.name)}'" if isinstance(e, Var) else repr(e)
        raise cg.error(f"this reads GM through {what}, which is not a tensor parameter of the kernel (nor a view of "
                       "one the codegen can derive)",
                       hint="slice the kernel's tensor directly, or compute on the loaded tile "
                            "(a window of a tile is a tile.slice copy)")
    return v


def _load(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    view = _gm(cg, c.args[0])
    sizes = _dims(cg, c.args[2])
    has_valid = len(c.args) > 3 and c.args[3] is not None
    if has_valid:
        sizes = list(_dims(cg, c.args[3]))  # the GM window is the valid region; the tile keeps its full shape
    offsets = _dims(cg, c.args[1])
    if view.nd:
        offsets, sizes = flat_window(cg, view, offsets, sizes)
    # an N-D window's valid region, flattened like the window, is the 2-D tile's valid region
    shape = list(getattr(getattr(dst, "type", None), "shape", ()))
    flat_valid = has_valid and view.nd and len(shape) == 2 and [as_int(d) for d in shape] != sizes
    out = cg.def_tile(dst, valid=tuple(sizes) if flat_valid else "inherited")
    sv = _window(cg, view, offsets, sizes)
    cg.emit_op("tload", f"%{sv} : {tile_view_type(sizes if len(sizes) > 1 else [1, *sizes], view.tensor.dtype)}",
               out)


def _gm_transpose(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """A kernel-side ``tensor.transpose`` (made by ResolveBackendOpLayouts): a second, strided view of the
    same pointer with shape and strides swapped."""
    src = _gm(cg, c.args[0])
    t = dst.type if dst is not None else None
    if dst is None or not isinstance(t, TensorType) or t.rank != 2 or t.view is None or t.view.stride is None:
        raise cg.error("tensor.transpose inside a kernel needs a 2-D tensor with known strides",
                       hint="transpose the tensor in the orchestration and pass it to the kernel")
    sh = ", ".join("%" + cg.index(d) for d in t.shape)
    st = ", ".join("%" + cg.index(d) for d in t.view.stride)
    ssa = cg.names.unique(f"{base_name(dst.name)}_view")
    view = GmView(ssa, t, 2, src.ptr)
    cg.op(f"%{ssa} = pto.make_tensor_view %{src.ptr}, shape = [{sh}] strides = [{st}] : {view.ty}")
    cg.env[dst] = view


def _gm_flatten(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """A kernel-side ``tensor.reshape`` of a packed N-D tensor to 2-D ``[rows, last]`` (made by
    ResolveBackendOpLayouts for a transposed N-D load): the same pointer viewed packed as 2-D."""
    src = _gm(cg, c.args[0])
    t = dst.type if dst is not None else None
    packed = src.tensor.view is None or src.tensor.view.stride is None
    if dst is None or not isinstance(t, TensorType) or t.rank != 2 or not packed or t.shape[-1] != src.tensor.shape[-1]:
        raise cg.error("tensor.reshape inside a kernel views a packed N-D tensor as 2-D [rows, last] only",
                       hint="reshape the tensor in the orchestration and pass it to the kernel")
    sh = ", ".join("%" + cg.index(d) for d in t.shape)
    ssa = cg.names.unique(f"{base_name(dst.name)}_view")
    view = GmView(ssa, t, 2, src.ptr)
    cg.op(f"%{ssa} = pto.make_tensor_view %{src.ptr}, shape = [{sh}] strides = [%{cg.index(t.shape[1])}, "
          f"%{cg.index(1)}] : {view.ty}")
    cg.env[dst] = view


def _store(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    from pypto.codegen.pto_views import Pieces, store_pieces

    if c.kwargs.get("atomic") not in (None, 0):
        raise cg.error(f"tile.store with atomic={c.kwargs['atomic']!r} is not supported by the {TOOLCHAIN} codegen "
                       "(it has no atomic store)",
                       hint="write pl.assemble(target, value, offsets, atomic=pl.AtomicType.Add) on tensors; "
                            "pypto turns that into a read-modify-write ordered by the runtime")
    view = _gm(cg, c.args[2])
    offsets = _dims(cg, c.args[1])
    pieces = cg.env.get(c.args[0]) if isinstance(c.args[0], Var) else None
    if isinstance(pieces, Pieces):
        store_pieces(cg, pieces, offsets, lambda t, offs: _store_tile(cg, t, view, offs))
    else:
        _store_tile(cg, cg.tile_of(c.args[0]), view, offsets)
    if dst is not None:
        cg.env[dst] = view


def _store_tile(cg: KernelCodegen, src: Tile, view: GmView, offsets: list) -> None:
    sizes = list(src.buf.valid)
    if len(offsets) == 1 and src.buf.rows == 1:
        sizes = sizes[1:]
    if view.nd:
        offsets, sizes = flat_window(cg, view, offsets, sizes)
    sv = _window(cg, view, offsets, sizes, "tile.store")
    vt = tile_view_type(sizes if len(sizes) > 1 else [1, *sizes], view.tensor.dtype)
    cg.op(f"pto.tstore ins(%{src.ssa} : {src.ty}) outs(%{sv} : {vt})")


def register(rules: dict[str, Rule]) -> None:
    rules.update({"tile.load": _load, "tile.store": _store, "tensor.transpose": _gm_transpose,
                  "tensor.reshape": _gm_flatten})
