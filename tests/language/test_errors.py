"""User mistakes: each raises the right error class at the right (line, col) with a clear message."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import (
    ParserSyntaxError,
    ParserTypeError,
    SSAViolationError,
    UndefinedVariableError,
    UnsupportedFeatureError,
    UserError,
)
from pypto.language.diagnostics import out_param_write_dropped

HDR = "import pypto.language as pl\n\n@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n"
T = "pl.Tensor[[64, 64], pl.FP32]"


def _err(body: str, cls: type[UserError]) -> tuple[int, int, str]:
    with pytest.raises(cls) as info:
        pl.parse(HDR + body)
    err = info.value
    assert err.span is not None
    return err.span.line, err.span.col, err.message


CASES = [
    ("undefined name", f"    def f(self, a: {T}) -> {T}:\n        return b\n",
     UndefinedVariableError, 7, 16, "name 'b' is not defined"),
    ("bad annotation attr", f"    def f(self, a: pl.Tensr[[64], pl.FP32]) -> {T}:\n        return a\n",
     UndefinedVariableError, 6, 20, "'pl' has no attribute 'Tensr'"),
    ("non-DSL annotation", f"    def f(self, a: int) -> {T}:\n        return a\n",
     ParserTypeError, 6, 20, "invalid type annotation 'int'"),
    ("missing annotation", f"    def f(self, a) -> {T}:\n        return a\n",
     ParserTypeError, 6, 17, "Parameter 'a' missing type annotation"),
    ("wrong arity", f"    def f(self, a: {T}) -> {T}:\n        t = pl.load(a)\n        return a\n",
     ParserTypeError, 7, 13, "tile.load() takes 3 to 4 positional arguments but 1 were given"),
    ("unknown keyword", f"    def f(self, a: {T}) -> {T}:\n        t = pl.load(a, [0, 0], [64, 64], colour=1)\n"
     "        return a\n", ParserTypeError, 7, 13, "tile.load() got an unexpected keyword argument 'colour'"),
    ("annotation shape mismatch", f"    def f(self, a: {T}) -> {T}:\n"
     "        t: pl.Tile[[32, 64], pl.FP32] = pl.load(a, [0, 0], [64, 64])\n        return a\n",
     ParserTypeError, 7, 12, "shape mismatch for 't': annotation [32, 64] vs value [64, 64]"),
    ("annotation dtype mismatch", f"    def f(self, a: {T}) -> {T}:\n"
     "        t: pl.Tile[[64, 64], pl.FP16] = pl.load(a, [0, 0], [64, 64])\n        return a\n",
     ParserTypeError, 7, 12, "dtype mismatch for 't': annotation FP16 vs value FP32"),
    ("tile op on a tensor", f"    def f(self, a: {T}) -> {T}:\n        t = pl.tile.add(a, a)\n        return a\n",
     ParserTypeError, 7, 13, "tile.add: operand 'lhs' must be a Tile, got Tensor"),
    ("operand shape mismatch", f"    def f(self, a: {T}, b: pl.Tensor[[32, 64], pl.FP32]) -> {T}:\n"
     "        c = a + b\n        return c\n", ParserTypeError, 7, 13, "tensor.add: shape mismatch [64, 64] vs [32, 64]"),
    ("lambda", f"    def f(self, a: {T}) -> {T}:\n        g = lambda x: x\n        return a\n",
     UnsupportedFeatureError, 7, 13, "lambda expressions are not supported in DSL functions"),
    ("while-else", f"    def f(self, a: {T}) -> {T}:\n        while True:\n            pass\n        else:\n"
     "            pass\n        return a\n", UnsupportedFeatureError, 7, 9, "while-else is not supported"),
    ("try", f"    def f(self, a: {T}) -> {T}:\n        try:\n            pass\n        finally:\n            pass\n"
     "        return a\n", UnsupportedFeatureError, 7, 9, "try statements are not supported in DSL functions"),
    ("bad pl.range args", f"    def f(self, a: {T}) -> {T}:\n        for i in pl.range(1, 2, 3, 4):\n"
     "            pass\n        return a\n", ParserTypeError, 7, 18,
     "pl.range() takes 1 to 3 positional arguments (stop | start, stop | start, stop, step) but 4 were given"),
    ("python range", f"    def f(self, a: {T}) -> {T}:\n        for i in range(4):\n            pass\n"
     "        return a\n", UnsupportedFeatureError, 7, 18,
     "for loops must iterate over pl.range/pl.parallel/pl.unroll/pl.pipeline, not 'range(4)'"),
    ("yield outside loop", f"    def f(self, a: {T}) -> {T}:\n        x = pl.yield_(a)\n        return a\n",
     ParserSyntaxError, 7, 13, "pl.yield_() outside a loop or if"),
    ("scalar InOut", f"    def f(self, a: pl.InOut[pl.Scalar[pl.INT32]]) -> {T}:\n        return a\n",
     ParserTypeError, 6, 20, "Scalar parameters cannot be InOut"),
    ("bad tile.load target", f"    def f(self, a: {T}) -> {T}:\n"
     "        t = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Left)\n        return a\n", ParserTypeError, 7, 13,
     "target_memory for tile.load must be MemorySpace.Vec or MemorySpace.Mat, got MemorySpace.Left"),
    ("DN shorthand", f"    def f(self, a: pl.Tensor[[64, 64], pl.FP32, pl.DN]) -> {T}:\n        return a\n",
     ParserTypeError, 6, 49, "pl.Tensor[..., pl.DN] is not supported"),
    ("bare pl.Tensor", f"    def f(self, a: pl.Tensor) -> {T}:\n        return a\n",
     ParserTypeError, 6, 20, "bare 'pl.Tensor' annotation needs a shape and dtype"),
    ("Out param rebinding with another type", f"    def f(self, a: {T}, out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> {T}:\n"
     "        out = pl.add(a, a)\n        return out\n", ParserTypeError, 7, 9, "Cannot reassign 'out' with a different type"),
    ("yield not last", f"    def f(self, a: {T}) -> {T}:\n        for i, (x,) in pl.range(2, init_values=(a,)):\n"
     "            y = pl.yield_(x)\n            z = x\n        return a\n", ParserSyntaxError, 8, 13,
     "pl.yield_() must be the last statement of its block"),
    ("unknown program call", f"    def f(self, a: {T}) -> {T}:\n        return self.g(a)\n",
     UndefinedVariableError, 7, 16, "program has no function 'g'"),
    *[(f"name of one branch: {what}", f"    def f(self, a: {T}, n: pl.Scalar[pl.INDEX]) -> {T}:\n"
       f"        if n < 2:\n{then}        else:\n{other}        out = pl.store(t, [0, 0], a)\n        return out\n",
       UndefinedVariableError, 12 if "for" in then else 11, 24, f"name 't' is not defined here: the if at "
       f"<string>:7:9 {why}") for what, then, other, why in [
        ("one branch", "            t = pl.load(a, [0, 0], [64, 64])\n", "            u = n\n",
         "binds it in only one branch"),
        ("two kinds", "            t = pl.load(a, [0, 0], [64, 64])\n", "            t = n\n",
         "binds it to a Tile in one branch and a Scalar in the other"),
        ("in a loop", "            for i in pl.range(2):\n                t = pl.load(a, [0, 0], [64, 64])\n",
         "            t = pl.load(a, [0, 0], [64, 64])\n",
         "binds it inside a loop in a branch (a loop's own names stay in the loop)")]],
]


@pytest.mark.parametrize(("what", "body", "cls", "line", "col", "message"), CASES, ids=[c[0] for c in CASES])
def test_user_mistake(what: str, body: str, cls: type[UserError], line: int, col: int, message: str) -> None:
    assert _err(body, cls) == (line, col, message)


def test_strict_ssa_violation_renders_gcc_style() -> None:
    text = ("import pypto.language as pl\n\n@pl.function(strict_ssa=True)\n"
            f"def f(a: {T}) -> {T}:\n    b = pl.add(a, a)\n    b = pl.add(b, a)\n    return b\n")
    with pytest.raises(SSAViolationError) as info:
        pl.parse(text, filename="k.py")
    assert (info.value.span.line, info.value.span.col) == (6, 5)
    rendered = str(info.value)
    assert rendered.splitlines()[:3] == ["k.py:6:5: error: 'b' is assigned more than once (strict_ssa=True)",
                                         "      b = pl.add(b, a)", "      ^"]
    assert "hint:" in rendered


def test_strict_ssa_forbids_subscript_write() -> None:
    text = ("import pypto.language as pl\n\n@pl.function(strict_ssa=True)\n"
            f"def f(a: {T}, out: pl.Out[{T}]) -> {T}:\n    out[:] = pl.add(a, a)\n    return out\n")
    with pytest.raises(SSAViolationError):
        pl.parse(text)


def test_decorated_function_error_points_into_this_file() -> None:
    with pytest.raises(UndefinedVariableError) as info:
        @pl.function
        def bad(a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
            return missing  # noqa: F821
    span = info.value.span
    assert span.file == __file__
    import inspect

    lines, first = inspect.getsourcelines(test_decorated_function_error_points_into_this_file)
    want = first + next(i for i, s in enumerate(lines) if "return missing" in s)
    assert span.line == want
    assert span.col == lines[want - first].index("missing") + 1
    assert "return missing" in str(info.value)


def test_out_param_write_dropped_diagnostic() -> None:
    text = (HDR + f"    def f(self, a: {T}, out: pl.Out[{T}]) -> {T}:\n        out = pl.add(a, a)\n        return out\n")
    prog = pl.parse(text)
    diags = out_param_write_dropped(prog.functions[0])
    assert [(d.rule, d.span.line, d.span.col) for d in diags] == [("OutParamWriteDropped", 7, 9)]
    assert "out[:] = <expr>" in diags[0].message


def test_subscript_write_is_not_a_dropped_write() -> None:
    text = (HDR + f"    def f(self, a: {T}, out: pl.Out[{T}]) -> {T}:\n        out[:] = pl.add(a, a)\n"
            "        out = pl.add(out, a)\n        return out\n")
    prog = pl.parse(text)
    diags = out_param_write_dropped(prog.functions[0])
    assert [d.span.line for d in diags] == []


def test_parse_needs_exactly_one_item() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        pl.parse("import pypto.language as pl\nx = 1\n")


def test_loads_missing_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        pl.loads(tmp_path / "nope.py")
