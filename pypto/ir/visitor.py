"""Generic traversal over IR dataclasses: a read-only visitor and a rebuilding mutator.

Subclasses override ``visit_<ClassName>`` for the nodes they care about; every other node is
walked (visitor) or rebuilt only when a child changed (mutator), so untouched subtrees are shared.

Speed: each visitor class carries one dispatch table (node class -> handler, filled on first
sight), and each node class one walk plan: the fields whose declared type can hold an Expr or a
Stmt, read once from the class's annotations. Scalar fields (names, enums, dtypes) are never read.
The plan is compiled into one walker function per node class (visitor and mutator), which the
dispatch table calls directly for a class that has no ``visit_<Class>`` of its own.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from pypto.ir.expr import Expr, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import Stmt

_SKIP = frozenset({"span", "comments", "uid", "name"})
_NOT_WALKED = frozenset({"kwargs", "var_type", "result_type"})
_NODE = (Expr, Stmt)

# Walk-plan kinds: one node (or None / a non-node), a tuple of nodes, an attrs dict, anything.
ONE, MANY, ATTRS, ANY = "one", "many", "attrs", "any"
_PLANS: dict[type, tuple[tuple[str, str], ...]] = {}
_INIT: dict[type, tuple[str, ...]] = {}


def child_fields(cls: type) -> tuple[str, ...]:
    """Names of fields that may hold IR children (types and kwargs included; span/name/uid not)."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in _SKIP)


def _kind(hint: Any) -> str | None:
    """How a field of declared type ``hint`` is walked; None when it can never hold a node."""
    if hint is Any or hint is object:
        return ANY
    if isinstance(hint, type):
        return ONE if issubclass(hint, _NODE) else None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        kinds = {_kind(a) for a in args} - {None}
        return None if not kinds else kinds.pop() if len(kinds) == 1 else ANY
    if origin is tuple:
        elems = {_kind(a) for a in args if a is not Ellipsis} - {None}
        return None if not elems else MANY if elems == {ONE} else ANY
    return ANY


def walk_plan(cls: type) -> tuple[tuple[str, str], ...]:
    """``(field, kind)`` for the fields of node class ``cls`` the visitor and mutator enter (cached).

    Types and kwargs are not entered; Exprs inside ``attrs`` are. A field whose annotation cannot be
    resolved is walked as ``any`` (its value is inspected), so nothing that holds a node is skipped.
    """
    plan = _PLANS.get(cls)
    if plan is None:
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # noqa: BLE001 - unresolvable annotations: inspect every value
            hints = {}
        out = []
        for name in child_fields(cls):
            if name in _NOT_WALKED:
                continue
            kind = ATTRS if name == "attrs" else _kind(hints.get(name, Any))
            if kind is not None:
                out.append((name, kind))
        plan = _PLANS[cls] = tuple(out)
    return plan


def _init_fields(cls: type) -> tuple[str, ...]:
    names = _INIT.get(cls)
    if names is None:
        names = _INIT[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.init)
    return names


# Per node class, the body of ``generic_visit`` is compiled from its walk plan into one function (the
# technique of ``dataclasses``: source text built from field names, which are identifiers): no loop
# over the plan, no string compares of kinds, attribute reads by name. One table for the visitor, one
# for the mutator; both call the children through ``self._children`` exactly as the loops did.
_VISIT_WALKERS: dict[type, Any] = {}
_MUTATE_WALKERS: dict[type, Any] = {}


def _visit_lines(name: str, kind: str) -> list[str]:
    if kind is ONE:
        return [f"    v = node.{name}", "    if isinstance(v, _NODE):", "        table[type(v)](self, v)"]
    if kind is MANY:
        return [f"    for v in node.{name}:", "        if isinstance(v, _NODE):",
                "            table[type(v)](self, v)"]
    if kind is ATTRS:
        return [f"    v = node.{name}", "    if v:", "        for x in _attr_nodes(v):",
                "            table[type(x)](self, x)"]
    return [f"    self._visit_any(node.{name})"]


def _mutate_lines(name: str, kind: str) -> list[str]:
    if kind is ONE:  # a node or None / a non-node value
        return [f"    v = node.{name}", "    if isinstance(v, _NODE):", "        n = table[type(v)](self, v)",
                *_record(name, "        ")]
    visit = "self._visit_attrs(v)" if kind is ATTRS else "self._visit_value(v)"
    return [f"    v = node.{name}", f"    n = {visit}", *_record(name, "    ")]


def _record(name: str, indent: str) -> list[str]:
    return [f"{indent}if n is not v:", f"{indent}    if changes is None:", f"{indent}        changes = {{}}",
            f"{indent}    changes[{name!r}] = n"]


def _compile_walker(cls: type, mutate: bool) -> Any:
    plan = walk_plan(cls)
    lines = ["def walk(self, node):", "    table = self._children"]
    if mutate:
        lines.append("    changes = None")
        for name, kind in plan:
            lines.extend(_mutate_lines(name, kind))
        lines.append("    return node if changes is None else rebuild(node, changes)")
    else:
        for name, kind in plan:
            lines.extend(_visit_lines(name, kind))
    namespace = {"_NODE": _NODE, "_attr_nodes": _attr_nodes, "rebuild": rebuild}
    exec(compile("\n".join(lines), f"<walker {cls.__qualname__}>", "exec"), namespace)  # noqa: S102
    fn = namespace["walk"]
    (_MUTATE_WALKERS if mutate else _VISIT_WALKERS)[cls] = fn
    return fn


