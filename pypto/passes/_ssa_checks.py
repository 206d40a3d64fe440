"""ConvertToSSA's user-facing checks: a read of a name that has no value on its path (with why), and
merges (if results, loop carries) whose incoming values differ in kind, shape or dtype."""

from __future__ import annotations

from collections.abc import Sequence

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Expr, Var
from pypto.ir.function import Function
from pypto.ir.ops.infer import dim_eq
from pypto.ir.printer import python_print
from pypto.ir.types import ScalarType, ShapedType, Type
from pypto.passes._util import base_name, defined_vars
from pypto.span import Span


class Unbound:
    """Why a name the function binds has no value at a read: every binding of it on the way there was
    local to a finished loop or to one branch of an if. Python would still see a value there (the
    last iteration's, or the one branch's), but the IR has none, so the read is a located error."""

    def __init__(self, func: Function) -> None:
        self.bound = {v.name for v in defined_vars(func.body)}
        self.dropped: dict[str, list[tuple[str, Span]]] = {}
        self.at = func.span

    def drop(self, names: set[str], kind: str, span: Span) -> None:
        for n in names:
            self.dropped[n] = [*self.dropped.get(n, []), (kind, span)]

    def __call__(self, var: Var) -> Var:
        if var.name not in self.bound:
            return var  # not a name of this body (a task id bound by a scope, say)
        raise self.error(var)

    def error(self, var: Var) -> UserError:
        n, why = base_name(var.name), self.dropped.get(var.name, [])
        loops = [s for k, s in why if k != "if"]
        first = f"the loop at {loops[0]}" if loops else "the if"
        hint = f"bind '{n}' before {first} (a loop then carries it, an if merges it)"
        if why and why[-1][0] == "if":
            msg = f"'{n}' is read here but is bound in only one branch of the if at {why[-1][1]}"
            if loops:
                msg += f"; on the other path it would hold its value from the loop at {loops[0]}, and a name " \
                       "first bound in a loop is not visible after the loop"
            return UserError(msg, self.at, f"{hint}, or assign it in both branches")
        if why:
            kind, loop = why[-1]
            what = "is the loop variable or a carried name of" if kind == "header" else "is first bound inside"
            return UserError(f"'{n}' is read here but {what} the loop at {loop}; such a name has no value "
                             "after the loop (a loop carries out the names bound before it, and a scalar that a "
                             "loop with constant bounds binds on every path)", self.at,
                             f"{hint}, read it inside the loop, or use the loop's pl.yield_ results")
        return UserError(f"'{n}' is read here before it has a value", self.at, hint)


def _mergeable(a: Type, b: Type) -> bool:
    """Whether one merged value can take both types: same kind, and for tensors and tiles the same
    dtype and rank with no two static dims differing; for scalars both float, both bool or both int."""
    kinds = (ShapedType, ScalarType)
    if not (isinstance(a, kinds) and isinstance(b, kinds)):
        return True  # nothing this check knows about (an unknown or tuple type)
    if type(a) is not type(b):
        return False
    if isinstance(a, ScalarType) and isinstance(b, ScalarType):
        return a.dtype.is_float == b.dtype.is_float and (a.dtype is DataType.BOOL) == (b.dtype is DataType.BOOL)
    assert isinstance(a, ShapedType) and isinstance(b, ShapedType)
    return a.dtype is b.dtype and a.rank == b.rank and all(dim_eq(x, y) for x, y in zip(a.shape, b.shape, strict=True))


def check_merge_types(names: Sequence[Var], first: Sequence[Expr], second: Sequence[Expr], what: tuple[str, str],
                      span: Span) -> None:
    """``names[i]`` merges ``first[i]`` and ``second[i]`` (an if's branch values, or a loop's start and
    the value its body yields); a located error when they cannot be one value."""
    for var, x, y in zip(names, first, second, strict=False):
        if not _mergeable(x.type, y.type):
            n = base_name(var.name)
            raise UserError(f"'{n}' is {python_print(x.type)} {what[0]} but {python_print(y.type)} {what[1]}; "
                            "a merged value has one type", span,
                            hint=f"give '{n}' the same kind, shape and dtype on both paths, or use another name "
                                 "for one of them")
