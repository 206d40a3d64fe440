"""Upstream's ``pypto.jit.specializer``: ``@pl.jit`` functions plus call-site facts -> ``@pl.program`` source.

:func:`specialize` (or ``Specializer(name, contexts).specialize()``) writes one ``@pl.program`` class
text that ``pl.parse`` reads: each :class:`SpecializeContext` (deps first, the entry last) becomes a
``@pl.function`` method whose tensor parameters carry their concrete ``pl.Tensor[[...], dtype]``
annotations (``pl.Out``/``pl.InOut`` kept; a :class:`DynDim` axis names its ``pl.dynamic`` variable,
declared at module level), whose scalar parameters stay ``pl.Scalar[dtype]`` parameters with the
call-site value substituted in the body, as upstream does. In the body, ``t.shape``/``t.shape[i]``
and ``t.dtype`` of a tensor parameter and module-level int/float/bool constants become literals and
calls to a dep become ``self.<dep>(...)``. ``@pl.jit`` itself does not go through this text: it
parses the rewritten function directly (:mod:`pypto.jit.specialize`), with spans in the user's file.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.dtypes import DataType


@dataclass(frozen=True)
class DynDim:
    """An axis bound to a ``pl.dynamic`` variable: its Python ``name``, the ``literal`` it was made with, an extent."""

    name: str
    literal: str
    static_bound: int


ShapeDim = int | DynDim


@dataclass
class TensorMeta:
    """A tensor parameter's shape (ints and :class:`DynDim` s), dtype and annotated layout (None: ND)."""

    shape: tuple[ShapeDim, ...]
    dtype: DataType
    layout: Any = None

    def static_shape(self) -> tuple[int, ...]:
        return tuple(d.static_bound if isinstance(d, DynDim) else d for d in self.shape)

    def dynamic_dim_indices(self) -> set[int]:
        return {i for i, d in enumerate(self.shape) if isinstance(d, DynDim)}


_KINDS = {None: "Orchestration", "orchestration": "Orchestration", "incore": "InCore", "inline": "Inline",
          "opaque": "Opaque"}


@dataclass
class SpecializeContext:
    """What specializing one function needs (upstream's fields; ``level`` and externals are not used here)."""

    func_name: str
    source: str
    func_type: str | None
    level: Any
    param_names: list[str]
    tensor_meta: dict[str, TensorMeta]
    scalar_values: dict[str, int | float | bool]
    scalar_dtypes: dict[str, DataType]
    dep_names: list[str] = field(default_factory=list)
    py_globals: dict[str, Any] = field(default_factory=dict)
    orig_file: str | None = None
    orig_start_line: int = 1
    orig_col_offset: int = 0
    auto_scope: bool = True

    @property
    def dynamic_dims(self) -> set[tuple[str, int]]:
        return {(p, i) for p, m in self.tensor_meta.items() for i in m.dynamic_dim_indices()}

    def dynvar_for(self, param: str, dim_idx: int) -> str | None:
        meta = self.tensor_meta.get(param)
        d = meta.shape[dim_idx] if meta is not None and dim_idx < len(meta.shape) else None
        return d.name if isinstance(d, DynDim) else None

    def dynvar_literals(self) -> dict[str, str]:
        return {d.name: d.literal for m in self.tensor_meta.values() for d in m.shape if isinstance(d, DynDim)}


def _dims(meta: TensorMeta) -> str:
    return "[" + ", ".join(d.name if isinstance(d, DynDim) else str(d) for d in meta.shape) + "]"


def _tensor_ann(meta: TensorMeta, wrapper: str | None) -> str:
    layout = f", pl.{meta.layout.name}" if meta.layout is not None and getattr(meta.layout, "name", "ND") != "ND" else ""
    ann = f"pl.Tensor[{_dims(meta)}, pl.{meta.dtype.name}{layout}]"
    return f"pl.{wrapper}[{ann}]" if wrapper else ann


def _wrapper(ann: ast.expr | None) -> str | None:
    """``Out``/``InOut`` when the user's annotation is ``pl.Out[...]``/``pl.InOut[...]``."""
    if isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Attribute) and ann.value.attr in ("Out", "InOut"):
        return ann.value.attr
    return None


class _Body(ast.NodeTransformer):
    """Literals for scalars, shapes, dtypes and module constants; ``self.`` for dep calls."""

    def __init__(self, ctx: SpecializeContext, bound: set[str]) -> None:
        self.ctx, self.bound = ctx, bound

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if not isinstance(node.ctx, ast.Load):
            return node
        if node.id in self.ctx.scalar_values:
            return ast.copy_location(ast.Constant(self.ctx.scalar_values[node.id]), node)
        value = self.ctx.py_globals.get(node.id)
        if node.id not in self.bound and isinstance(value, bool | int | float) and node.id not in self.ctx.param_names:
            return ast.copy_location(ast.Constant(value), node)
        return node

    def _shape(self, node: ast.expr) -> TensorMeta | None:
        if isinstance(node, ast.Attribute) and node.attr == "shape" and isinstance(node.value, ast.Name):
            return self.ctx.tensor_meta.get(node.value.id)
        return None

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        meta = self._shape(node.value)
        if meta is not None and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
            d = meta.shape[node.slice.value]
            return ast.copy_location(ast.Name(d.name, ast.Load()) if isinstance(d, DynDim) else ast.Constant(d), node)
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        meta = self._shape(node)
        if meta is not None:
            elts: list[ast.expr] = [ast.Name(d.name, ast.Load()) if isinstance(d, DynDim) else ast.Constant(d)
                                    for d in meta.shape]
            return ast.copy_location(ast.Tuple(elts, ast.Load()), node)
        if node.attr == "dtype" and isinstance(node.value, ast.Name) and node.value.id in self.ctx.tensor_meta:
            name = self.ctx.tensor_meta[node.value.id].dtype.name
            return ast.copy_location(ast.Attribute(ast.Name("pl", ast.Load()), name, ast.Load()), node)
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.ctx.dep_names:
            node.func = ast.copy_location(ast.Attribute(ast.Name("self", ast.Load()), node.func.id, ast.Load()),
                                          node.func)
        return node


