"""Tuple assignment in DSL text, ``Function.as_python()`` and the builtin SyntaxError of ``pl.parse``."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ParserSyntaxError, ParserTypeError, PythonSyntaxError, UserError
from pypto.ir.expr import TupleGetItem
from pypto.ir.options import VerificationLevel
from pypto.passes.context import PassContext

T = "pl.Tensor[[64, 64], pl.FP32]"
PROGRAM = f'''
@pl.program
class Pair:
    @pl.function(type=pl.FunctionType.InCore)
    def two(self, x: {T}, a: pl.Out[{T}], b: pl.Out[{T}]) -> tuple[{T}, {T}]:
        a = pl.store(pl.load(x, [0, 0], [64, 64]), [0, 0], a)
        b = pl.store(pl.mul(pl.load(x, [0, 0], [64, 64]), 3.0), [0, 0], b)
        return a, b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, a: pl.Out[{T}], b: pl.Out[{T}]) -> tuple[{T}, {T}]:
        {{target}} = self.two(x, a, b)
        return a, b
'''


def _program(target: str = "a, b") -> str:
    return PROGRAM.replace("{target}", target)


def test_tuple_assignment_calls_once_and_binds_each_name():
    program = pl.parse(_program())
    main = program.get_function("main")
    stmts = list(main.body.stmts)
    calls = [s for s in stmts if isinstance(s, ir.AssignStmt) and isinstance(s.value, ir.Call)]
    assert len(calls) == 1 and calls[0].var.name == "_tuple_tmp"
    items = [s for s in stmts if isinstance(s, ir.AssignStmt) and isinstance(s.value, TupleGetItem)]
    assert [(s.var.name, s.value.index) for s in items] == [("a", 0), ("b", 1)]
    assert all(s.value.tuple_value is calls[0].var for s in items)
    ret = stmts[-1]
    assert ret.values[0] is items[0].var and ret.values[1] is items[1].var
    ir.assert_structural_equal(pl.parse(program.as_python()), program)  # prints and re-parses


def test_tuple_assignment_lowers_under_roundtrip_verification():
    from pypto.driver import lower

    with PassContext(verification_level=VerificationLevel.ROUNDTRIP):
        lowered = lower(pl.parse(_program("(a, b)")))
    assert {f.name for f in lowered.functions} == {"two", "main"}


def test_sequence_unpacking_of_parse_time_values():
    text = f'''
@pl.function(type=pl.FunctionType.InCore)
def f(x: {T}, out: pl.Out[{T}]) -> {T}:
    m, n = x.shape
    out = pl.store(pl.load(x, [0, 0], [m, n]), [0, 0], out)
    return out
'''
    func = pl.parse(text)
    first = list(func.body.stmts)[:2]
    assert [(s.var.name, s.value.value) for s in first] == [("m", 64), ("n", 64)]


@pytest.mark.parametrize("target,cls,col,message", [
    ("a, b[0]", ParserSyntaxError, 12, "tuple unpacking target must be a variable name, got 'b[0]'"),
    ("a, self.b", ParserSyntaxError, 12, "tuple unpacking target must be a variable name, got 'self.b'"),
    ("a, b, c", ParserTypeError, 9, "cannot unpack 2 values into 3 names"),
    ("[a], b", ParserTypeError, 9, "cannot unpack a Tensor into 1 name"),
])
def test_tuple_assignment_misuse_is_located(target, cls, col, message):
    with pytest.raises(cls) as info:
        pl.parse(_program(target))
    assert info.value.message == message
    assert (info.value.span.line, info.value.span.col) == (12, col)


def test_function_as_python_round_trips():
    func = pl.parse(_program()).get_function("two")
    text = func.as_python()
    assert text.startswith("import pypto.language as pl") and "def two(" in text
    ir.assert_structural_equal(pl.parse(text), func)
    assert "pl.tile.load" in func.as_python(concise=True)


def test_invalid_python_is_a_builtin_syntax_error():
    text = f"@pl.function\ndef bad(x: {T}) -> {T}:\n    return x +\n"
    with pytest.raises(SyntaxError) as info:
        pl.parse(text, filename="kernel.py")
    err = info.value
    assert isinstance(err, PythonSyntaxError) and isinstance(err, UserError)  # still a pypto user error
    assert (err.filename, err.lineno, err.offset) == ("kernel.py", 3, 15)
    assert str(err).startswith("kernel.py:3:15: error: invalid Python syntax")
    with pytest.raises(ParserSyntaxError) as dsl:  # a DSL rule, not Python syntax: no SyntaxError
        pl.parse(f"@pl.function\ndef f(x: {T}) -> {T}:\n    break\n")
    assert not isinstance(dsl.value, SyntaxError)


def _branches(then: str, other: str) -> str:
    return (f"@pl.function(type=pl.FunctionType.InCore)\n"
            f"def f(x: {T}, n: pl.Scalar[pl.INDEX], out: pl.Out[{T}]) -> {T}:\n"
            f"    if n == 1:\n        {then}\n    else:\n        {other}\n"
            f"    out = pl.store(s, [0, 0], out)\n    return out\n")


def test_name_first_defined_in_both_branches_is_merged():
    func = pl.parse(_branches("s = pl.load(x, [0, 0], [64, 64])", "s = pl.mul(pl.load(x, [0, 0], [64, 64]), 2.0)"))
    from pypto.passes import get_pass

    ssa = get_pass("ConvertToSSA")().run(ir.Program("p", (func,)))
    branch = next(s for s in ssa.functions[0].body.stmts if isinstance(s, ir.IfStmt))
    assert [rv.name.split("__")[0] for rv in branch.return_vars] == ["s"]


@pytest.mark.parametrize("then,other", [
    ("s = pl.load(x, [0, 0], [64, 64])", "t = pl.load(x, [0, 0], [64, 64])"),  # only one branch defines s
    ("s = pl.load(x, [0, 0], [64, 64])", "s = n"),  # a tile in one branch, a scalar in the other
])
def test_name_not_defined_on_every_path_stays_undefined(then, other):
    with pytest.raises(UserError, match="name 's' is not defined"):
        pl.parse(_branches(then, other))


SIZED = '''import pypto.language as pl
{sizes}

@pl.program
class Sized:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[M, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]]
             ) -> pl.Tensor[[M, N], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.add(x, x), [0, 0])
        return out
'''


@pytest.mark.parametrize("sizes", ["M, N = 16, 64", "[M, N] = [16, 64]", "SHAPE = (16, 64)\nM, N = SHAPE",
                                   "M: int = 16\nN: int = 64"])
def test_module_level_sizes_bound_by_unpacking_are_static(sizes):
    """Module-level names a file binds by unpacking or with an annotation are its sizes, not dynamic dims."""
    program = pl.parse(SIZED.format(sizes=sizes), filename="sized.py")
    text = program.as_python()
    assert "pl.Tensor[[16, 64], pl.FP32]" in text and "pl.dynamic" not in text
