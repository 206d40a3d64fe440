"""``ir.serialize`` / ``ir.deserialize`` (+ file variants) and the MessagePack codec under them."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir import msgpack
from pypto.ir.expr import IterArg, Var
from pypto.ir.stmt import preorder

TEXT = '''
@pl.program
class Acc:
    @pl.function(type=pl.FunctionType.InCore)
    def body(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [64, 64])
        for i, (acc,) in pl.range(4, init_values=(t,)):
            # doubled each round
            nxt = pl.add(acc, acc)
            acc2 = pl.yield_(nxt)
        out = pl.store(acc2, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = self.body(x, out)
        return out
'''


@pl.jit
def twice(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k") as tid:
        out[:] = pl.mul(a, 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, deps=[tid]):
        out[:] = pl.add(out, 1.0)
    return out


def _vars(func: ir.Function) -> list[Var]:
    found = list(func.params)
    for s in preorder(func.body):
        found += [getattr(s, "var", None), *getattr(s, "iter_args", ()), *getattr(s, "return_vars", ())]
    return [v for v in found if isinstance(v, Var)]


def test_program_round_trip_is_structurally_equal_and_keeps_sharing():
    program = pl.parse(TEXT)
    data = ir.serialize(program)
    assert isinstance(data, bytes) and data[:1] == b"\x84"  # a 4-entry MessagePack map
    back = ir.deserialize(data)
    assert isinstance(back, ir.Program) and back is not program
    ir.assert_structural_equal(program, back)
    assert back.as_python() == program.as_python()  # names, comments and spans' text survive
    body = back.get_function("body")
    loop = next(s for s in preorder(body.body) if isinstance(s, ir.ForStmt))
    acc = loop.iter_args[0]
    assert isinstance(acc, IterArg)
    uses = [a for s in preorder(loop.body) if isinstance(s, ir.AssignStmt) for a in s.value.args]
    assert any(u is acc for u in uses)  # the body reads the very IterArg object the loop defines
    assert loop.inits == (_vars(body)[2],)  # the init is the Var of `t`, not a copy
    old = {v.uid for f in program.functions for v in _vars(f)}
    assert not old & {v.uid for f in back.functions for v in _vars(f)}  # fresh Var ids


def test_lowered_program_round_trip_compiles_to_the_same_code(tmp_path):
    x = np.zeros((64, 64), np.float32)
    lowered = twice.lower(x, x)
    path = tmp_path / "twice.ir"
    ir.serialize_to_file(lowered, path)
    back = ir.deserialize_from_file(path)
    ir.assert_structural_equal(lowered, back)

    def code(p, name):
        out = ir.compile(p, output_dir=tmp_path / name, skip_ptoas=True, dump_passes=False, emit_source_loc=False)
        return sorted((f.name, f.read_text()) for f in out.output_dir.rglob("*.pto")) + \
            sorted((f.name, f.read_text()) for f in out.output_dir.glob("orchestration/*"))

    assert code(back, "back") == code(lowered, "lowered")


def test_functions_types_and_expressions_serialize_alone():
    func = pl.parse(TEXT).get_function("body")
    assert ir.structural_equal(ir.deserialize(ir.serialize(func)), func)
    t = func.params[0].var_type
    assert ir.deserialize(ir.serialize(t)) == t
    assert ir.deserialize(ir.serialize(ir.DataType.BF16)) is ir.DataType.BF16


def test_bad_input_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="not a serialized pypto IR document"):
        ir.deserialize(b"\x93\x01\x02")
    with pytest.raises(ValueError, match="not a serialized pypto IR document"):
        ir.deserialize(b"\xc1")
    doc = msgpack.packb({"format": "pypto.ir", "version": 99, "strings": [], "root": None})
    with pytest.raises(ValueError, match="format version 99 is not supported"):
        ir.deserialize(doc)
    evil = msgpack.packb({"format": "pypto.ir", "version": 1, "strings": [], "root": {"$T": "Popen", "$I": 0}})
    with pytest.raises(ValueError, match="unknown IR class 'Popen'"):
        ir.deserialize(evil)
    with pytest.raises(TypeError, match="cannot serialize a value of type object"):
        ir.serialize(object())
    with pytest.raises(FileNotFoundError):
        ir.deserialize_from_file(tmp_path / "missing.ir")


@pytest.mark.parametrize("value", [
    None, True, False, 0, 127, 128, -1, -32, -33, 255, 2**16, 2**32, 2**64 - 1, -(2**63), 1.5, -0.0,
    "", "x" * 31, "y" * 300, "é中", b"\x00\xff", [1, [2, [3]]], {"a": [1, 2], 3: None},
    list(range(70000)), {str(i): i for i in range(20)},
])
def test_msgpack_round_trip(value):
    assert msgpack.unpackb(msgpack.packb(value)) == value


def test_msgpack_encodings_follow_the_spec():
    assert msgpack.packb(5) == b"\x05" and msgpack.packb(-1) == b"\xff"
    assert msgpack.packb(1.0) == b"\xcb" + struct.pack(">d", 1.0)
    assert msgpack.packb("ab") == b"\xa2ab" and msgpack.packb([1]) == b"\x91\x01"
    assert msgpack.packb({"a": 1}) == b"\x81\xa1a\x01"
    assert msgpack.unpackb(b"\xcd\x01\x00") == 256 and msgpack.unpackb(b"\xd0\xff") == -1
    with pytest.raises(msgpack.MsgpackError, match="does not fit in 64 bits"):
        msgpack.packb(2**64)
    with pytest.raises(msgpack.MsgpackError, match="truncated"):
        msgpack.unpackb(b"\xa5ab")
    with pytest.raises(msgpack.MsgpackError, match="trailing bytes"):
        msgpack.unpackb(b"\x01\x02")


def test_a_loops_initial_values_are_written_in_its_iter_args_records():
    """Format version 1 keeps each IterArg's initial value in the IterArg's own record (no ``inits``
    field on the loop), so documents written before the values moved onto the loop still read."""
    program = pl.parse(TEXT)
    doc = msgpack.unpackb(ir.serialize(program))
    records: list[dict] = []

    def walk(v: object) -> None:
        if isinstance(v, dict):
            records.append(v)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(doc["root"])
    loops = [r for r in records if r.get("$T") == "ForStmt"]
    assert loops and all("inits" not in r for r in loops)
    (carried,) = [r for r in records if r.get("$T") == "IterArg"]
    assert list(carried)[-1] == "init" and carried["init"]["$R"] >= 0  # the Var `t`, already written
    loop = next(s for s in preorder(ir.deserialize(ir.serialize(program)).get_function("body").body)
                if isinstance(s, ir.ForStmt))
    assert len(loop.inits) == 1 and loop.inits[0].name == "t"


def test_a_loop_needs_one_initial_value_per_iter_arg():
    acc = IterArg("acc", ir.ScalarType(ir.DataType.INDEX))
    with pytest.raises(ValueError, match="1 iter_args need as many inits, got 0"):
        ir.ForStmt(Var("i"), ir.ConstInt(0), ir.ConstInt(4), ir.ConstInt(1), ir.SeqStmts(()), (acc,))
    with pytest.raises(ValueError, match="WhileStmt"):
        ir.WhileStmt(ir.ConstBool(True), ir.SeqStmts(()), (), inits=(ir.ConstInt(0),))
