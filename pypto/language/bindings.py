"""Name bindings of one function body: lookup, (strict) SSA rebinding rules, branch snapshots."""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.errors import SSAViolationError
from pypto.ir.enums import ParamDirection
from pypto.ir.expr import Var
from pypto.span import Span


@dataclass
class Scope:
    """Maps source names to the IR Var they currently denote (Python rebinding semantics)."""

    strict_ssa: bool = False
    names: dict[str, Var] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    param_dirs: dict[str, ParamDirection] = field(default_factory=dict)
    unmerged: dict[str, str] = field(default_factory=dict)  # bound in an if's branch, gone after it: why

    def lookup(self, name: str) -> Var | None:
        return self.names.get(name)

    def bind(self, name: str, var: Var, span: Span) -> None:
        """Bind ``name``; under ``strict_ssa`` a second binding is an SSAViolationError."""
        if self.strict_ssa and name in self.defined:
            raise SSAViolationError(f"'{name}' is assigned more than once (strict_ssa=True)", span,
                                    hint="use a new name, or drop strict_ssa=True")
        self.names[name] = var
        self.defined.add(name)
        self.unmerged.pop(name, None)

    def snapshot(self) -> tuple[dict[str, Var], set[str]]:
        return dict(self.names), set(self.defined)

    def restore(self, snap: tuple[dict[str, Var], set[str]]) -> None:
        self.names, self.defined = dict(snap[0]), set(snap[1])
