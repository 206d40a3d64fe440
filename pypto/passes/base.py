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
