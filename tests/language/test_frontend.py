"""The DSL frontend: decorators, dispatch, operators, subscript sugar, control flow, scopes, spans."""

from __future__ import annotations

import subprocess
import sys

import pytest

import pypto.language as pl
from pypto.errors import ParserTypeError, UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import ForKind, FunctionType, Level, MemorySpace, ParamDirection
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, GlobalVar, MakeTuple
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (
    AssignStmt,
    ForStmt,
    HierarchyScopeStmt,
    IfStmt,
    InCoreScopeStmt,
    RuntimeScopeStmt,
    flatten,
)
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.language.jit_support import parse_jit_function

T = "pl.Tensor[[64, 64], pl.FP32]"


def _func(body: str, params: str = f"a: {T}, out: pl.Out[{T}]", ret: str = T,
          deco: str = "@pl.function(type=pl.FunctionType.InCore)") -> Function:
    lines = body.strip("\n").splitlines()
    text = f"import pypto.language as pl\n\n{deco}\ndef f({params}) -> {ret}:\n" + "\n".join("    " + ln for ln in lines) + "\n"
    out = pl.parse(text)
    assert isinstance(out, Function)
    return out


def _assigns(f: Function) -> list[AssignStmt]:
    return [s for s in flatten(f.body) if isinstance(s, AssignStmt)]


def test_unified_dispatch_by_operand_type() -> None:
    f = _func("""
t = pl.load(a, [0, 0], [64, 64])
x = pl.add(a, a)
y = pl.add(t, t)
z = pl.add(t, 1.0)
w = pl.mul(t, 2)
return out
""")
    ops = [s.value.op for s in _assigns(f)]
    assert ops == ["tile.load", "tensor.add", "tile.add", "tile.adds", "tile.muls"]


def test_python_operators_on_tiles_and_scalars() -> None:
    f = _func("""
t = pl.load(a, [0, 0], [64, 64])
x = t * 2.0
y = 3.0 * t
z = t + t
s = n + 1
c = n < 4
return out
""", params=f"a: {T}, n: pl.Scalar[pl.INT32], out: pl.Out[{T}]")
    x, y, z, s, c = _assigns(f)[1:]
    assert (x.value.op, y.value.op, z.value.op) == ("tile.muls", "tile.muls", "tile.add")
    assert isinstance(s.value, BinaryExpr) and s.value.dtype is DataType.INT32
    assert isinstance(c.value, BinaryExpr) and c.value.op is BinOp.Lt and c.var.var_type == ScalarType(DataType.BOOL)


def test_load_short_form_fills_valid_shape_and_target_memory() -> None:
    f = _func("t = pl.load(a, [0, 0], [32, 64])\nreturn out")
    call = _assigns(f)[0].value
    assert isinstance(call, Call) and len(call.args) == 4
    assert call.kwargs == {"target_memory": MemorySpace.Vec}
    assert call.type == TileType((32, 64), DataType.FP32, memory_space=MemorySpace.Vec)


def test_annotation_slots_are_taken_into_the_var_type() -> None:
    f = _func("acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.matmul(pl.move(pl.load(a, [0, 0], [64, 64], "
              "target_memory=pl.Mem.Mat), pl.Mem.Left), pl.move(pl.load(a, [0, 0], [64, 64], "
              "target_memory=pl.Mem.Mat), pl.Mem.Right))\nreturn out")
    assert _assigns(f)[0].var.var_type.memory_space is MemorySpace.Acc


def test_subscript_sugar() -> None:
    f = _func("""
s = a[16:32, :]
e = a[1, 2]
out[0:16, :] = s
out[:] = a
return out
""")
    s, e, w1, w2 = _assigns(f)
    assert s.value.op == "tensor.slice" and s.var.var_type.shape == (16, 64)
    assert [x.value for x in s.value.args[2].elements] == [16, 0]
    assert e.value.op == "tensor.read" and e.var.var_type == ScalarType(DataType.FP32)
    assert w1.value.op == "tensor.assemble" and w1.var.name == "out"
    assert w2.value.args[0] is w1.var
    assert [x.value for x in w2.value.args[2].elements] == [0, 0]


def test_params_directions_and_self_stripping() -> None:
    f = _func("return out", params=f"self, a: {T}, b: pl.InOut[{T}], out: pl.Out[{T}]")
    assert [p.name for p in f.params] == ["a", "b", "out"]
    assert f.param_directions == (ParamDirection.In, ParamDirection.InOut, ParamDirection.Out)
    assert f.func_type is FunctionType.InCore and f.level is Level.CHIP_DIE


