"""Turn a ``@pl.jit`` Python function plus sample-argument metadata into an ``ir.Program``.

The function's own source is re-parsed by the DSL frontend with its real file name and line
numbers, so every span (and every error) points into the user's file. Only the signature changes:
bare ``pl.Tensor`` annotations get the sample shape and dtype, and a missing return annotation is
synthesized from ``return <param>``. Specialized scalar parameters are supplied as constants that the
frontend folds; an entry function keeps those annotated ``pl.Scalar[dtype]`` (or a bare dtype) as
parameters, as upstream does, and the others leave the signature.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any

from pypto.errors import UserError
from pypto.jit.meta import TensorMeta


@dataclass(frozen=True)
class SourceInfo:
    """The dedented source of a function and where it sits in its file."""

    text: str
    filename: str
    first_line: int
    indent: int
    tree: ast.FunctionDef


def source_info(func: Any) -> SourceInfo:
    """Read and parse the function's source (TypeError when Python cannot show it)."""
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        raise TypeError(f"@pl.jit needs the source of '{func.__name__}' ({exc}); define it in a .py file") from None
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    indent = len(lines[0]) - len(lines[0].lstrip())
    tree = ast.parse(text).body[0]
    if not isinstance(tree, ast.FunctionDef):
        raise TypeError(f"@pl.jit can only decorate a plain 'def' function, not {type(tree).__name__}")
    return SourceInfo(text, inspect.getsourcefile(func) or "<unknown>", first, indent, tree)


def check_name(fn: Any, what: str = "@pl.jit function name") -> str:
    """``fn.__name__``, which names the program (``_jit_<name>``), its output and cache directories, when it
    is a valid symbol (:func:`pypto.artifact.names.check_symbol`); else a UserError at the ``def``."""
    from pypto.artifact.names import check_symbol, symbol_problem
    from pypto.span import Span

    name = fn.__name__
    if symbol_problem(name) is None:
        return name
    span = None
    try:
        info = source_info(fn.func)
        span = Span(info.filename, info.first_line + info.tree.lineno - 1, info.indent + info.tree.col_offset + 1)
    except (TypeError, SyntaxError):
        pass
    return check_symbol(name, what, span)


def type_text(meta: TensorMeta, dynamic: dict[int, str] | None = None) -> str:
    """``pl.Tensor[[dims], pl.DTYPE(, view)]`` of a sample; ``dynamic`` names the ``pl.dynamic`` of some axes."""
    dims = ", ".join((dynamic or {}).get(i, str(d)) for i, d in enumerate(meta.shape))
    if meta.stride is not None:
        layout = "ND" if meta.stride[-1] == 1 else "DN"
        view = f"pl.TensorView(stride=[{', '.join(str(d) for d in meta.stride)}], layout=pl.TensorLayout.{layout})"
        return f"pl.Tensor[[{dims}], pl.{meta.dtype.value}, {view}]"
    return f"pl.Tensor[[{dims}], pl.{meta.dtype.value}]"


def _is_bare_tensor(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "Tensor"


def _wrapper(node: ast.expr) -> str | None:
    """'Out'/'InOut' when the annotation is ``pl.Out[...]``/``pl.InOut[...]``."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr in ("Out", "InOut"):
        return node.value.attr
    return None


def _annotation(info: SourceInfo, arg: ast.arg, meta: TensorMeta | None,
                dynamic: dict[int, str] | None = None) -> str | None:
    """The replacement text of one parameter's annotation, or None to keep it."""
    ann = arg.annotation
    if ann is None:
        return None
    wrap = _wrapper(ann)
    inner = ann.slice if wrap else ann  # type: ignore[attr-defined]
    if not _is_bare_tensor(inner):
        return None
    if meta is None:
        raise TypeError(f"bare 'pl.Tensor' annotation of parameter '{arg.arg}' needs a sample tensor "
                        "(pass one to compile(...) or write pl.Tensor[[shape], dtype])")
    text = type_text(meta, dynamic)
    return f"pl.{wrap}[{text}]" if wrap else text


def bound_dynamic(info: SourceInfo) -> dict[str, dict[int, str]]:
    """Per parameter, ``{axis: name}`` of the body's top-level ``param.bind_dynamic(axis, NAME)`` calls.

    Upstream's way to make an axis of a bare ``pl.Tensor`` parameter a ``pl.dynamic`` one; the call
    itself is a no-op in the body (the parser checks and drops it).
    """
    params = {a.arg for a in info.tree.args.args}
    out: dict[str, dict[int, str]] = {}
    for stmt in info.tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "bind_dynamic" and isinstance(call.func.value, ast.Name)
                and call.func.value.id in params and len(call.args) == 2 and not call.keywords):
            continue
        axis, name = call.args
        if isinstance(axis, ast.Constant) and isinstance(axis.value, int) and isinstance(name, ast.Name):
            out.setdefault(call.func.value.id, {})[axis.value] = name.id
    return out


def is_bare_tensor_annotation(ann: ast.expr) -> bool:
    """``pl.Tensor``, ``pl.Out[pl.Tensor]`` or ``pl.InOut[pl.Tensor]`` (shape from the sample)."""
    inner = ann.slice if _wrapper(ann) else ann  # type: ignore[attr-defined]
    return _is_bare_tensor(inner)


