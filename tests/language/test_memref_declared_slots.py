"""``buf = pl.MemRef(slots=N)`` declared outside the program and used as ``buf[k]`` in tile annotations:
the buffer is named after its variable, prints as ``pl.MemRef("buf", ..., slots=N)[k]`` and parses back."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import ParserTypeError
from pypto.ir.expr import BinaryExpr, BinOp, Var
from pypto.ir.printer import python_print
from pypto.ir.stmt import AssignStmt, preorder
from pypto.ir.structural import assert_structural_equal

PING = pl.MemRef(slots=2)
RING = pl.MemRef(slots=3)
ALIAS = PING

V = "pl.Tensor[[128, 32], pl.FP32]"


@pl.program
class Rotating:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[128, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) \
            -> pl.Tensor[[32, 32], pl.FP32]:
        first: pl.Tile[[32, 32], pl.FP32, RING[0], pl.Mem.Vec] = pl.load(a, [0, 0], [32, 32])
        for i, (acc,) in pl.range(1, 4, init_values=(first,)):
            t: pl.Tile[[32, 32], pl.FP32, PING[i % 2], pl.Mem.Vec] = pl.load(a, [i * 32, 0], [32, 32])
            nxt: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.add(acc, t)
            r = pl.yield_(nxt)
        out = pl.store(r, [0, 0], out)
        return out


def _memrefs(prog) -> dict[str, object]:
    return {s.var.name.split("__")[0]: s.var.var_type.memref for f in prog.functions for s in preorder(f.body)
            if isinstance(s, AssignStmt) and getattr(s.var.var_type, "memref", None) is not None}


def test_declaration_is_named_after_its_variable_with_constant_and_dynamic_slots():
    refs = _memrefs(Rotating)
    assert (refs["first"].base, refs["first"].slots, refs["first"].slot) == ("RING", 3, 0)
    t = refs["t"]
    assert (t.base, t.slots) == ("PING", 2)
    assert isinstance(t.slot, BinaryExpr) and t.slot.op is BinOp.FloorMod and isinstance(t.slot.lhs, Var)


def test_declared_slots_print_inline_and_round_trip():
    text = python_print(Rotating)
    assert 'pl.MemRef("RING", pl.const(0, pl.INT64), 0, slots=3)[0]' in text
    assert 'pl.MemRef("PING", pl.const(0, pl.INT64), 0, slots=2)[i % 2]' in text
    again = pl.parse(text)
    assert_structural_equal(again, Rotating)
    assert python_print(again) == text


def test_text_parse_takes_a_module_level_declaration():
    src = f"""import pypto.language as pl
BUF = pl.MemRef(slots=2)

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {V}, out: pl.Out[{V}]) -> {V}:
        for i in pl.range(4):
            t: pl.Tile[[32, 32], pl.FP32, BUF[(i + 1) % 2], pl.Mem.Vec] = pl.load(a, [i * 32, 0], [32, 32])
            out = pl.store(t, [i * 32, 0], out)
        return out
"""
    refs = _memrefs(pl.parse(src))
    assert refs["t"].base == "BUF" and refs["t"].slots == 2
    assert "BUF\", pl.const(0, pl.INT64), 0, slots=2)[(i + 1) % 2]" in python_print(pl.parse(src))


def _kernel(ann: str, decl: str = "BUF = pl.MemRef(slots=2)") -> str:
    return f"""import pypto.language as pl
{decl}

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {V}, out: pl.Out[{V}]) -> {V}:
        for i in pl.range(4):
            t: pl.Tile[[32, 32], pl.FP32, {ann}, pl.Mem.Vec] = pl.load(a, [i * 32, 0], [32, 32])
            out = pl.store(t, [i * 32, 0], out)
        return out
"""


@pytest.mark.parametrize(("ann", "decl", "message", "hint"), [
    ("BUF[i % 2]", "BUF = pl.MemRef(slots=0)", "pl.MemRef(slots=...) takes a positive integer, got 0",
     "declare pl.MemRef(slots=2)"),
    ("BUF[2]", "BUF = pl.MemRef(slots=2)", "slot 2 is out of range for pl.MemRef(..., slots=2)",
     "pl.MemRef 'BUF' holds slots 0..1"),
    ("BUF[-1]", "BUF = pl.MemRef(slots=2)", "slot -1 is out of range for pl.MemRef(..., slots=2)",
     "pl.MemRef 'BUF' holds slots 0..1"),
    ("BUF", "BUF = pl.MemRef(slots=2)", "pl.MemRef(..., slots=2) needs a slot index",
     "pl.MemRef 'BUF' holds 2 slots"),
    ("BUF[0]", "BUF = pl.MemRef()", "only pl.MemRef(..., slots=N) with N > 1 can be subscripted",
     "declare pl.MemRef 'BUF' with slots=N"),
    ("pl.MemRef(slots=2)[0]", "", "an unnamed pl.MemRef(...) is named after the variable it is bound to",
     "buf = pl.MemRef(slots=2)"),
])
def test_bad_declared_slot_use_is_a_located_error(ann, decl, message, hint):
    with pytest.raises(ParserTypeError) as ei:
        pl.parse(_kernel(ann, decl))
    err = ei.value
    assert err.message.startswith(message) and hint in (err.hint or "")
    assert (err.span.line, err.span.col) == (9, 43)  # the slot entry of t's annotation


def test_one_declaration_under_two_names_is_refused():
    src = _kernel("BUF[i % 2]", "BUF = pl.MemRef(slots=2)\nOTHER = BUF").replace(
        "out = pl.store(t,", "u: pl.Tile[[32, 32], pl.FP32, OTHER[(i + 1) % 2], pl.Mem.Vec] = pl.exp(t)\n"
        "            out = pl.store(u,")
    with pytest.raises(ParserTypeError, match="one pl.MemRef declaration is used as 'BUF' and as 'OTHER'") as ei:
        pl.parse(src)
    assert ei.value.span.line == 11 and "write 'BUF' here too" in ei.value.hint


def test_alias_in_python_module_is_fine_when_only_one_name_is_used():
    assert ALIAS is PING  # the Python alias exists; the program above only ever names it PING
    assert {r.base for r in _memrefs(Rotating).values()} == {"RING", "PING"}


def test_unnamed_single_buffer_declaration_is_named_after_its_variable():
    src = _kernel("SCRATCH", "SCRATCH = pl.MemRef()")
    refs = _memrefs(pl.parse(src))
    assert (refs["t"].base, refs["t"].slots, refs["t"].slot) == ("SCRATCH", 1, None)
    assert 'pl.MemRef("SCRATCH", pl.const(0, pl.INT64), 0)' in python_print(pl.parse(src))
