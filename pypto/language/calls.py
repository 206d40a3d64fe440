"""Op calls from the DSL: argument normalisation (DSL short forms -> registry form) and unified
dispatch by operand type (``pl.add`` on Tensor -> ``tensor.add``, on Tile -> ``tile.add``, with a
number/Scalar rhs -> the scalar form ``tile.adds``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.errors import ParserTypeError, UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace, TensorLayout
from pypto.ir.expr import ConstBool, ConstFloat, ConstInt, Expr, MakeTuple
from pypto.ir.ops.common import SCALAR_FORM
from pypto.ir.ops.registry import get_op, has_op, make_call
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.span import Span

Conv = Callable[[Any, int], Expr]
_SCALAR_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min",
                  "maximum": "max", "minimum": "min"}


def default_conv(value: Any, index: int = -1, span: Span | None = None) -> Expr:
    """Python numbers/lists -> IR constants/MakeTuple; Exprs unchanged."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return ConstBool(value)
    if isinstance(value, int):
        return ConstInt(value, DataType.INDEX)
    if isinstance(value, float):
        return ConstFloat(value, DataType.FP32)
    if isinstance(value, (list, tuple)):
        return MakeTuple(tuple(default_conv(v) for v in value))
    var = getattr(value, "var", None)
    if isinstance(var, Expr):
        return var
    raise ParserTypeError(f"'{value!r}' cannot be used as an operand", span)


def _kw_first(kwargs: dict[str, Any], key: str, default: Any) -> dict[str, Any]:
    value = kwargs.pop(key, default)
    return {key: value, **kwargs}


