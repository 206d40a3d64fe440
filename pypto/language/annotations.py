"""Type annotations (``pl.Tensor[[64, 64], pl.FP32]``, ``pl.Tile[..., pl.MemRef(...), pl.Mem.Vec]``)
resolved from their AST into IR types. Sub-expressions are evaluated by the expression parser.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from pypto.errors import ParserTypeError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import (
    CompactMode,
    MemorySpace,
    PadValue,
    ParamDirection,
    TensorLayout,
    TileLayout,
)
from pypto.ir.expr import Expr, Var, as_int
from pypto.ir.types import (
    ArrayType,
    MemRef,
    PtrType,
    ScalarType,
    TensorType,
    TensorView,
    TileType,
    TileView,
    TupleType,
    Type,
    default_tile_view,
)
from pypto.language.types import SLOT_KEY, AnnotationSpec, DynVar, TypeCtor, _CallSpec
from pypto.span import Span

if TYPE_CHECKING:
    from pypto.language.expr_parser import ExprParser

_DIRS = {"Out": ParamDirection.Out, "InOut": ParamDirection.InOut}
_TILE_VIEW_KW = {"valid_shape": "dims", "stride": "dims", "start_offset": "dim", "blayout": TileLayout,
                 "slayout": TileLayout, "fractal": int, "pad": PadValue, "compact": CompactMode}
_TENSOR_VIEW_KW = {"stride": "dims", "layout": TensorLayout, "valid_shape": "dims", "pad": PadValue}


def _reject_unsupported(value: Any, span: Span) -> None:
    """``pl.IntLike`` / ``pl.MemRefType`` & co: the stand-in's own 'not with ptoas 0.1.1' error."""
    from pypto.language.unsupported import Unsupported

    if isinstance(value, Unsupported):
        raise value.error(span)


