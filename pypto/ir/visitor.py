"""Generic traversal over IR dataclasses: a read-only visitor and a rebuilding mutator.

Subclasses override ``visit_<ClassName>`` for the nodes they care about; every other node is
walked (visitor) or rebuilt only when a child changed (mutator), so untouched subtrees are shared.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pypto.ir.expr import Expr, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import Stmt

_SKIP = frozenset({"span", "comments", "uid", "name"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(cls: type) -> tuple[str, ...]:
    """Names of fields that may hold IR children (cached per class)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _SKIP)
        _FIELDS[cls] = names
    return names


def _is_node(v: Any) -> bool:
    return isinstance(v, (Expr, Stmt))


_NOT_WALKED = frozenset({"kwargs", "var_type", "result_type"})
_WALK: dict[type, tuple[str, ...]] = {}
_MISSING = object()


def _walk_fields(cls: type) -> tuple[str, ...]:
    """The child fields the visitor and mutator enter (types and kwargs are not; Exprs in attrs are)."""
    names = _WALK.get(cls)
    if names is None:
        names = _WALK[cls] = tuple(n for n in child_fields(cls) if n not in _NOT_WALKED)
    return names


def _handler(visitor_cls: type, node_cls: type) -> Any:
    """``visitor_cls.visit_<NodeClass>`` or None, looked up once per (visitor class, node class).

    The table lives on the visitor class itself, so a class built per call takes its table with it.
    """
    table = visitor_cls.__dict__.get("_ir_handlers")
    if table is None:
        table = {}
        type.__setattr__(visitor_cls, "_ir_handlers", table)
    fn = table.get(node_cls, _MISSING)
    if fn is _MISSING:
        fn = table[node_cls] = getattr(visitor_cls, f"visit_{node_cls.__name__}", None)
    return fn


class IRVisitor:
    """Walks statements and expressions (types and kwargs are not entered; Exprs in attrs are)."""

    def visit(self, node: Any) -> None:
        method = _handler(type(self), type(node))
        if method is not None:
            method(self, node)
        else:
            self.generic_visit(node)

    def generic_visit(self, node: Any) -> None:
        for name in _walk_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, (Expr, Stmt)):
                self.visit(value)
            elif value.__class__ is tuple:
                for item in value:
                    if isinstance(item, (Expr, Stmt)):
                        self.visit(item)
            elif name == "attrs" and value:  # Exprs in attrs (a call's dependency task ids, SPMD block count)
                for item in value.values():
                    for x in item if isinstance(item, tuple) else (item,):
                        if isinstance(x, (Expr, Stmt)):
                            self.visit(x)

    def visit_function(self, func: Function) -> None:
        for p in func.params:
            self.visit(p)
        self.visit(func.body)

    def visit_program(self, program: Program) -> None:
        for f in program.functions:
            self.visit_function(f)


class IRMutator:
    """Rebuilds the tree bottom-up; a node whose children are unchanged is returned as is."""

    def visit(self, node: Any) -> Any:
        method = _handler(type(self), type(node))
        if method is not None:
            return method(self, node)
        return self.generic_visit(node)

    def visit_Var(self, var: Var) -> Expr:  # noqa: N802
        return var

    def generic_visit(self, node: Any) -> Any:
        changes: dict[str, Any] = {}
        for name in _walk_fields(type(node)):
            value = getattr(node, name)
            if name == "attrs":
                new = self._visit_attrs(value)
                if new is not value:
                    changes[name] = new
                continue
            new = self._visit_value(value)
            if new is not value:
                changes[name] = new
        return dataclasses.replace(node, **changes) if changes else node

    def _visit_attrs(self, attrs: Any) -> Any:
        """Exprs (and tuples of Exprs) among attr values are rewritten too; other values are kept."""
        if not isinstance(attrs, dict):
            return attrs
        new = {k: self._visit_value(v) for k, v in attrs.items()}
        return attrs if all(new[k] is v for k, v in attrs.items()) else new

    def _visit_value(self, value: Any) -> Any:
        if _is_node(value):
            return self.visit(value)
        if isinstance(value, tuple) and any(_is_node(v) for v in value):
            new = tuple(self.visit(v) if _is_node(v) else v for v in value)
            return value if all(a is b for a, b in zip(new, value, strict=True)) else new
        return value

    def visit_function(self, func: Function) -> Function:
        body = self.visit(func.body)
        return func if body is func.body else func.with_(body=body)

    def visit_program(self, program: Program) -> Program:
        funcs = [self.visit_function(f) for f in program.functions]
        if all(a is b for a, b in zip(funcs, program.functions, strict=True)):
            return program
        return program.with_functions(funcs)


class Substitute(IRMutator):
    """Replace Vars by expressions (``mapping`` keyed by Var identity)."""

    def __init__(self, mapping: dict[Var, Expr]) -> None:
        self.mapping = mapping

    def visit_Var(self, var: Var) -> Expr:  # noqa: N802
        return self.mapping.get(var, var)

    def visit_IterArg(self, var: Var) -> Expr:  # noqa: N802
        return self.mapping.get(var, var)


def substitute(node: Any, mapping: dict[Var, Expr]) -> Any:
    """``node`` with every occurrence of a mapped Var replaced (definitions included)."""
    return Substitute(mapping).visit(node) if mapping else node
