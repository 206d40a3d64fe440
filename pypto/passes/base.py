"""The pass base class: a name, declared properties and a pure ``run(program) -> Program``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty

if TYPE_CHECKING:
    from pypto.passes.context import PassContext


@dataclass(frozen=True)
class Pass:
    """A program transformation. Passes never print, dump, time or read the environment."""

    name: ClassVar[str] = "Pass"
    requires: ClassVar[frozenset[IRProperty]] = frozenset()
    produces: ClassVar[frozenset[IRProperty]] = frozenset()
    invalidates: ClassVar[frozenset[IRProperty]] = frozenset()

    def __init_subclass__(cls, **kwargs: object) -> None:
        """A pass defined in its own registered module makes that module callable (upstream's factory)."""
        super().__init_subclass__(**kwargs)
        import sys

        from pypto.passes import REGISTRY, PassModule

        module = sys.modules.get(cls.__module__)
        named = cls.__module__.rsplit(".", 1)[-1].replace("_", "") == cls.__name__.lower()
        if module is not None and named and REGISTRY.get(cls.__name__) == cls.__module__:
            module.__class__ = PassModule

    @classmethod
    def from_context(cls, ctx: PassContext) -> Pass:
        """Build the pass with options taken from the active PassContext."""
        return cls()

    def run(self, program: Program) -> Program:
        """Transform ``program``; return it unchanged (the same object) when nothing applies."""
        funcs = [self.run_function(f, program) for f in program.functions]
        if all(a is b for a, b in zip(funcs, program.functions, strict=True)):
            return program
        return program.with_functions(funcs)

    def run_function(self, func: Function, program: Program) -> Function:
        """Per-function hook used by the default ``run``."""
        return func

    def __call__(self, program: Program) -> Program:
        return self.run(program)
