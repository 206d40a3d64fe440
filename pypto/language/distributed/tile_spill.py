"""Tiles that cross a split: a tile made in one kernel segment and used in a later one goes through GM.

:mod:`.comm_split` cuts a kernel into ``pl.at(CORE_GROUP)`` segments; a tile cannot leave its segment.
For each tile a later segment reads, the segment that last defined it ends with a store into a GM
scratch tensor and the reading segment starts with a load from it. The tile's shape and dtype come
from how it was made (``pl.load(t, offsets, shape)``: the shape and ``t``'s dtype; ``pl.cast(a,
target_type=D)``: ``a``'s shape, D; any other tile op: its first tile operand's); a tile whose type
cannot be told this way is a located error at its use.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType

TileType = tuple[list[int], DataType]


def _static(node: ast.expr, env: dict[str, Any]) -> Any:
    try:
        return eval(compile(ast.Expression(node), "<tile facts>", "eval"), env)  # noqa: S307 - the kernel's own text
    except Exception:  # noqa: BLE001 - not a static value
        return None


def _op_name(func: ast.expr, env: dict[str, Any]) -> str:
    obj = _static(func, env)
    return str(getattr(obj, "op", None) or getattr(obj, "name", "") or "")


def infer(stmt: ast.stmt, env: dict[str, Any], tensors: dict[str, TileType], tiles: dict[str, TileType],
          stored: set[str]) -> None:
    """Record the type of the tile ``stmt`` assigns (if it assigns one whose type can be told); the
    name a ``pl.store`` result is bound to goes to ``stored`` (a tensor, never spilled)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call)):
        return
    name, call = stmt.targets[0].id, stmt.value
    op = _op_name(call.func, env)
    if "store" in op:
        stored.add(name)  # a tensor, not a tile
        return
    if op.endswith("load") and len(call.args) >= 3 and isinstance(call.args[0], ast.Name):
        shape, src = _static(call.args[2], env), tensors.get(call.args[0].id)
        if isinstance(shape, list | tuple) and src is not None:
            tiles[name] = ([int(d) for d in shape], src[1])
        return
    first = next((tiles[a.id] for a in call.args if isinstance(a, ast.Name) and a.id in tiles), None)
    if first is None:
        return
    if op.endswith("cast"):
        target = next((_static(k.value, env) for k in call.keywords if k.arg == "target_type"), None)
        if isinstance(target, DataType):
            tiles[name] = (first[0], target)
        return
    tiles[name] = first


def _names(nodes: list[ast.stmt], ctx: type) -> list[tuple[str, ast.Name]]:
    return [(n.id, n) for s in nodes for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)]


def spill(out: list[ast.stmt], tiles: dict[str, TileType], tensors: set[str],
          new_scratch: Callable[[list[int], DataType], str], span_of: Callable[[ast.AST], Any]) -> None:
    """Add the stores and loads for every tile a later top-level segment of ``out`` reads (in place);
    ``tensors`` are names bound to tensors (parameters, store results, scratch), which are not spilled."""
    segments = [s for s in out if isinstance(s, ast.With)]
    last_def: dict[str, ast.With] = {}
    scratch: dict[tuple[str, int], str] = {}
    for seg in segments:
        defined_here: set[str] = set()
        loads: list[ast.stmt] = []
        for stmt in seg.body:
            for name, node in _names([stmt], ast.Load):
                if name in defined_here or name not in last_def or name in tensors \
                        or name in {n for n, _ in loads_of(loads)}:
                    continue
                if name not in tiles:
                    raise UnsupportedFeatureError(
                        f"tile '{name}' is used after a comm op that split the kernel, and its shape and dtype "
                        "cannot be told from how it was made", span_of(node),
                        "reload it with pl.load from a tensor after the comm op")
                key = (name, id(last_def[name]))
                if key not in scratch:
                    scratch[key] = new_scratch(*tiles[name])
                    last_def[name].body.append(_store(name, scratch[key], len(tiles[name][0])))
                loads.append(_load(name, scratch[key], tiles[name][0]))
            defined_here.update(n for n, _ in _names([stmt], ast.Store))
        seg.body[:0] = loads
        for name in defined_here:
            last_def[name] = seg


def loads_of(loads: list[ast.stmt]) -> list[tuple[str, ast.AST]]:
    return [(s.targets[0].id, s) for s in loads if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)]


def _zeros(n: int) -> ast.List:
    return ast.List([ast.Constant(0)] * n, ast.Load())


def _pl(attr: str) -> ast.Attribute:
    return ast.Attribute(ast.Name("pl", ast.Load()), attr, ast.Load())


def _store(tile: str, scratch: str, rank: int) -> ast.stmt:
    value = ast.Call(_pl("store"), [ast.Name(tile, ast.Load()), _zeros(rank), ast.Name(scratch, ast.Load())], [])
    return ast.Assign(targets=[ast.Name(scratch, ast.Store())], value=value)


def _load(tile: str, scratch: str, shape: list[int]) -> ast.stmt:
    shape_node = ast.List([ast.Constant(d) for d in shape], ast.Load())
    value = ast.Call(_pl("load"), [ast.Name(scratch, ast.Load()), _zeros(len(shape)), shape_node], [])
    return ast.Assign(targets=[ast.Name(tile, ast.Store())], value=value)
