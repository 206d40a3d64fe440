"""InlineFunctions expands ``return f(...)`` of an inline function as ``tmp = f(...); return tmp``."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto.ir.stmt import ReturnStmt, preorder
from pypto.ir.verifier import calls as calls_in

N = 32


@pl.jit.inline
def twice(a: pl.Tensor[[1, N], pl.FP32], out: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [1, N])
        out = pl.store(pl.add(t, t), [0, 0], out)
    return out


@pl.jit
def outer(a: pl.Tensor[[1, N], pl.FP32], out: pl.Out[pl.Tensor[[1, N], pl.FP32]]):
    return twice(a, out)


def test_return_of_an_inline_call_is_expanded():
    program = outer.lower(np.zeros((1, N), np.float32), np.zeros((1, N), np.float32))  # after every pass
    names = {f.name for f in program.functions}
    assert "twice" not in names  # inlined and removed
    orch = next(f for f in program.functions if f.is_orchestration)
    assert not any(getattr(c.op, "name", "") == "twice" for c in calls_in(orch.body))
    assert any(isinstance(s, ReturnStmt) for s in preorder(orch.body))
