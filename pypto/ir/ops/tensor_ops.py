"""``tensor.*`` ops: whole-tensor (DDR) operations, used in orchestration and before tiling."""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import TensorLayout
from pypto.ir.expr import Expr, as_int
from pypto.ir.ops.bounds import positive_dims
from pypto.ir.ops.common import register_common
from pypto.ir.ops.infer import dims, shaped
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import ScalarType, TensorType, Type
from pypto.span import Span


def _dtype_kw(op: str, kw: dict[str, Any], span: Span) -> DataType:
    dt = kw.get("dtype")
    if not isinstance(dt, DataType):
        raise UserError(f"{op}: 'dtype' must be a dtype constant such as pl.FP32", span)
    return dt


def _create(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    shape = positive_dims(dims(args[0], "tensor.create", "shape", span), "tensor.create", "shape", span)
    return TensorType(shape, _dtype_kw("tensor.create", kw, span))


def _full(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    shape = positive_dims(dims(args[0], "tensor.full", "shape", span), "tensor.full", "shape", span)
    return TensorType(shape, _dtype_kw("tensor.full", kw, span))


def _write(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    return shaped(args[0], "tensor.write", "dst", span, TensorType)


def expand_axis(src: TensorType, target: TensorType, span: Span) -> int | None:
    """The axis ``tensor.expand_clone`` broadcasts (None: the shapes are equal); a UserError when ``src``
    does not broadcast to ``target`` along at most one axis."""
    if src.rank != target.rank or src.dtype is not target.dtype:
        raise UserError(f"tensor.expand_clone: input {src.dtype.value}{list(src.shape)} and target "
                        f"{target.dtype.value}{list(target.shape)} must have the same rank and dtype", span)
    axes = [i for i, (a, b) in enumerate(zip(src.shape, target.shape, strict=True)) if a is not b and a != b]
    if any(src.shape[i] != 1 for i in axes) or len(axes) > 1:
        raise UserError(f"tensor.expand_clone: input {list(src.shape)} does not broadcast to {list(target.shape)} "
                        "along at most one axis (the input's broadcast axis must have size 1)", span,
                        hint="broadcast one axis per expand_clone")
    return axes[0] if axes else None


def _expand_clone(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    src = shaped(args[0], "tensor.expand_clone", "input", span, TensorType)
    target = shaped(args[1], "tensor.expand_clone", "target", span, TensorType)
    assert isinstance(src, TensorType) and isinstance(target, TensorType)
    expand_axis(src, target, span)
    return target


def _dim(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    t = shaped(args[0], "tensor.dim", "tensor", span, TensorType)
    axis = as_int(args[1]) if len(args) > 1 else None
    if axis is not None and not -t.rank <= axis < t.rank:
        raise UserError(f"tensor.dim: axis {axis} is outside a rank-{t.rank} tensor", span,
                        hint=f"use an axis in [{-t.rank}, {t.rank - 1}]")
    return ScalarType(DataType.INDEX)


register_common("tensor")
register(OpDef("tensor.create", ("shape",), _create,
               {"dtype": None, "layout": TensorLayout.ND, "manual_dep": False, "init_value": None},
               category="create", fresh=True))
register(OpDef("tensor.full", ("shape", "value"), _full, {"dtype": None}, category="create"))
register(OpDef("tensor.write", ("dst", "offset", "value"), _write, category="access", writes="dst"))
register(OpDef("tensor.expand_clone", ("input", "target"), _expand_clone, category="memory", writes="target",
               doc="the input broadcast along its one size-1 axis into the target, which is the result"))
register(OpDef("tensor.dim", ("tensor", "axis"), _dim, category="access"))
