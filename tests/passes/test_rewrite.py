"""passes/_rewrite.py: the typed op-call match, rule tables over blocks and the one clone routine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pypto.language as pl
from pypto.errors import InternalError
from pypto.ir.expr import ConstInt, IterArg
from pypto.ir.stmt import AssignStmt, ForStmt, flatten, preorder
from pypto.passes._rewrite import (
    assign_of,
    call_in,
    clone,
    elements,
    expand_stmts,
    fresh_vars,
    match,
    rewrite_blocks,
)

PASSES = Path(__file__).resolve().parents[2] / "pypto" / "passes"


@pl.program
class _P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
          ) -> pl.Tensor[[16, 16], pl.FP32]:
        for _i in pl.range(2):
            t = pl.load(a, [0, 0], [16, 16])
            u = pl.add(t, t)
            out = pl.store(u, [0, 0], out)
        return out


def _body():
    return _P.functions[0].body


def test_match_and_assign_of():
    stmts = [s for s in preorder(_body()) if isinstance(s, AssignStmt)]
    load = next(s for s in stmts if s.var.name.startswith("t"))
    assert match(load, "tile.load") is load.value and match(load, {"tile.load", "tile.add"}) is load.value
    assert match(load, "tile.add") is None and match(ConstInt(1)) is None
    assert assign_of(load, "tile.load") == (load.var, load.value)
    assert call_in(load) is load.value and elements(load.value.args[1])[0].value == 0
    with pytest.raises(InternalError):
        elements(load.var)


def test_rewrite_blocks_applies_rules_in_nested_blocks_and_shares_untouched_bodies():
    body = _body()
    assert rewrite_blocks(body, {"tile.mul": lambda s, c: []}) is body
    new = rewrite_blocks(body, {"tile.add": lambda s, c: []})
    assert not any(match(s, "tile.add") for s in preorder(new))
    assert any(match(s, "tile.load") for s in preorder(new))


def test_expand_stmts_replaces_deletes_or_keeps_each_statement_of_every_block():
    body = _body()
    assert expand_stmts(body, lambda s: None) is body
    dup = expand_stmts(body, lambda s: [s, s] if match(s, "tile.load") else [] if match(s, "tile.add") else None)
    loop = next(s for s in preorder(dup) if isinstance(s, ForStmt))
    ops = [match(s).op for s in flatten(loop.body) if match(s) is not None]
    assert ops == ["tile.load", "tile.load", "tile.store"]


def test_clone_defines_fresh_vars_and_reaches_loop_inits():
    loop = next(s for s in preorder(_body()) if isinstance(s, ForStmt))
    mapping: dict = {}
    [copy] = clone([loop], mapping)
    assert copy is not loop and copy.loop_var is not loop.loop_var and mapping[loop.loop_var] is copy.loop_var
    old_defs = {s.var for s in preorder(loop) if isinstance(s, AssignStmt)}
    new_defs = {s.var for s in preorder(copy) if isinstance(s, AssignStmt)}
    assert not old_defs & new_defs and len(new_defs) == len(old_defs)
    for ia, new in zip(loop.iter_args, copy.iter_args, strict=True):
        assert isinstance(new, IterArg) and new is not ia and mapping[ia] is new
    assert copy.inits == tuple(mapping.get(e, e) for e in loop.inits)


def test_fresh_vars_shares_no_var_with_the_original():
    f = _P.functions[0]
    g = fresh_vars(f)
    old = set(f.params) | {s.var for s in preorder(f.body) if isinstance(s, AssignStmt)}
    new = set(g.params) | {s.var for s in preorder(g.body) if isinstance(s, AssignStmt)}
    assert not old & new and [p.name for p in g.params] == [p.name for p in f.params]
    assert len(flatten(g.body)) == len(flatten(f.body))


def test_no_pass_hand_rolls_the_op_call_match():
    idiom = re.compile(r"isinstance\((\w+(?:\.\w+)?)\.value, Call\) and \1\.value\.op (==|in)")
    found = [f"{p.name}:{n}" for p in sorted(PASSES.glob("*.py")) if p.name != "_rewrite.py"
             for n, line in enumerate(p.read_text().splitlines(), 1) if idiom.search(line)]
    assert found == []