def test_for_loop_with_init_values() -> None:
    f = _func("""
acc = pl.create_tile([64, 64], dtype=pl.FP32)
for i, (x,) in pl.parallel(2, 10, init_values=(acc,)):
    y = pl.add(x, x)
    r = pl.yield_(y)
out = pl.store(r, [0, 0], out)
return out
""")
    loop = next(s for s in flatten(f.body) if isinstance(s, ForStmt))
    assert loop.kind is ForKind.Parallel
    assert (loop.start.value, loop.stop.value, loop.step.value) == (2, 10, 1)
    assert loop.inits[0] is _assigns(f)[0].var
    assert loop.return_vars[0].name == "r"
    store = _assigns(f)[-1]
    assert store.value.args[0] is loop.return_vars[0]


def test_if_else_yield_binds_return_vars() -> None:
    f = _func("""
t = pl.load(a, [0, 0], [64, 64])
if n > 0:
    v = pl.yield_(pl.exp(t))
else:
    v = pl.yield_(t)
out = pl.store(v, [0, 0], out)
return out
""", params=f"a: {T}, n: pl.Scalar[pl.INDEX], out: pl.Out[{T}]")
    if_stmt = next(s for s in flatten(f.body) if isinstance(s, IfStmt))
    assert [v.name for v in if_stmt.return_vars] == ["v"]
    assert _assigns(f)[-1].value.args[0] is if_stmt.return_vars[0]


def test_scopes() -> None:
    f = _func("""
with pl.scope():
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k") as tid:
        out[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, deps=[tid]):
        out[:] = pl.add(out, a)
with pl.at(level=pl.Level.HOST):
    x = pl.add(a, a)
return out
""", deco="@pl.function(type=pl.FunctionType.Orchestration)")
    scope, host, _ = flatten(f.body)
    assert isinstance(scope, RuntimeScopeStmt) and not scope.manual
    first, second = flatten(scope.body)
    assert isinstance(first, InCoreScopeStmt) and first.name_hint == "k"
    assert second.deps == (first.task_var,)
    assert isinstance(host, HierarchyScopeStmt) and host.level is Level.HOST


def test_core_group_rejects_role() -> None:
    with pytest.raises(ParserTypeError, match="does not take role="):
        _func("with pl.at(level=pl.Level.CORE_GROUP, role=pl.Role.SubWorker):\n    x = pl.add(a, a)\nreturn out")


def test_closure_constants_fold_and_dynamic_dims() -> None:
    rows = 32
    m = pl.dynamic("M")

    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[m, 64], pl.FP32], out: pl.Out[pl.Tensor[[rows, 64], pl.FP32]]) -> pl.Tensor[[rows, 64], pl.FP32]:
        t = pl.load(a, [rows * 2, 0], [rows, 64])
        out = pl.store(t, [0, 0], out)
        return out

    assert isinstance(k, Function)
    assert k.params[0].var_type.shape[0] is m.var
    load = _assigns(k)[0].value
    assert isinstance(load.args[1], MakeTuple)
    assert isinstance(load.args[1].elements[0], ConstInt) and load.args[1].elements[0].value == 64
    from pypto.ir.printer import python_print

    assert 'M = pl.dynamic("M")' in python_print(k)


def test_program_call_attrs_and_order() -> None:
    text = f"""import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        out = self.k(a, out, attrs={{"arg_directions": [pl.adir.input, pl.adir.output_existing]}})
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        return out
"""
    p = pl.parse(text)
    assert isinstance(p, Program) and [f.name for f in p.functions] == ["k", "main"]
    call = _assigns(p["main"])[0].value
    assert isinstance(call.op, GlobalVar) and call.op.name == "k"
    assert call.attrs == {"arg_directions": (pl.adir.input, pl.adir.output_existing)}
    assert call.type == TensorType((64, 64), DataType.FP32)


def test_comments_and_docstring_attach_to_statements() -> None:
    f = _func('"""Doc."""\n# lead\nt = pl.load(a, [0, 0], [64, 64])\nreturn out')
    assert flatten(f.body)[0].comments == ("Doc.", "lead")


def test_jit_entry_maps_spans_back_to_the_file() -> None:
    text = (f"@pl.function(type=pl.FunctionType.Orchestration)\ndef add(a: {T}, out: pl.Out[{T}]) -> {T}:\n"
            "    with pl.at(level=pl.Level.CORE_GROUP):\n        out[:] = pl.add(a, a)\n    return out\n")
    f = parse_jit_function(text, filename="user.py", line_offset=10, col_offset=4, env={"pl": pl})
    inner = flatten(flatten(f.body)[0].body)[0]
    assert (inner.span.file, inner.span.line, inner.span.col) == ("user.py", 14, 13)


def test_runtime_use_of_dsl_names_is_an_error() -> None:
    with pytest.raises(UserError, match="inside a @pl.function"):
        pl.add(1, 2)
    with pytest.raises(UserError, match="inside a @pl.function"):
        pl.range(3)
    with pytest.raises(AttributeError):
        pl.tile.not_an_op  # noqa: B018


def test_import_is_lazy() -> None:
    code = ("import sys, pypto.language as pl; "
            "print(any(m in sys.modules for m in ('pypto.language.parser', 'pypto.passes', 'pypto.codegen')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
