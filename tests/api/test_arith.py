"""pypto.arith: bounds, residues, int sets, simplification and proofs over IR integer expressions."""

from __future__ import annotations

import pytest

from pypto.arith import (
    Analyzer,
    CompareResult,
    ConstIntBound,
    IntSet,
    ModularSet,
    extended_euclidean,
    floordiv,
    floormod,
    fold_const,
    gcd,
    lcm,
)
from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, ConstBool, ConstInt, Expr, Var
from pypto.ir.types import ScalarType

IDX = DataType.INDEX


def v(name: str) -> Var:
    return Var(name, ScalarType(IDX))


def op(o: BinOp, a: Expr, b: Expr | int) -> Expr:
    return BinaryExpr(o, a, ConstInt(b, IDX) if isinstance(b, int) else b, IDX)


def test_integer_helpers_use_floor_semantics() -> None:
    assert (floordiv(-7, 2), floormod(-7, 2), floormod(7, -2)) == (-4, 1, -1)
    assert (gcd(12, 18), lcm(4, 6)) == (6, 12)
    for a, b in ((240, 46), (-15, 10), (7, 0)):
        g, x, y = extended_euclidean(a, b)
        assert g == gcd(a, b) and a * x + b * y == g
    folded = fold_const(op(BinOp.Mul, ConstInt(3, IDX), 4))
    assert isinstance(folded, ConstInt) and folded.value == 12 and fold_const(op(BinOp.Add, v("x"), 1)) is None


def test_bounds_follow_bound_vars_and_constraints() -> None:
    a, x = Analyzer(), v("x")
    a.bind(x, 0, 16)
    assert a.const_int_bound(op(BinOp.Add, op(BinOp.Mul, x, 4), 3)) == ConstIntBound(3, 63)
    assert a.const_int_bound(op(BinOp.FloorMod, op(BinOp.Add, x, 100), 8)) == ConstIntBound(0, 7)
    assert a.const_int_bound(op(BinOp.Sub, ConstInt(0, IDX), x)) == ConstIntBound(-15, 0)
    with a.constraint_context(op(BinOp.Lt, x, 4)):
        assert a.const_int_bound(x) == ConstIntBound(0, 3)
    assert a.const_int_bound(x) == ConstIntBound(0, 15)
    assert a.const_int_bound(v("n")) == ConstIntBound(0, ConstIntBound.kPosInf)  # an INDEX is non-negative
    free = a.const_int_bound(Var("free", ScalarType(DataType.INT64)))
    assert free.is_everything() and "+inf" in repr(free)
    assert a.const_int_bound(Var("b", ScalarType(DataType.INT8))) == ConstIntBound(-128, 127)
    assert free.is_everything() and (free.min_value, free.max_value) == (ConstIntBound.kNegInf, ConstIntBound.kPosInf)


def test_modular_sets() -> None:
    a, x = Analyzer(), v("x")
    assert a.modular_set(op(BinOp.Add, op(BinOp.Mul, x, 4), 3)) == ModularSet(4, 3)
    assert a.modular_set(op(BinOp.Add, op(BinOp.Mul, x, 6), op(BinOp.Mul, v("y"), 4))) == ModularSet(2, 0)
    assert a.modular_set(op(BinOp.FloorMod, op(BinOp.Mul, x, 8), 4)) == ModularSet(4, 0)
    assert a.modular_set(x).is_everything() and a.modular_set(ConstInt(5, IDX)).is_exact()


