"""The pass base class: a name, declared properties and a pure ``run(program) -> Program``."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty

if TYPE_CHECKING:
    from pypto.passes.context import PassContext


class PassModule(types.ModuleType):
    """A pass's own module, callable as upstream's factory of the same name: ``passes.convert_to_ssa()`` is
    the pass under the current PassContext (upstream's ``pypto.passes`` is a module of factories; here the
    name is also the module's)."""

    def __call__(self) -> Pass:
        from pypto.passes.context import PassContext

        cls = getattr(self, self.__dict__["_factory_of"])
        return cls.from_context(PassContext.current() or PassContext())


@dataclass(frozen=True)
class Pass:
    """A program transformation. Passes never print, dump, time or read the environment."""

    name: ClassVar[str] = "Pass"
    requires: ClassVar[frozenset[IRProperty]] = frozenset()
    produces: ClassVar[frozenset[IRProperty]] = frozenset()
    invalidates: ClassVar[frozenset[IRProperty]] = frozenset()

    def __init_subclass__(cls, **kwargs: object) -> None:
        """A pass defined in a module named after it (``pypto.passes.convert_to_ssa``) makes that module
        callable as upstream's factory of the same name (see :class:`PassModule`)."""
        super().__init_subclass__(**kwargs)
        package, _, leaf = cls.__module__.rpartition(".")
        module = sys.modules.get(cls.__module__)
        if package == "pypto.passes" and leaf.replace("_", "") == cls.__name__.lower() and module is not None:
            module.__class__ = PassModule
            module.__dict__["_factory_of"] = cls.__name__

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
