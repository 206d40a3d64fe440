"""InferTileMemorySpace: every tile gets a MemorySpace (Vec for vector ops, Acc for matmul results);
matmul operands in Mat are moved to Left/Right with inserted ``tile.move``."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from pypto.errors import UserError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import get_op, make_call, op_of, ops_where
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, Stmt, merge_sources
from pypto.ir.types import TileType, TileView
from pypto.passes._rewrite import emit, rewrite_blocks
from pypto.passes._util import base_name, calls_in, iter_stmts, retype, tile_space, var_use_counts
from pypto.passes.base import Pass

# matmul operand index -> the space the cube reads it from
OPERAND_SPACE: dict[int, MemorySpace] = {0: MemorySpace.Left, 1: MemorySpace.Right}
# tile.matmul_bias reads its bias from the Bias table (ptoas cannot infer a scope for a Mat bias)
BIAS_SPACE: dict[int, MemorySpace] = {**OPERAND_SPACE, 2: MemorySpace.Bias}
MOVE_SUFFIX = {MemorySpace.Left: "l0a", MemorySpace.Right: "l0b", MemorySpace.Bias: "bt"}


def _moves(s: Stmt, call: Call) -> list[Stmt] | None:
    """Insert tile.move for the operands of a cube op (one with a result space) that still sit in Mat."""
    if not isinstance(s, AssignStmt):
        return None
    pre: list[Stmt] = []
    args = list(call.args)
    first = 1 if get_op(call.op).reuses else 0  # operands after the accumulator
    for i, want in (BIAS_SPACE if call.op == "tile.matmul_bias" else OPERAND_SPACE).items():
        a = args[first + i]
        have = tile_space(a)
        if have is want:
            continue
        if have in (None, MemorySpace.Vec):
            # a vector tile as a cube operand: staged through Mat (ExpandMixedKernel turns the move into a
            # GM temp written by the vector stage and loaded into Mat by the cube stage)
            mat = make_call("tile.move", [a], {"target_memory": MemorySpace.Mat}, span=call.span)
            a = emit(pre, f"{base_name(getattr(a, 'name', 't'))}_mat", mat, s.span, call.span)
            have = MemorySpace.Mat
        if have is not MemorySpace.Mat:  # an Acc operand too: a matmul result (no Acc->Mat move in 0.1.1)
            raise UserError(f"{call.op} operand {i} is in {have.value if have else 'no memory space'}; the cube "
                            f"reads operands from Mat via Left/Right (and a bias via the Bias table)", call.span,
                            hint="load the operand with target_memory=pl.Mem.Mat")
        move = make_call("tile.move", [a], {"target_memory": want}, span=call.span)
        args[first + i] = emit(pre, f"{base_name(getattr(a, 'name', 't'))}_{MOVE_SUFFIX[want]}", move, s.span, call.span)
    return [*pre, dataclasses.replace(s, value=dataclasses.replace(call, args=tuple(args)))] if pre else None


@dataclass(frozen=True)
class InferTileMemorySpace(Pass):
    """Fill in the memory space of every tile in InCore functions."""

    name = "InferTileMemorySpace"
    produces = frozenset({IRProperty.TileMemoryInferred})

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore:
            return func
        body = rewrite_blocks(func.body, dict.fromkeys(ops_where(lambda op: op.result_space), _moves))
        func = func if body is func.body else func.with_(body=body)
        return retype(func, {**_open_tiles(func), **_bias_stages(func)})


def _bias_stages(func: Function) -> dict[Var, TileType]:
    """Mat tiles only ever moved to the Bias table, laid out as one plain row (ND) instead of Mat's NZ boxes.

    The Bias table holds one row; in NZ a ``[1, n]`` Mat tile spans 16 rows of boxes (8 KiB for 128 f32), but
    ptoas 0.1.1 plans it by its logical bytes (512), so the tiles it places next to it overlapped its boxes and
    the bias load overwrote them (boundary ``matmul_bias`` grids computed wrong numbers). ND takes exactly its
    logical bytes, and ``tmov`` mat -> bias copies the row as it is."""
    moved = Counter(c.args[0] for c in calls_in(func.body)
                    if c.op == "tile.move" and c.kwargs.get("target_memory") is MemorySpace.Bias)
    uses = var_use_counts(func.body)
    out: dict[Var, TileType] = {}
    for v, n in moved.items():
        t = v.var_type if isinstance(v, Var) else None
        if isinstance(t, TileType) and t.memory_space is MemorySpace.Mat and t.view is None and uses[v] == n + 1:
            out[v] = dataclasses.replace(t, view=TileView())
    return out


def _open_tiles(func: Function) -> dict[Var, TileType]:
    new: dict[Var, TileType] = {}
    for s in iter_stmts(func.body):
        if isinstance(s, AssignStmt) and isinstance(s.var.var_type, TileType) and s.var.var_type.memory_space is None:
            op = op_of(s.value)
            space = op.result_space if op is not None and op.result_space else MemorySpace.Vec
            new[s.var] = dataclasses.replace(s.var.var_type, memory_space=space)
    _carried_tiles(func, new)
    return new


def _carried_tiles(func: Function, new: dict[Var, TileType]) -> None:
    """Loop-carried tiles take the space of their init; loop/if results the space of what they carry."""
    for _ in range(4):  # nested loops/ifs settle in a few rounds
        changed = False
        for s in iter_stmts(func.body):
            for v, src in merge_sources(s):
                space = new[src].memory_space if isinstance(src, Var) and src in new else tile_space(src)
                still_open = isinstance(v.var_type, TileType) and v.var_type.memory_space is None and v not in new
                if still_open and space is not None:
                    new[v] = dataclasses.replace(v.var_type, memory_space=space)
                    changed = True
        if not changed:
            return


__all__ = ["InferTileMemorySpace"]
