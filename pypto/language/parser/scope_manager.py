"""``ScopeManager``: nested variable scopes of a DSL body, with SSA checking (upstream's parser helper)."""

from __future__ import annotations

from typing import Any

from pypto.errors import ScopeIsolationError, SSAViolationError
from pypto.span import Span


class ScopeManager:
    """A stack of scopes. Lookups see enclosing scopes; a name defined in a scope is dropped when it
    closes unless leaked (``exit_scope(leak_vars=True)``) or yielded. With ``strict_ssa`` a name may be
    defined once per scope (``allow_redef`` lifts that for one definition)."""

    def __init__(self, strict_ssa: bool = False) -> None:
        self.strict_ssa = strict_ssa
        self.scopes: list[dict[str, Any]] = []
        self.scope_types: list[str] = []
        self.yielded: list[set[str]] = []

    def enter_scope(self, scope_type: str) -> None:
        self.scopes.append({})
        self.scope_types.append(scope_type)
        self.yielded.append(set())

    def exit_scope(self, leak_vars: bool = False) -> dict[str, Any]:
        """Close the innermost scope and return its names; leaked names go to the enclosing scope."""
        if not self.scopes:
            raise ScopeIsolationError("exit_scope() with no open scope")
        names = self.scopes.pop()
        self.scope_types.pop()
        self.yielded.pop()
        if leak_vars and self.scopes:
            self.scopes[-1].update(names)
        return names

    def define_var(self, name: str, value: Any, allow_redef: bool = False, span: Any | None = None) -> None:
        if not self.scopes:
            raise ScopeIsolationError(f"'{name}' defined outside any scope", span if isinstance(span, Span) else None)
        if self.strict_ssa and not allow_redef and name in self.scopes[-1]:
            raise SSAViolationError(f"variable '{name}' is assigned twice in one scope (SSA)",
                                    span if isinstance(span, Span) else None)
        self.scopes[-1][name] = value

    def lookup_var(self, name: str) -> Any | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def is_defined(self, name: str) -> bool:
        return any(name in scope for scope in self.scopes)

    def mark_yielded(self, var_name: str) -> None:
        if self.yielded:
            self.yielded[-1].add(var_name)

    def get_yielded_vars(self, scope_id: int | None = None) -> set[str]:
        """The names yielded in the innermost scope, or in scope ``scope_id`` (0 = outermost)."""
        if not self.yielded:
            return set()
        return set(self.yielded[-1 if scope_id is None else scope_id])

    def current_scope_type(self) -> str:
        return self.scope_types[-1] if self.scope_types else ""

    def in_scope_type(self, scope_type: str) -> bool:
        return scope_type in self.scope_types


__all__ = ["SSAViolationError", "ScopeIsolationError", "ScopeManager"]
