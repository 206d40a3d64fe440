"""Op facts live on the op (``OpDef`` traits); passes and the verifier read them, never a table of their own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pypto.ir.callgraph import written_args
from pypto.ir.enums import MemorySpace
from pypto.ir.ops.registry import all_ops, get_op, lookup, op_of, ops_where, written_index

PKG = Path(__file__).resolve().parents[2] / "pypto"


def test_written_operands_are_named_by_the_registry():
    assert ops_where(lambda op: op.writes) == {"tile.store", "tile.write", "tensor.write", "tensor.assemble", "tensor.expand_clone",
                                                  "tile.mscatter", "tensor.gather_row"}
    assert get_op("tile.store").writes_index == 2
    assert get_op("tensor.assemble").writes_index == 0


def test_every_writing_op_is_kept_for_its_effect():
    for op in all_ops().values():
        if op.writes is not None:
            assert op.has_effect, op.name


def test_cube_ops_and_their_result_space():
    assert ops_where(lambda op: op.core == "cube" and op.namespace == "tile") == {
        "tile.matmul", "tile.matmul_acc", "tile.matmul_bias", "tile.batch_matmul"}
    for name in ("tile.matmul", "tile.matmul_acc", "tile.matmul_bias", "tile.batch_matmul"):
        assert get_op(name).result_space is MemorySpace.Acc
    assert get_op("tile.add").result_space is None


def test_buffer_aliasing_traits():
    assert get_op("tile.matmul_acc").buffer_index == 0  # accumulates into acc
    assert get_op("tile.store").buffer_index == 2
    assert ops_where(lambda op: op.view_of) == {"tensor.slice", "tensor.reshape", "tensor.transpose",
                                                "tensor.set_validshape"}
    assert ops_where(lambda op: op.fresh) == {"tensor.create"}
    assert ops_where(lambda op: op.keeps_operands) == {"tile.concat", "tile.assemble", "tile.reshape",
                                                       "tile.set_validshape", "tile.fillpad_expand",
                                                       "tile.reinterpret_view"}
    assert not get_op("tile.row_sum").in_place and get_op("tile.add").in_place


def test_lookups_of_non_ops_are_none():
    from pypto.ir.expr import GlobalVar

    assert lookup(GlobalVar("kernel")) is None and lookup("no.such_op") is None and op_of(3) is None


def test_written_args_of_an_op_call_and_a_program_call():
    import pypto.language as pl

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
              ) -> pl.Tensor[[16, 16], pl.FP32]:
            t = pl.load(a, [0, 0], [16, 16])
            out = pl.store(t, [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
                 ) -> pl.Tensor[[16, 16], pl.FP32]:
            out = self.k(a, out)
            return out

    from pypto.ir.stmt import AssignStmt, preorder

    calls = {s.value.op if isinstance(s.value.op, str) else s.value.op.name: s.value
             for f in P.functions for s in preorder(f.body) if isinstance(s, AssignStmt)}
    assert written_args(calls["tile.store"], P) == (2,) and written_index(calls["tile.store"]) == 2
    assert written_args(calls["tile.load"], P) == ()
    assert written_args(calls["k"], P) == (1,) and written_index(calls["k"]) is None


_FAMILIES = {"BINARY", "SCALAR", "UNARY", "ROW_REDUCE", "COL_REDUCE", "ARG_REDUCE", "ROW_EXPAND", "COL_EXPAND"}


def _op_name_tables(path: Path, root: Path = PKG.parent) -> list[str]:
    """Module-level assignments whose value is a literal of two or more registered op names, of three or more
    short op names (``"add"``, ``"cast"``), or a table built from the registry's op families."""
    names = set(all_ops())
    shorts = {n.split(".", 1)[1] for n in names}
    found = []
    for node in ast.parse(path.read_text()).body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if value is None:
            continue
        consts = [c.value for c in ast.walk(value) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
        families = [c.id for c in ast.walk(value) if isinstance(c, ast.Name) and c.id in _FAMILIES]
        if sum(c in names for c in consts) >= 2 or sum(c in shorts for c in consts) >= 3 or families:
            found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_a_short_name_or_family_table_is_found(tmp_path):
    src = tmp_path / "p.py"
    src.write_text('A = {"add": 1, "sub": 2, "mul": 3}\nB = frozenset((*BINARY, "cast"))\nC = ("row", "col")\n')
    assert _op_name_tables(src, tmp_path) == ["p.py:1", "p.py:2"]


@pytest.mark.parametrize("path", [*sorted((PKG / "passes").glob("*.py")), PKG / "ir" / "verifier.py"],
                         ids=lambda p: p.name)
def test_no_pass_keeps_its_own_table_of_op_facts(path):
    assert _op_name_tables(path) == []


def test_passes_match_typed_not_through_type_ignores():
    """Issue 27's bar: fewer than 20 ``type: ignore`` in passes/ (typed matching: ``match``, TypeGuards)."""
    counts = {p.name: p.read_text().count("type: ignore") for p in sorted((PKG / "passes").glob("*.py"))}
    assert sum(counts.values()) < 20, {k: v for k, v in counts.items() if v}
