"""Helpers shared by the kernel-cut tests (test_kernel_cut, test_ub_cut): the front of the pipeline up to
the cuts, and the program functions a function calls."""

from __future__ import annotations

import pypto.language as pl
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, preorder
from pypto.passes import get_pass

# the passes up to GatherCarriedReads, which cuts kernels for room (pypto.passes._ub_cut)
FRONT = ("InlineFunctions", "UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "Simplify",
         "NormalizeStmtStructure", "FlattenCallExpr", "OutlineHierarchyScopes", "OutlineIncoreScopes",
         "GatherCarriedReads")


def run_passes(prog: Program, names: tuple[str, ...]) -> Program:
    for name in names:
        prog = get_pass(name)().run(prog)
    return prog


def front(text: str, names: tuple[str, ...] = FRONT) -> Program:
    """``text`` parsed and run through ``names``."""
    return run_passes(pl.parse_program(text), names)


def program_calls(f: Function) -> list[str]:
    """The names of the program functions ``f`` calls, in order."""
    return [s.value.op.name for s in preorder(f.body)
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) and isinstance(s.value.op, GlobalVar)]