def _bound_names(fdef: ast.FunctionDef) -> set[str]:
    """Names the body assigns (they shadow module constants of the same name)."""
    return {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


class Specializer:
    """``Specializer(class_name, contexts).specialize()`` -> the ``@pl.program`` source (entry context last)."""

    def __init__(self, class_name: str, contexts: list[SpecializeContext]) -> None:
        if not contexts:
            raise ValueError("Specializer needs at least one SpecializeContext (the entry function last)")
        self._class_name, self._contexts = class_name, contexts

    def specialize(self) -> str:
        dynvars: dict[str, str] = {}
        for ctx in self._contexts:
            dynvars.update(ctx.dynvar_literals())
        head = ["import pypto.language as pl", "", *(f"{n} = pl.dynamic({lit!r})" for n, lit in dynvars.items())]
        methods = [textwrap.indent(self._function(ctx), "    ") for ctx in self._contexts]
        return "\n".join([*head, "", "", "@pl.program", f"class {self._class_name}:", "\n\n".join(methods)]) + "\n"

    def _function(self, ctx: SpecializeContext) -> str:
        tree = ast.parse(textwrap.dedent(ctx.source))
        fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
        if fdef is None:
            raise ValueError(f"SpecializeContext {ctx.func_name!r}: the source holds no function definition")
        if ctx.func_type not in _KINDS:
            raise ValueError(f"SpecializeContext {ctx.func_name!r}: func_type {ctx.func_type!r} is not one of "
                             f"{sorted(k for k in _KINDS if k)}")
        anns = {a.arg: a.annotation for a in fdef.args.args}
        params = ["self"]
        for name in ctx.param_names:
            if name in ctx.tensor_meta:
                params.append(f"{name}: {_tensor_ann(ctx.tensor_meta[name], _wrapper(anns.get(name)))}")
            elif name in ctx.scalar_dtypes:
                params.append(f"{name}: pl.Scalar[pl.{ctx.scalar_dtypes[name].name}]")
            else:
                raise ValueError(f"SpecializeContext {ctx.func_name!r}: parameter {name!r} is neither a tensor "
                                 "(tensor_meta) nor a scalar (scalar_dtypes)")
        body = [_Body(ctx, _bound_names(fdef)).visit(stmt) for stmt in fdef.body]
        text = "\n".join(ast.unparse(ast.fix_missing_locations(s)) for s in body)
        scope = "" if ctx.auto_scope else ", auto_scope=False"
        ret = self._returns(ctx, fdef)
        return (f"@pl.function(type=pl.FunctionType.{_KINDS[ctx.func_type]}{scope})\n"
                f"def {ctx.func_name}({', '.join(params)}){ret}:\n{textwrap.indent(text, '    ')}")

    @staticmethod
    def _returns(ctx: SpecializeContext, fdef: ast.FunctionDef) -> str:
        """The user's return annotation, else the tensor type of ``return <param>`` (or a tuple of them)."""
        if fdef.returns is not None:
            return f" -> {ast.unparse(fdef.returns)}"
        rets = [n.value for n in ast.walk(fdef) if isinstance(n, ast.Return) and n.value is not None]
        if not rets:
            return ""
        names = rets[-1].elts if isinstance(rets[-1], ast.Tuple) else [rets[-1]]
        if not all(isinstance(n, ast.Name) and n.id in ctx.tensor_meta for n in names):
            return ""
        types = [_tensor_ann(ctx.tensor_meta[n.id], None) for n in names]  # type: ignore[union-attr]
        return f" -> {types[0]}" if len(types) == 1 else f" -> tuple[{', '.join(types)}]"


def specialize(class_name: str, contexts: list[SpecializeContext]) -> str:
    """The ``@pl.program`` source of ``contexts`` (deps first, the entry last), ready for ``pl.parse``."""
    return Specializer(class_name, contexts).specialize()


def build_specialize_context(func: Any, func_name: str, func_type: str | None, level: Any,
                             tensor_meta: dict[str, TensorMeta], scalar_values: dict[str, int | float | bool],
                             scalar_dtypes: dict[str, DataType], dep_names: list[str], auto_scope: bool = True,
                             **_externals: Any) -> SpecializeContext:
    """The context of Python function ``func`` (its source, parameters, globals and place in its file)."""
    func = getattr(func, "func", func)  # a JITFunction: its Python function
    lines, start = inspect.getsourcelines(func)
    raw = "".join(lines)
    source = textwrap.dedent(raw)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    params = [p for p in inspect.signature(func).parameters if p != "self"]
    return SpecializeContext(func_name, source, func_type, level, params, dict(tensor_meta), dict(scalar_values),
                             dict(scalar_dtypes), list(dep_names), dict(func.__globals__),
                             inspect.getsourcefile(func), start, indent, auto_scope)


__all__ = ["DynDim", "ShapeDim", "SpecializeContext", "Specializer", "TensorMeta", "build_specialize_context",
           "specialize"]
