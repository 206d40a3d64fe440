"""Bridge from the jit layer to the DSL frontend: parse specialized source; specialize called deps.

:mod:`pypto.jit.decorator` registers :func:`dep_call` as the frontend's handler for calls to jit kernels.
"""

from __future__ import annotations

import ast
from typing import Any

from pypto.errors import ParserTypeError
from pypto.ir.function import Function
from pypto.ir.types import ScalarType, TensorType
from pypto.jit.meta import TensorMeta
from pypto.span import Span


def parse_jit_function(text: str, *, filename: str, line_offset: int, col_offset: int,
                       env: dict[str, Any]) -> tuple[Function, list[Function]]:
    """Parse one specialized ``@pl.function`` text; returns it and the functions it calls."""
    from pypto.language import jit_support
    from pypto.language.expr_parser import ProgramCtx

    ctx = ProgramCtx()
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
    for pname, value in zip(names, args, strict=True):
        t = getattr(value, "type", None)
        if isinstance(t, TensorType) and t.static_shape() is not None:
            metas[pname] = TensorMeta(t.static_shape(), t.dtype)  # type: ignore[arg-type]
        elif isinstance(t, TensorType) and not _bare_tensor_param(target, pname):
            continue  # dynamic dims: the callee's own annotation (pl.dynamic names) types it
        elif isinstance(value, int | float | bool):
            scalars[pname] = value
        elif isinstance(t, ScalarType):
            raise ParserTypeError(f"argument '{pname}' of '{target.__name__}' is a runtime scalar; "
                                  "jit deps are specialized on constant scalars only", span)
        else:
            raise ParserTypeError(f"argument '{pname}' of '{target.__name__}' must be a statically shaped "
                                  f"Tensor or a constant, got {t}", span)
    externals = parser.program.externals if parser.program else {}
    for n in range(len(externals) + 1):
        func = target.specialize_dep(metas, scalars, n)
        prev = externals.get(func.name)
        if prev is None or prev is func:
            return parser._external_call(func, node, span)
    raise AssertionError("unreachable: a free function name always exists")


def _bare_tensor_param(target: Any, pname: str) -> bool:
    """Is the callee parameter annotated with a bare ``pl.Tensor`` (shape taken from the argument)?"""
    from pypto.jit.specialize import is_bare_tensor_annotation, source_info

    tree = source_info(target.func).tree
    arg = next((a for a in tree.args.args if a.arg == pname), None)
    return arg is not None and arg.annotation is not None and is_bare_tensor_annotation(arg.annotation)
