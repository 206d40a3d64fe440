"""``array.*`` ops: small fixed-size 1-D arrays of scalars (``pl.array.create(N, pl.TASK_ID)``).

Arrays are values: ``array.update_element`` returns the updated array (``arr[i] = v`` in the DSL
rebinds ``arr``), so loops carry them like any other value. The orchestration codegen turns the
chain back into stores into one C++ array; a ``deps=[arr]`` edge waits on every element.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Expr
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import ArrayType, ScalarType, Type
from pypto.span import Span


def _create(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    extent, dtype = kw.get("extent"), kw.get("dtype")
    if isinstance(extent, bool) or not isinstance(extent, int) or extent <= 0:
        raise UserError(f"array.create: extent must be a positive integer constant, got {extent!r}", span)
    if not isinstance(dtype, DataType):
        raise UserError("array.create: dtype must be a dtype constant such as pl.TASK_ID or pl.INT32", span)
    return ArrayType(extent, dtype)


def _array(e: Expr, op: str, span: Span) -> ArrayType:
    t = e.type
    if not isinstance(t, ArrayType):
        raise UserError(f"{op}: operand 'array' must be a pl.Array, got {t}", span)
    return t


def _index(e: Expr, op: str, span: Span) -> None:
    t = e.type
    if not isinstance(t, ScalarType) or t.dtype.is_float or t.dtype is DataType.TASK_ID:
        raise UserError(f"{op}: the index must be an integer scalar, got {t}", span)


def _get(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    t = _array(args[0], "array.get_element", span)
    _index(args[1], "array.get_element", span)
    return ScalarType(t.dtype)


def _update(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    t = _array(args[0], "array.update_element", span)
    _index(args[1], "array.update_element", span)
    v = args[2].type
    if not isinstance(v, ScalarType) or (v.dtype is DataType.TASK_ID) != (t.dtype is DataType.TASK_ID):
        raise UserError(f"array.update_element: a pl.Array[{t.extent}, pl.{t.dtype.value}] element cannot take a "
                        f"value of type {v}", span)
    return t


register(OpDef("array.create", (), _create, {"extent": None, "dtype": None}, category="array",
               positional_kwargs=("extent", "dtype")))
register(OpDef("array.get_element", ("array", "index"), _get, category="array"))
register(OpDef("array.update_element", ("array", "index", "value"), _update, category="array"))
