"""NormalizeStmtStructure: flatten nested statement blocks and unwrap single-statement blocks."""

from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import SeqStmts, flatten, seq
from pypto.passes._util import iter_stmts, map_blocks
from pypto.passes.base import Pass


def _needs_work(func: Function) -> bool:
    seqs = [s for s in iter_stmts(func.body) if isinstance(s, SeqStmts)]
    return any(len(s.stmts) == 1 or any(isinstance(c, SeqStmts) for c in s.stmts) for s in seqs)


@dataclass(frozen=True)
class NormalizeStmtStructure(Pass):
    """Every body becomes a flat SeqStmts (or its single statement)."""

    name = "NormalizeStmtStructure"
    produces = frozenset({IRProperty.NormalizedStmtStructure, IRProperty.NoRedundantBlocks})

    def run_function(self, func: Function, program: Program) -> Function:
        if not _needs_work(func):
            return func
        body = map_blocks(func.body, lambda stmts: [s for s in stmts if not (isinstance(s, SeqStmts) and not s.stmts)])
        if _needs_work(func.with_(body=body)):
            body = seq(flatten(body))
        return func.with_(body=body)