def rebuild(node: Any, changes: dict[str, Any] | None = None, /, **more: Any) -> Any:
    """``dataclasses.replace(node, **changes, **more)`` for an IR node, the field list cached per class."""
    if more:
        changes = {**changes, **more} if changes else more
    elif changes is None:
        changes = {}
    cls = type(node)
    kw = {n: changes[n] if n in changes else getattr(node, n) for n in _init_fields(cls)}
    return cls(**kw)


class _Dispatch(dict):
    """node class -> the visitor class's ``visit_<NodeClass>`` or its ``generic_visit`` (unbound)."""

    def __init__(self, visitor_cls: type) -> None:
        super().__init__()
        self.visitor_cls = visitor_cls

    def __missing__(self, node_cls: type) -> Any:
        cls = self.visitor_cls
        fn = getattr(cls, f"visit_{node_cls.__name__}", None)
        if fn is None:
            fn = cls.generic_visit
            if fn is IRVisitor.generic_visit:  # the compiled walker itself: one call less per node
                fn = _VISIT_WALKERS.get(node_cls) or _compile_walker(node_cls, mutate=False)
            elif fn is IRMutator.generic_visit:
                fn = _MUTATE_WALKERS.get(node_cls) or _compile_walker(node_cls, mutate=True)
        self[node_cls] = fn
        return fn


def _call_visit(self: Any, node: Any) -> Any:
    return self.visit(node)


class _ViaVisit:
    """The children table of a class that overrides ``visit``: every child goes through ``self.visit``."""

    def __getitem__(self, node_cls: type) -> Any:
        return _call_visit


class _Dispatching:
    """Gives every subclass its own dispatch table (a class built per call takes its table with it).

    ``generic_visit`` dispatches children through ``_children``: the same table, or, when a subclass
    overrides ``visit`` itself, a table that routes every child through that ``visit``.
    """

    _ROOT = False
    _dispatch: _Dispatch
    _children: Any

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls._dispatch = _Dispatch(cls)
        cls._children = _ViaVisit() if _overrides_visit(cls) else cls._dispatch


def _overrides_visit(cls: type) -> bool:
    for k in cls.__mro__:
        if k.__dict__.get("_ROOT"):
            return False
        if "visit" in k.__dict__:
            return True
    return False


def _attr_nodes(attrs: dict[str, Any]) -> list[Any]:
    """The Exprs (and Stmts) among an attrs dict's values, tuples of them included, in order."""
    out = []
    for item in attrs.values():
        for x in item if isinstance(item, tuple) else (item,):
            if isinstance(x, _NODE):
                out.append(x)
    return out


class IRVisitor(_Dispatching):
    """Walks statements and expressions (types and kwargs are not entered; Exprs in attrs are)."""

    _ROOT = True

    def visit(self, node: Any) -> None:
        self._dispatch[type(node)](self, node)

    def generic_visit(self, node: Any) -> None:
        cls = type(node)
        (_VISIT_WALKERS.get(cls) or _compile_walker(cls, mutate=False))(self, node)

    def _visit_any(self, value: Any) -> None:
        if isinstance(value, _NODE):
            self.visit(value)
        elif value.__class__ is tuple:
            for item in value:
                if isinstance(item, _NODE):
                    self.visit(item)

    def visit_function(self, func: Function) -> None:
        for p in func.params:
            self.visit(p)
        self.visit(func.body)

    def visit_program(self, program: Program) -> None:
        for f in program.functions:
            self.visit_function(f)



class IRMutator(_Dispatching):
    """Rebuilds the tree bottom-up; a node whose children are unchanged is returned as is."""

    _ROOT = True

    def visit(self, node: Any) -> Any:
        return self._dispatch[type(node)](self, node)

    def visit_Var(self, var: Var) -> Expr:  # noqa: N802
        return var

    def generic_visit(self, node: Any) -> Any:
        cls = type(node)
        return (_MUTATE_WALKERS.get(cls) or _compile_walker(cls, mutate=True))(self, node)

    def _visit_attrs(self, attrs: Any) -> Any:
        """Exprs (and tuples of Exprs) among attr values are rewritten too; other values are kept."""
        if not isinstance(attrs, dict) or not attrs:
            return attrs
        new: dict[str, Any] | None = None
        for k, v in attrs.items():
            if isinstance(v, (Expr, Stmt, tuple)):
                nv = self._visit_value(v)
                if nv is not v:
                    if new is None:
                        new = dict(attrs)
                    new[k] = nv
        return attrs if new is None else new

    def _visit_value(self, value: Any) -> Any:
        if isinstance(value, _NODE):
            return self._children[type(value)](self, value)
        if isinstance(value, tuple):
            return self._visit_items(value)
        return value

    def _visit_items(self, items: tuple[Any, ...]) -> tuple[Any, ...]:
        """``items`` with its nodes visited: the same tuple when none changed, else a new plain tuple."""
        table = self._children
        out: list[Any] | None = None
        for i, v in enumerate(items):
            if isinstance(v, _NODE):
                nv = table[type(v)](self, v)
                if nv is not v:
                    if out is None:
                        out = list(items)
                    out[i] = nv
        return items if out is None else tuple(out)

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
