"""External kernels: ``@pl.function(type=AIV|AIC, external_source="k.cpp")`` with a ``...`` body.

The function declares only its signature; its implementation is a hand-written C++ file with the
runtime's uniform entry ``kernel_entry(__gm__ int64_t* args)`` (tensor ``ChipTensor*`` slots first, in
parameter order, then the scalars). pypto generates no PTO for it: the artifact's kernel source
includes the file at its own path, so its relative ``#include``s keep resolving.
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING

from pypto.errors import ParserSyntaxError, ParserTypeError, UserError
from pypto.ir.enums import FunctionType
from pypto.ir.function import Function
from pypto.ir.stmt import SeqStmts
from pypto.ir.types import ScalarType, TensorType

if TYPE_CHECKING:
    from pypto.language.function_parser import FuncOptions
    from pypto.language.source import Source

ATTR = "external_source"
_CORE_TYPES = (FunctionType.AIV, FunctionType.AIC)


def _is_ellipsis_body(fdef: ast.FunctionDef) -> bool:
    body = list(fdef.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return bool(body) and all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                              and s.value.value is Ellipsis for s in body)


def resolve_source(path: str, source: Source) -> str:
    """``path`` made absolute against the directory of the file that defines the program."""
    if not os.path.isabs(path) and source.file and not source.file.startswith("<"):
        path = os.path.join(os.path.dirname(os.path.abspath(source.file)), path)
    return os.path.realpath(path)


def external_function(fdef: ast.FunctionDef, opts: FuncOptions, sig: tuple, attrs: dict,
                      source: Source) -> Function:
    """The signature-only Function of an external kernel (its body is empty)."""
    span = source.span(fdef)
    name = fdef.name
    if opts.func_type not in _CORE_TYPES:
        raise ParserTypeError(f"external_source is only valid on FunctionType.AIV or FunctionType.AIC, got "
                              f"FunctionType.{opts.func_type.name} for '{name}'", span,
                              hint="declare the external kernel with type=pl.FunctionType.AIV (or AIC)")
    if not _is_ellipsis_body(fdef):
        raise ParserSyntaxError(f"external kernel '{name}' must have a '...' body: its implementation is the "
                                f"C++ file {opts.external_source!r}", span,
                                hint="replace the function body with a bare '...'")
    params, dirs, rets = sig
    for p in params:
        if not isinstance(p.type, TensorType | ScalarType):
            raise ParserTypeError(f"external kernel '{name}' parameter '{p.name}' is a {type(p.type).__name__}; "
                                  "an external kernel takes tensors and scalars only", span,
                                  hint="pass GM tensors (pl.Tensor[...]) and scalars (pl.Scalar[...])")
    path = resolve_source(str(opts.external_source), source)
    if not os.path.isfile(path):
        raise UserError(f"external kernel '{name}': source file not found: {path}", span,
                        hint="give an absolute path, or one relative to the file that defines the program")
    attrs = {**attrs, ATTR: path}
    return Function(name, tuple(params), tuple(dirs), rets, SeqStmts((), span=span), opts.func_type,
                    opts.level, opts.role, attrs, span=span)

