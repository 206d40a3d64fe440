"""Statement helpers of ``pypto.ir.stmt``."""

from __future__ import annotations

import pytest

from pypto.ir.dtypes import DataType
from pypto.ir.expr import ConstInt, Var
from pypto.ir.stmt import ForStmt, SeqStmts, runs_at_least_once
from pypto.ir.types import ScalarType

N = Var("n", ScalarType(DataType.INDEX))


def _loop(start: object, stop: object, step: object) -> ForStmt:
    def e(x: object) -> object:
        return ConstInt(x) if isinstance(x, int) else x

    return ForStmt(Var("i", ScalarType(DataType.INDEX)), e(start), e(stop), e(step), SeqStmts(()))


@pytest.mark.parametrize(("bounds", "runs"), [
    ((0, 4, 1), True), ((3, 4, 2), True), ((4, 0, -1), True),          # one iteration or more
    ((0, 0, 1), False), ((4, 0, 1), False), ((0, 4, -1), False),       # none
    ((0, 4, 0), False),                                                # a zero step is not a loop that runs
    ((0, N, 1), False), ((N, 4, 1), False), ((0, 4, N), False),        # a bound known only at run time
])
def test_runs_at_least_once_needs_constant_bounds_with_an_iteration(bounds: tuple, runs: bool) -> None:
    assert runs_at_least_once(_loop(*bounds)) is runs
