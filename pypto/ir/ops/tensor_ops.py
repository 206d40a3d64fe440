"""``tensor.*`` ops: whole-tensor (DDR) operations, used in orchestration and before tiling."""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import TensorLayout
from pypto.ir.expr import Expr
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


def _dim(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    shaped(args[0], "tensor.dim", "tensor", span, TensorType)
    return ScalarType(DataType.INDEX)


register_common("tensor")
register(OpDef("tensor.create", ("shape",), _create,
               {"dtype": None, "layout": TensorLayout.ND, "manual_dep": False, "init_value": None},
               category="create", fresh=True))
register(OpDef("tensor.full", ("shape", "value"), _full, {"dtype": None}, category="create"))
register(OpDef("tensor.write", ("dst", "offset", "value"), _write, category="access", writes="dst"))
register(OpDef("tensor.dim", ("tensor", "axis"), _dim, category="access"))