def _load(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    for i, name in enumerate(("tensor", "offsets", "shapes")):  # pl.load(t, offsets=..., shapes=..., valid_shape=...)
        if len(args) == i and name in kwargs:
            args.append(kwargs.pop(name))
    if len(args) == 3:
        valid = kwargs.pop("valid_shape", None)
        args.append(valid if valid is not None else list(args[2]) if isinstance(args[2], list) else args[2])
        kwargs = _kw_first(kwargs, "target_memory", MemorySpace.Vec)
    return args, kwargs


def _create_tile(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    rest = args[1:]
    kw: dict[str, Any] = {}
    for key, value in zip(("dtype", "target_memory"), rest, strict=False):
        kw[key] = value
    kw.update(kwargs)
    kw = _kw_first(kw, "dtype", None)
    dtype = kw.pop("dtype")
    space = kw.pop("target_memory", MemorySpace.Vec)
    return args[:1], {"dtype": dtype, "target_memory": space, **kw}


def _create_tensor(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    kw: dict[str, Any] = dict(zip(("dtype", "layout"), args[1:], strict=False))
    kw.update(kwargs)
    dtype = kw.pop("dtype", None)
    layout = kw.pop("layout", TensorLayout.ND)
    return args[:1], {"dtype": dtype, "layout": layout, **kw}


def _full(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    if len(args) == 3 and isinstance(args[1], DataType):
        return [args[0], args[2]], {"dtype": args[1], **kwargs}
    return args, kwargs


def _scatter(args: list[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """``scatter(x, mask_pattern=P, dst=d)``: the tensor written is the op's first operand (``(d, x)``)."""
    if "dst" in kwargs and len(args) == 1:
        return [kwargs.pop("dst"), args[0]], kwargs
    return args, kwargs


_CONVENIENCE = {"tile.load": _load, "tile.create": _create_tile, "tensor.create": _create_tensor}
_ALWAYS = {"tensor.full": _full, "tile.full": _full, "tensor.scatter": _scatter, "tile.scatter": _scatter}


def call_op(op: str, args: list[Any], kwargs: dict[str, Any], span: Span, convenience: bool = False,
            to_expr: Conv | None = None) -> Expr:
    """Build the registry Call for ``pl.<op>(*args, **kwargs)``."""
    opdef = get_op(op)
    args, kwargs = list(args), dict(kwargs)
    if op in _ALWAYS:
        args, kwargs = _ALWAYS[op](args, kwargs)
    if convenience and op in _CONVENIENCE:
        args, kwargs = _CONVENIENCE[op](args, kwargs)
    for i, name in enumerate(opdef.args):
        clean = name.rstrip("?")
        if len(args) == i and clean in kwargs:
            args.append(kwargs.pop(clean))
    n = len(opdef.args)
    extra = args[n:]
    if extra:
        names = opdef.positional_kwargs or tuple(opdef.kwargs)
        if len(extra) > len(names):
            raise ParserTypeError(f"{op}() takes at most {n + len(names)} positional arguments but "
                                  f"{len(args)} were given", span)
        for name, value in zip(names, extra, strict=False):
            if name in kwargs:
                raise ParserTypeError(f"{op}() got multiple values for argument '{name}'", span)
            kwargs[name] = value
        args = args[:n]
    conv = to_expr or (lambda v, i: default_conv(v, i, span))
    exprs = [conv(a, i) for i, a in enumerate(args)]
    kwargs = {k: _kw_value(v) for k, v in kwargs.items()}
    try:
        return make_call(op, exprs, kwargs, span)
    except ParserTypeError:
        raise
    except UserError as exc:
        raise ParserTypeError(exc.message, span, exc.hint) from None


def _kw_value(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_kw_value(x) for x in v)
    var = getattr(v, "var", None)
    if isinstance(var, Expr) and type(v).__name__ == "DynVar":
        return var
    return v


def call_unified(name: str, args: list[Any], kwargs: dict[str, Any], span: Span,
                 to_expr: Conv | None = None) -> Expr:
    """Dispatch ``pl.<name>`` on the first operand's type."""
    if name == "full":
        return call_op("tensor.full", args, kwargs, span, True, to_expr)
    if not args:
        raise ParserTypeError(f"pl.{name}() needs at least one operand", span)
    first = args[0]
    t = first.type if isinstance(first, Expr) else None
    if isinstance(t, ScalarType) or (t is None and isinstance(first, (int, float))):
        return _scalar(name, args, kwargs, span, to_expr)
    ns = {TensorType: "tensor", TileType: "tile"}.get(type(t))
    if ns is None:
        got = "a number" if t is None else type(t).__name__.replace("Type", "")
        raise ParserTypeError(f"pl.{name}: first operand must be a Tensor or Tile, got {got}", span)
    op = name
    if name in SCALAR_FORM and len(args) > 1 and _is_scalar(args[1]):
        op = SCALAR_FORM[name]
    elif name in _BROADCAST and len(args) == 2:
        op, args = _broadcast(name, args)
    if not has_op(f"{ns}.{op}"):
        raise ParserTypeError(f"pl.{name} has no {ns.capitalize()} form", span,
                              hint=f"pl.{name} works on {'Tiles' if ns == 'tensor' else 'Tensors'} only")
    return call_op(f"{ns}.{op}", args, kwargs, span, True, to_expr)


# elementwise ops whose 2-D operands broadcast along one axis: [M, N] op [M, 1] is row_expand_<op>,
# [M, N] op [1, N] col_expand_<op> (upstream's tensor ops broadcast; 0.1.1 has the expand forms)
_BROADCAST = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "maximum": "max", "minimum": "min"}


def _broadcast(name: str, args: list[Any]) -> tuple[str, list[Any]]:
    """The expand op (and operand order) for ``pl.<name>(a, b)`` with a broadcast operand, else ``name``."""
    shapes = [getattr(getattr(a, "type", None), "shape", None) for a in args]
    if any(s is None or len(s) != 2 for s in shapes) or shapes[0] == shapes[1]:
        return name, args
    orders = [(args, shapes)]
    if name in ("add", "mul", "maximum", "minimum"):  # sub/div with the broadcast operand first have none
        orders.append((args[::-1], shapes[::-1]))
    for ordered, ((r, c), (br, bc)) in orders:
        if br == r and bc == 1 and c != 1:
            return f"row_expand_{_BROADCAST[name]}", ordered
        if bc == c and br == 1 and r != 1:
            return f"col_expand_{_BROADCAST[name]}", ordered
    return name, args


def _is_scalar(v: Any) -> bool:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return True
    return isinstance(v, Expr) and isinstance(v.type, ScalarType)


def _scalar(name: str, args: list[Any], kwargs: dict[str, Any], span: Span, to_expr: Conv | None) -> Expr:
    from pypto.ir.expr import BinOp
    from pypto.language.expr_parser import scalar_binop

    conv = to_expr or (lambda v, i: default_conv(v, i, span))
    if name == "cast":
        return _scalar_cast(args, kwargs, span, conv)
    if name not in _SCALAR_BINARY or len(args) != 2 or kwargs:
        raise ParserTypeError(f"pl.{name} needs a Tensor or Tile operand (got a scalar)", span)
    op = {"add": BinOp.Add, "sub": BinOp.Sub, "mul": BinOp.Mul, "div": BinOp.FloatDiv, "max": BinOp.Max,
          "min": BinOp.Min}[_SCALAR_BINARY[name]]
    return scalar_binop(op, conv(args[0], 0), conv(args[1], 1), span)


def _scalar_cast(args: list[Any], kwargs: dict[str, Any], span: Span, conv: Conv) -> Expr:
    """``pl.cast(scalar, dtype)``: a scalar conversion (``mode`` applies to tiles only)."""
    from pypto.ir.dtypes import DataType
    from pypto.ir.expr import UnaryExpr, UnOp

    rest = dict(kwargs)
    rest.pop("mode", None)
    dtype = args[1] if len(args) > 1 else rest.pop("target_type", None)
    if not isinstance(dtype, DataType) or len(args) > 2 or rest:
        raise ParserTypeError("pl.cast(scalar, dtype) needs a dtype such as pl.INDEX or pl.FP32", span)
    return UnaryExpr(UnOp.Cast, conv(args[0], 0), dtype, span=span)