class AnnotationResolver:
    """Turns annotation AST nodes into IR types using ``ev`` for names and sub-expressions."""

    def __init__(self, ev: ExprParser, allow_bare_tensor: bool = False) -> None:
        self.ev = ev
        self.allow_bare_tensor = allow_bare_tensor

    def param(self, node: ast.expr) -> tuple[Type, ParamDirection]:
        """A parameter annotation: the type and its direction (``pl.Out[T]`` / ``pl.InOut[T]``)."""
        if isinstance(node, ast.Subscript):
            base = self.ev.eval(node.value)
            if isinstance(base, TypeCtor) and base.kind in _DIRS:
                inner = self.type(node.slice)
                if base.kind == "InOut" and isinstance(inner, ScalarType):
                    raise ParserTypeError("Scalar parameters cannot be InOut", self.ev.span(node),
                                          hint="pass scalars as plain inputs; only tensors can be written")
                return inner, _DIRS[base.kind]
        return self.type(node), ParamDirection.In

    def type(self, node: ast.expr) -> Type:
        """Any annotation except the direction wrappers."""
        span = self.ev.span(node)
        if isinstance(node, ast.Subscript):
            base = self.ev.eval(node.value)
            items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
            if base is tuple or (isinstance(base, TypeCtor) and base.kind == "Tuple"):
                return TupleType(tuple(self.type(i) for i in items))
            if isinstance(base, TypeCtor):
                return self._ctor(base.kind, items, span)
            _reject_unsupported(base, span)
            raise ParserTypeError(f"'{ast.unparse(node.value)}' is not a DSL type", span,
                                  hint="use pl.Tensor[[..], dtype], pl.Tile[[..], dtype] or pl.Scalar[dtype]")
        value = self.ev.eval(node)
        return self._bare(value, node, span)

    def _bare(self, value: Any, node: ast.expr, span: Span) -> Type:
        _reject_unsupported(value, span)
        if isinstance(value, DataType):
            return ScalarType(value)
        if isinstance(value, AnnotationSpec) and value.ctor == "Scalar":
            return ScalarType(value.items)
        if isinstance(value, TypeCtor):
            if value.kind == "Ptr":
                return PtrType()
            if value.kind == "Tensor" and not self.allow_bare_tensor:
                raise ParserTypeError("bare 'pl.Tensor' annotation needs a shape and dtype", span,
                                      hint="write pl.Tensor[[M, N], pl.FP32] (bare pl.Tensor only works in @pl.jit)")
            raise ParserTypeError(f"bare 'pl.{value.kind}' annotation needs arguments", span,
                                  hint=f"write pl.{value.kind}[...]")
        raise ParserTypeError(f"invalid type annotation '{ast.unparse(node)}'", span,
                              hint="use pl.Tensor[[..], dtype], pl.Tile[[..], dtype] or pl.Scalar[dtype]")

    def _ctor(self, kind: str, items: list[ast.expr], span: Span) -> Type:
        if kind == "Scalar":
            return ScalarType(self._dtype(items[0]))
        if kind == "Array":
            extent = self.ev.eval(items[0]) if len(items) == 2 else None
            if isinstance(extent, bool) or not isinstance(extent, int) or extent <= 0:
                raise ParserTypeError("pl.Array[...] needs a positive integer extent and a dtype", span,
                                      hint="write pl.Array[4, pl.TASK_ID]")
            return ArrayType(extent, self._dtype(items[1]))
        if kind in ("Tensor", "Tile"):
            if len(items) < 2:
                raise ParserTypeError(f"pl.{kind}[...] needs a shape and a dtype", span,
                                      hint=f"write pl.{kind}[[64, 64], pl.FP32]")
            shape = self.dims(items[0])
            dtype = self._dtype(items[1])
            slots = [(self.ev.eval(i), i) for i in items[2:]]
            return self._tensor(shape, dtype, slots) if kind == "Tensor" else self._tile(shape, dtype, slots)
        raise ParserTypeError(f"pl.{kind}[...] is not a value type here", span)

    def dims(self, node: ast.expr) -> tuple[Any, ...]:
        """A shape list: ints, dynamic dims, or index expressions."""
        if not isinstance(node, (ast.List, ast.Tuple)):
            value = self.ev.eval(node)  # a shape held in a Python variable: pl.Tensor[shape, pl.FP32]
            if isinstance(value, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool)
                                                        for d in value):
                return tuple(value)
            raise ParserTypeError("a shape must be a list such as [64, 64]", self.ev.span(node))
        return tuple(self.dim(e) for e in node.elts)

    def dim(self, node: ast.expr) -> Any:
        v = self.ev.eval(node, dyn_ok=True)
        if isinstance(v, DynVar):
            return v.var
        if isinstance(v, bool) or not isinstance(v, (int, Expr)):
            raise ParserTypeError(f"shape dimension must be an int or a pl.dynamic() name, got "
                                  f"'{ast.unparse(node)}'", self.ev.span(node))
        n = as_int(v)
        return n if n is not None else v

    def _dtype(self, node: ast.expr) -> DataType:
        v = self.ev.eval(node)
        if not isinstance(v, DataType):
            raise ParserTypeError(f"expected a dtype such as pl.FP32, got '{ast.unparse(node)}'", self.ev.span(node))
        return v

    def _tensor(self, shape: tuple, dtype: DataType, slots: list[tuple[Any, ast.expr]]) -> TensorType:
        memref, view = None, None
        for value, node in slots:
            if isinstance(value, TensorLayout):
                if value is TensorLayout.DN:
                    raise ParserTypeError("pl.Tensor[..., pl.DN] is not supported", self.ev.span(node),
                                          hint="write pl.TensorView(layout=pl.TensorLayout.DN, stride=[...]) as the 3rd slot")
                view = None if value is TensorLayout.ND else TensorView(layout=value)
            elif isinstance(value, _CallSpec) and value.ctor == "MemRef":
                memref = self._memref(value, node)
            elif isinstance(value, _CallSpec) and value.ctor == "TensorView":
                view = self._view(value, node, TensorView, _TENSOR_VIEW_KW)
            else:
                raise ParserTypeError(f"unexpected pl.Tensor slot '{ast.unparse(node)}'", self.ev.span(node),
                                      hint="allowed: a layout, pl.TensorView(...), pl.MemRef(...)")
        return TensorType(shape, dtype, memref, view)

    def _tile(self, shape: tuple, dtype: DataType, slots: list[tuple[Any, ast.expr]]) -> TileType:
        memref, view, space = None, None, None
        for value, node in slots:
            if isinstance(value, MemorySpace):
                space = value
            elif isinstance(value, _CallSpec) and value.ctor == "MemRef":
                memref = self._memref(value, node)
            elif isinstance(value, _CallSpec) and value.ctor == "TileView":
                view = self._view(value, node, TileView, _TILE_VIEW_KW)
            else:
                raise ParserTypeError(f"unexpected pl.Tile slot '{ast.unparse(node)}'", self.ev.span(node),
                                      hint="allowed: pl.MemRef(...), pl.Mem.X, pl.TileView(...)")
        if view is not None and view == default_tile_view(shape, space):
            view = None  # canonical form: the memory space's implicit view is stored as None (EXPLICIT dumps parse back)
        return TileType(shape, dtype, memref, view, space)

    def _memref(self, spec: _CallSpec, node: ast.expr) -> MemRef:
        kw = dict(spec.kwargs)
        slots, slot = kw.pop("slots", 1), kw.pop(SLOT_KEY, None)
        span = self.ev.span(node)
        if kw:
            raise ParserTypeError(f"pl.MemRef() got an unexpected keyword '{next(iter(kw))}'", span)
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
            raise ParserTypeError(f"pl.MemRef(slots=...) takes a positive integer, got {slots!r}", span,
                                  hint="declare pl.MemRef(slots=2) for a double buffer (slots=1, the default, "
                                       "is a single buffer)")
        mr = self._memref_base(spec, node)
        what = f"pl.MemRef '{mr.base}'" if isinstance(mr.base, str) else "this pl.MemRef"
        if slots > 1 and slot is None:
            raise ParserTypeError(f"pl.MemRef(..., slots={slots}) needs a slot index: pl.MemRef(..., slots={slots})[k]",
                                  span, hint=f"{what} holds {slots} slots: pick one with [k], k in 0..{slots - 1}")
        if slot is not None and slots == 1:
            raise ParserTypeError("only pl.MemRef(..., slots=N) with N > 1 can be subscripted", span,
                                  hint=f"declare {what} with slots=N, or use it without [k]")
        if slots == 1:
            return mr
        k = as_int(slot)
        if k is not None and not 0 <= k < slots:
            raise ParserTypeError(f"slot {k} is out of range for pl.MemRef(..., slots={slots})", span,
                                  hint=f"{what} holds slots 0..{slots - 1}; pick one of them or declare more slots")
        if k is None and not (isinstance(slot, Expr) and isinstance(slot.type, ScalarType)
                              and not slot.type.dtype.is_float):
            raise ParserTypeError("a pl.MemRef slot index must be an integer expression", span,
                                  hint="write a constant or an index expression such as i % 2")
        return MemRef(mr.base, mr.offset, mr.size, slots, k if k is not None else slot)

    def _memref_base(self, spec: _CallSpec, node: ast.expr) -> MemRef:
        args = list(spec.args) or [self._declared_name(node)]
        if len(args) == 1:
            args += [0, 0]
        if len(args) != 3 or not isinstance(args[0], (str, Var)):
            raise ParserTypeError("pl.MemRef takes (base, offset, size)", self.ev.span(node),
                                  hint='e.g. pl.MemRef(mem_vec_0, pl.const(0, pl.INT64), 16384)')
        off = as_int(args[1])
        size = as_int(args[2])
        if size is None:
            raise ParserTypeError("pl.MemRef size must be an int", self.ev.span(node))
        return MemRef(args[0], off if off is not None else args[1], size)

    def _declared_name(self, node: ast.expr) -> str:
        """The name of an unnamed ``buf = pl.MemRef(slots=N)`` declaration used as ``buf[k]`` (or ``buf``):
        the variable it is bound to, and one declaration keeps one name."""
        ref = node.value if isinstance(node, ast.Subscript) else node
        if not isinstance(ref, ast.Name):
            raise ParserTypeError("an unnamed pl.MemRef(...) is named after the variable it is bound to, and "
                                  f"'{ast.unparse(node)}' is not a variable", self.ev.span(node),
                                  hint='declare it outside the function (buf = pl.MemRef(slots=2)) and write '
                                       'buf[k], or name it inline: pl.MemRef("buf", slots=2)[k]')
        key, names = id(self.ev.eval(ref)), self.ev.memref_names
        other = names.get(key)
        if other is not None and other != ref.id:
            raise ParserTypeError(f"one pl.MemRef declaration is used as '{other}' and as '{ref.id}'; an unnamed "
                                  "declaration is named after its variable, so it takes one name",
                                  self.ev.span(ref), hint=f"write '{other}' here too, or declare a second "
                                                          "pl.MemRef for a separate buffer")
        names[key] = ref.id
        return ref.id

    def _view(self, spec: _CallSpec, node: ast.expr, cls: type, kinds: dict[str, Any]) -> Any:
        kw: dict[str, Any] = {}
        for key, value in spec.kwargs.items():
            kind = kinds.get(key)
            if kind is None:
                raise ParserTypeError(f"pl.{spec.ctor}() got an unexpected keyword '{key}'", self.ev.span(node))
            if kind == "dims":
                value = tuple(_view_dim(v) for v in value)
            elif kind == "dim":
                value = _view_dim(value)
            kw[key] = value
        if cls is TensorView and "layout" not in kw and kw:
            raise ParserTypeError("pl.TensorView(...) needs layout= when stride/valid_shape/pad is given",
                                  self.ev.span(node))
        return cls(**kw)


def _view_dim(v: Any) -> Any:
    """A view dimension: an int, a ``pl.dynamic()`` name (its Var), or an index expression."""
    if isinstance(v, DynVar):
        return v.var
    n = as_int(v)
    return n if n is not None else v