def test_simplify_and_prove() -> None:
    a, x, y = Analyzer(), v("x"), v("y")
    a.bind(x, 0, 16)
    s = a.simplify(op(BinOp.Sub, op(BinOp.Add, op(BinOp.Mul, x, 2), y), x))  # 2x + y - x
    assert isinstance(s, BinaryExpr) and s.op is BinOp.Add and {s.lhs, s.rhs} == {x, y}
    assert fold_const(a.simplify(op(BinOp.FloorDiv, x, 16))).value == 0
    assert a.simplify(op(BinOp.FloorMod, x, 16)) is x
    assert fold_const(a.simplify(op(BinOp.Sub, op(BinOp.Add, x, 3), x))).value == 3
    assert isinstance(a.simplify(op(BinOp.Lt, x, 16)), ConstBool)
    assert a.can_prove(op(BinOp.Lt, x, 16)) and not a.can_prove(op(BinOp.Lt, x, 15))
    assert a.can_prove_less(x, 16) and not a.can_prove_less(x, 15)
    signed = Var("s", ScalarType(DataType.INT32))
    assert a.can_prove_greater_equal(x, 0) and not a.can_prove_greater_equal(signed, 0)
    assert a.can_prove_equal(op(BinOp.Add, x, x), op(BinOp.Mul, x, 2))
    a.bind(y, op(BinOp.Add, x, 1))
    assert a.can_prove_equal(op(BinOp.Sub, y, x), ConstInt(1, IDX))
    a.unbind(y)
    assert not a.can_prove_equal(op(BinOp.Sub, y, x), ConstInt(1, IDX))


def test_transitive_comparison_and_int_sets() -> None:
    a, x = Analyzer(), v("x")
    a.bind(x, 0, 8)
    cmp = a.transitive_cmp
    assert cmp.try_compare(op(BinOp.Add, x, 1), x) is CompareResult.kGT
    assert cmp.try_compare(x, ConstInt(8, IDX)) is CompareResult.kLT
    assert cmp.try_compare(x, ConstInt(0, IDX)) is CompareResult.kGE
    assert cmp.try_compare(x, v("other")) is CompareResult.kUnknown
    assert CompareResult.kLE == CompareResult.kLT | CompareResult.kEQ
    s = a.int_set(op(BinOp.Add, x, 2))
    assert (s.min_value.value, s.max_value.value) == (2, 9)
    assert IntSet.everything().is_everything() and IntSet.single_point(x).is_single_point()
    assert IntSet.interval(ConstInt(3, IDX), ConstInt(1, IDX)).is_nothing()


@pytest.mark.parametrize("lo,hi", [(0, 4), (-3, 3)])
def test_bounds_contain_every_value(lo: int, hi: int) -> None:
    """The bound of a random-ish expression holds for every value of its variable."""
    a, x = Analyzer(), v("x")
    a.bind(x, lo, hi)
    e = op(BinOp.Sub, op(BinOp.Mul, op(BinOp.Add, x, 3), 5), op(BinOp.FloorMod, x, 3))
    b = a.const_int_bound(e)
    for val in range(lo, hi):
        got = (val + 3) * 5 - val % 3
        assert b.min_value <= got <= b.max_value


def test_transitive_facts_chain_and_are_scoped() -> None:
    a = Analyzer()
    x, y, z = (Var(n, ScalarType(DataType.INT64)) for n in "xyz")
    cmp = a.transitive_cmp
    assert cmp.try_compare(x, y) is CompareResult.kUnknown and cmp.try_compare(x, x) is CompareResult.kEQ
    with a.constraint_context(BinaryExpr(BinOp.Lt, x, y, DataType.BOOL)):
        with a.constraint_context(BinaryExpr(BinOp.Le, y, z, DataType.BOOL)):
            assert cmp.try_compare(x, z) is CompareResult.kLT
            assert cmp.try_compare(x, z, propagate_inequalities=False) is CompareResult.kUnknown
            assert a.can_prove(BinaryExpr(BinOp.Lt, x, z, DataType.BOOL))
            assert not a.can_prove(BinaryExpr(BinOp.Gt, x, z, DataType.BOOL))
        y3 = BinaryExpr(BinOp.Add, y, ConstInt(3, DataType.INT64), DataType.INT64)
        assert cmp.try_compare(x, y3) is CompareResult.kLT
        assert cmp.try_compare(y3, x) is CompareResult.kGT
    assert cmp.try_compare(x, y) is CompareResult.kUnknown
    a.bind(x, y)
    assert cmp.try_compare(x, y) is CompareResult.kEQ
