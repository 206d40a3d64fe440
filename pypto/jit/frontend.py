"""Bridge from the jit layer to the DSL frontend: parse specialized source; specialize called deps.

:mod:`pypto.jit.decorator` registers :func:`dep_call` as the frontend's handler for calls to jit kernels.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

from pypto.errors import ParserTypeError
from pypto.ir.expr import ConstFloat, ConstInt
from pypto.ir.function import Function
from pypto.ir.types import ScalarType, TensorType
from pypto.jit.meta import TensorMeta
from pypto.jit.signature import scalar_param_dtype
from pypto.span import Span


def parse_jit_function(text: str, *, filename: str, line_offset: int, col_offset: int,
                       env: dict[str, Any], specialized: frozenset[str] = frozenset()) -> tuple[Function, list[Function]]:
    """Parse one specialized ``@pl.function`` text; returns it and the functions it calls.

    ``specialized`` names the function's scalar parameters that were specialized to the values in ``env``;
    only those are passed on as constants when it calls other jit kernels.
    """
    from pypto.language import jit_support
    from pypto.language.expr_parser import ProgramCtx

    ctx = ProgramCtx(jit_scalars=specialized)
    func = jit_support.parse_jit_function(text, filename=filename, line_offset=line_offset,
                                          col_offset=col_offset, env=env, program=ctx)
    return func, list(ctx.externals.values())


def dep_call(parser: Any, target: Any, node: ast.Call, span: Span) -> Any:
    """A call to another jit kernel inside a jit body: specialize it on the argument types."""
    args, kwargs = parser.call_args(node)
    if kwargs:
        raise ParserTypeError(f"call to @pl.jit.{target.kind} '{target.__name__}': keyword arguments are "
                              "not supported; pass arguments positionally", span)
    names = list(target._sig.parameters)
    if len(args) != len(names):
        raise ParserTypeError(f"'{target.__name__}' takes {len(names)} arguments but {len(args)} were given", span)
    metas: dict[str, TensorMeta] = {}
    scalars: dict[str, Any] = {}
    runtime: dict[int, Any] = {}  # argument index -> the dtype of a scalar that stays a runtime parameter
    specialized = parser.program.jit_scalars if parser.program is not None else frozenset()
    for i, (pname, value) in enumerate(zip(names, args, strict=True)):
        t = getattr(value, "type", None)
        dtype = scalar_param_dtype(target, pname)
        if isinstance(t, TensorType) and t.static_shape() is not None:
            metas[pname] = TensorMeta(t.static_shape(), t.dtype, _strides(t))  # type: ignore[arg-type]
        elif isinstance(t, TensorType) and not _bare_tensor_param(target, pname):
            continue  # dynamic dims: the callee's own annotation (pl.dynamic names) types it
        elif dtype is not None and not _passes_specialized(node.args[i], specialized):
            if not isinstance(value, int | float | bool) and not isinstance(t, ScalarType):
                raise ParserTypeError(f"argument '{pname}' of '{target.__name__}' must be a scalar, got {t}", span)
            runtime[i] = dtype  # a pl.Scalar parameter stays a runtime argument of the task
        elif isinstance(value, int | float | bool):
            scalars[pname] = value
        elif isinstance(t, ScalarType):
            raise ParserTypeError(f"argument '{pname}' of '{target.__name__}' is a runtime scalar; annotate the "
                                  f"parameter as pl.Scalar[dtype] to pass it at run time", span)
        else:
            raise ParserTypeError(f"argument '{pname}' of '{target.__name__}' must be a statically shaped "
                                  f"Tensor or a constant, got {t}", span)
    externals = parser.program.externals if parser.program else {}
    for n in range(len(externals) + 1):
        func = target.specialize_dep(metas, scalars, n)
        prev = externals.get(func.name)
        if prev is None or prev is func:
            # the specialized parameters left the callee's signature: their arguments go too
            kept = [i for i, pname in enumerate(names) if pname not in scalars]
            call = ast.copy_location(ast.Call(node.func, [node.args[i] for i in kept], node.keywords), node)
            typed = {kept.index(i): dtype for i, dtype in runtime.items()}
            return _typed_literals(parser._external_call(func, call, span), typed)
    raise AssertionError("unreachable: a free function name always exists")


def _strides(t: TensorType) -> tuple[int, ...] | None:
    """The static strides of a strided view (a transposed tensor), None for a dense row-major tensor."""
    st = t.view.stride if t.view is not None else None
    if st is None or not all(isinstance(d, int) for d in st):
        return None
    return tuple(st)  # type: ignore[arg-type]


def _passes_specialized(arg: ast.expr, specialized: frozenset[str]) -> bool:
    """Is the argument one of the caller's own specialized scalar parameters (then the callee is
    specialized on its value too, as upstream does)? A literal stays a runtime argument."""
    return isinstance(arg, ast.Name) and arg.id in specialized


def _typed_literals(call: Any, runtime: dict[int, Any]) -> Any:
    """Literal runtime-scalar arguments take the parameter's dtype (``2`` for an FP32 parameter is 2.0)."""
    args = list(call.args)
    for i, dtype in runtime.items():
        a = args[i]
        if isinstance(a, ConstInt | ConstFloat) and a.dtype is not dtype:
            if not dtype.is_float and a.value != int(a.value):
                raise ParserTypeError(f"argument {a.value} of '{call.op.name}' is passed to a "
                                      f"{dtype.value} parameter and is not an integer", a.span)
            value = float(a.value) if dtype.is_float else int(a.value)
            args[i] = (ConstFloat if dtype.is_float else ConstInt)(value, dtype, span=a.span)
    return dataclasses.replace(call, args=tuple(args)) if args != list(call.args) else call


def _bare_tensor_param(target: Any, pname: str) -> bool:
    """Is the callee parameter annotated with a bare ``pl.Tensor`` (shape taken from the argument)?"""
    from pypto.jit.specialize import is_bare_tensor_annotation, source_info

    tree = source_info(target.func).tree
    arg = next((a for a in tree.args.args if a.arg == pname), None)
    return arg is not None and arg.annotation is not None and is_bare_tensor_annotation(arg.annotation)
