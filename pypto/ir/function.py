"""Functions and programs."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pypto.errors import UserError
from pypto.ir.enums import (
    FUNCTION_TYPE_LEVEL,
    INCORE_TYPES,
    ORCH_TYPES,
    FunctionType,
    Level,
    ParamDirection,
    Role,
)
from pypto.ir.expr import Var
from pypto.ir.stmt import Stmt
from pypto.ir.types import Type
from pypto.span import Span


@dataclass(frozen=True, slots=True, eq=False)
class Function:
    """A function: params (with directions), return types, body, kind, level/role and attrs."""

    name: str
    params: tuple[Var, ...]
    param_directions: tuple[ParamDirection, ...]
    return_types: tuple[Type, ...]
    body: Stmt
    func_type: FunctionType = FunctionType.Opaque
    level: Level | None = None
    role: Role | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    span: Span = field(default_factory=Span.unknown, kw_only=True, repr=False)

    def __post_init__(self) -> None:
        implied = FUNCTION_TYPE_LEVEL.get(self.func_type)
        if implied is None:
            return
        level, role = implied
        for given, want, what in ((self.level, level, "level"), (self.role, role, "role")):
            if given is not None and given is not want:
                raise UserError(
                    f"function '{self.name}': FunctionType.{self.func_type.value} implies "
                    f"{what}={want.name}, but explicit {what}={given.name} was provided",
                    self.span,
                )
        object.__setattr__(self, "level", level)
        object.__setattr__(self, "role", role)

    @property
    def requires_runtime_binding(self) -> bool:
        """A HOST SubWorker declared with a ``...`` body: its implementation is bound at run time
        (``DistributedCompiledProgram.prepare(callbacks={name: fn})``)."""
        return bool(self.attrs.get("requires_runtime_binding", False))

    @property
    def is_incore(self) -> bool:
        return self.func_type in INCORE_TYPES

    @property
    def is_orchestration(self) -> bool:
        return self.func_type in ORCH_TYPES

    def with_(self, **changes: Any) -> Function:
        """A copy with fields replaced (level/role re-derived when the type changes)."""
        if "func_type" in changes and changes["func_type"] in FUNCTION_TYPE_LEVEL:
            changes.setdefault("level", None)
            changes.setdefault("role", None)
        return replace(self, **changes)

    def as_python(self, prefix: str = "pl", concise: bool = False) -> str:
        """The function printed as DSL source (one ``@pl.function``; ``pl.parse`` reads it back)."""
        from pypto.ir.printer import python_print

        return python_print(self, prefix=prefix, concise=concise)


class FunctionTable(tuple):  # noqa: SLOT001 (a tuple with name lookups; no per-instance state)
    """A program's functions: an ordered tuple that also reads as a mapping keyed by function name.

    Iterating, indexing by position and ``len`` behave as for a tuple; ``keys()``, ``values()``,
    ``items()``, ``get(name)`` and ``table[name]`` look functions up by name (upstream's
    ``Program.functions`` is a map, so code written for it - ``prog.functions.values()`` - works).
    """

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            for f in self:
                if f.name == key:
                    return f
            raise KeyError(key)
        return super().__getitem__(key)

    def get(self, name: str, default: Function | None = None) -> Function | None:
        return next((f for f in self if f.name == name), default)

    def keys(self) -> list[str]:
        return [f.name for f in self]

    def values(self) -> list[Function]:
        return list(self)

    def items(self) -> list[tuple[str, Function]]:
        return [(f.name, f) for f in self]


@dataclass(frozen=True, slots=True, eq=False)
class Program:
    """A named, ordered collection of functions (callees are printed before callers)."""

    name: str
    functions: tuple[Function, ...]
    span: Span = field(default_factory=Span.unknown, kw_only=True, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.functions, FunctionTable):
            object.__setattr__(self, "functions", FunctionTable(self.functions))

    def get_function(self, name: str) -> Function | None:
        for f in self.functions:
            if f.name == name:
                return f
        return None

    def __getitem__(self, name: str) -> Function:
        f = self.get_function(name)
        if f is None:
            raise KeyError(f"program '{self.name}' has no function '{name}'")
        return f

    def with_functions(self, functions: list[Function] | tuple[Function, ...]) -> Program:
        return replace(self, functions=tuple(functions))

    def orchestrations(self) -> list[Function]:
        return [f for f in self.functions if f.is_orchestration]

    def as_python(self, prefix: str = "pl", concise: bool = False) -> str:
        """The program printed as DSL source (the pass-dump format)."""
        from pypto.ir.printer import python_print

        return python_print(self, prefix=prefix, concise=concise)