def dynamic_axes(info: SourceInfo, env: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Per parameter, the axes its annotation declares with ``pl.dynamic`` names."""
    from pypto.language.types import DynVar

    out: dict[str, tuple[int, ...]] = {}
    binds = bound_dynamic(info)
    for arg in info.tree.args.args:
        ann = arg.annotation
        if ann is None or is_bare_tensor_annotation(ann):
            axes = tuple(sorted(i for i, n in binds.get(arg.arg, {}).items() if isinstance(env.get(n), DynVar)))
            if axes:
                out[arg.arg] = axes
            continue
        inner = ann.slice if _wrapper(ann) else ann  # type: ignore[attr-defined]
        if not (isinstance(inner, ast.Subscript) and isinstance(inner.slice, ast.Tuple) and inner.slice.elts
                and isinstance(inner.slice.elts[0], ast.List)):
            continue
        dims = inner.slice.elts[0].elts
        axes = tuple(i for i, d in enumerate(dims) if isinstance(d, ast.Name) and isinstance(env.get(d.id), DynVar))
        if axes:
            out[arg.arg] = axes
    return out


def _segment_offsets(text: str) -> list[int]:
    offs = [0]
    for line in text.splitlines(keepends=True):
        offs.append(offs[-1] + len(line))
    return offs


def rewrite_signature(info: SourceInfo, metas: dict[str, TensorMeta], scalars: dict[str, Any],
                      decorator: str, keep: frozenset[str] = frozenset()) -> str:
    """Source text with the specialized signature; body lines keep their line and column.

    A specialized scalar in ``keep`` stays a parameter (its ``pl.Scalar`` annotation kept, its value
    still folded into the body); the others are removed.
    """
    scalars = {k: v for k, v in scalars.items() if k not in keep}
    tree = info.tree
    binds = bound_dynamic(info)
    offs = _segment_offsets(info.text)
    pos = lambda line, col: offs[line - 1] + col  # noqa: E731
    edits: list[tuple[int, int, str]] = []
    for dec in tree.decorator_list:
        start = pos(dec.lineno, dec.col_offset) - 1  # include the '@'
        edits.append((start, pos(dec.end_lineno, dec.end_col_offset), decorator if dec is tree.decorator_list[0] else ""))
    args = tree.args.args
    defaults = dict(zip([a.arg for a in args[len(args) - len(tree.args.defaults):]], tree.args.defaults,
                        strict=True))
    ends = [pos(d.end_lineno, d.end_col_offset) if (d := defaults.get(a.arg)) is not None else
            pos(a.end_lineno, a.end_col_offset) for a in args]
    tail = len(args)  # the removed parameters at the end go in one edit (keeps a trailing comma valid)
    while tail > 0 and args[tail - 1].arg in scalars:
        tail -= 1
    if tail < len(args):
        edits.append(_tail_removal(info.text, pos, args, ends, tail))
    for i, arg in enumerate(args[:tail]):
        if arg.arg in scalars:  # specialized: removed up to the next parameter
            edits.append((pos(arg.lineno, arg.col_offset), pos(args[i + 1].lineno, args[i + 1].col_offset), ""))
            continue
        if arg.arg in defaults:  # defaults fill signature-mode scalars; the DSL signature has none
            edits.append((pos(arg.end_lineno, arg.end_col_offset), ends[i], ""))
        new = _annotation(info, arg, metas.get(arg.arg), binds.get(arg.arg))
        if new is not None and arg.annotation is not None:
            a = arg.annotation
            edits.append((pos(a.lineno, a.col_offset), pos(a.end_lineno, a.end_col_offset), new))
    if tree.returns is None:
        ret = _return_text(tree, metas)
        if ret:
            colon = _def_colon(info.text, offs, tree)
            edits.append((colon, colon, f" -> {ret}"))
    out = info.text
    for start, end, new in sorted(edits, reverse=True):
        lost = out.count("\n", start, end) - new.count("\n")  # keep the line count: body spans stay put
        out = out[:start] + new + "\n" * max(lost, 0) + out[end:]
    return out


def _tail_removal(text: str, pos: Any, args: list[ast.arg], ends: list[int], tail: int) -> tuple[int, int, str]:
    """The edit deleting parameters ``tail..`` (all specialized): from the end of the last kept one, or,
    when none is kept, from the first one through a trailing comma (``def f(n,)`` -> ``def f()``)."""
    end = ends[-1]
    if tail > 0:
        return ends[tail - 1], end, ""
    rest = text[end:]
    stripped = rest.lstrip()
    if stripped.startswith(","):
        end += len(rest) - len(stripped) + 1
    return pos(args[0].lineno, args[0].col_offset), end, ""


def _def_colon(text: str, offs: list[int], tree: ast.FunctionDef) -> int:
    """Offset of the ':' that ends the def header (just before the first body statement)."""
    body_start = offs[tree.body[0].lineno - 1]
    idx = text.rfind(":", 0, body_start)
    if idx < 0:
        raise UserError("cannot find the end of the def header", None)
    return idx


def _return_text(tree: ast.FunctionDef, metas: dict[str, TensorMeta]) -> str | None:
    rets = [n for n in ast.walk(tree) if isinstance(n, ast.Return) and n.value is not None]
    if not rets:
        return None
    value = rets[-1].value
    names = value.elts if isinstance(value, ast.Tuple) else [value]
    declared = {a.arg: a.annotation for a in tree.args.args if a.annotation is not None}
    texts = []
    for n in names:
        if isinstance(n, ast.Name) and n.id in declared and not is_bare_tensor_annotation(declared[n.id]):
            ann = declared[n.id]  # the declared type (pl.dynamic axes stay dynamic)
            texts.append(ast.unparse(ann.slice if _wrapper(ann) else ann))  # type: ignore[attr-defined]
        elif isinstance(n, ast.Name) and n.id in metas:
            texts.append(type_text(metas[n.id]))
        else:
            return None
    return texts[0] if len(texts) == 1 else f"tuple[{', '.join(texts)}]"


def scalar_literal(name: str, value: Any) -> Any:
    if isinstance(value, bool | int | float):
        return value
    raise TypeError(f"parameter '{name}': unsupported sample value of type {type(value).__name__}")
