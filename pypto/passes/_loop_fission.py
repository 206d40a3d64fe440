"""Loop fission for ExpandMixedKernel: a loop (or a perfect loop nest) mixing cube and vector work, with
constant trip counts too large to unroll, becomes two loops over the same iterations, one per core.

The first loop runs the statements of one core and stores each iteration's crossing tile (the matmul's
Acc result, say) into a GM temp tensor, at the row offset ``i * rows`` of the iteration's linear index
``i``; the second loop loads it back from there and runs the other core's statements. The two loops are
then two top-level statements of the stage analysis (:mod:`pypto.passes._mixed_split`): the temp is a
tensor the kernel uses but does not take as a parameter, written by one loop and read by the other, so
the stages order them, and ExpandMixedKernel creates it in the orchestration like its other temps.

Legal only when every dependence between the halves runs one way inside an iteration (cube -> vector or
vector -> cube) and the first loop reads nothing the second writes: a carried value belongs to one half,
and a tensor both halves touch is read-only. Otherwise the loop is left alone (and refused as before).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, MakeTuple, Var, as_int
from pypto.ir.ops.registry import make_call, written_index
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, WhileStmt, YieldStmt, flatten, seq
from pypto.ir.types import TensorType, TileType
from pypto.ir.visitor import substitute
from pypto.passes._rewrite import assign_of, ints, last_writes, store_tile
from pypto.passes._util import (
    base_name,
    calls_in,
    defined_vars,
    follow,
    free_vars,
    iter_stmts,
    map_blocks,
    scalar_dtype,
    substitute_typed,
)

MAX_TEMP_BYTES = 64 << 20  # one GM temp of a split loop: all its iterations' tiles
CROSS_SPACES = frozenset({MemorySpace.Vec, MemorySpace.Acc})
LOAD_SPACE = {"cube": MemorySpace.Mat, "vector": MemorySpace.Vec}

Cores = Callable[[Stmt], set[str]]


def trip_count(loop: ForStmt) -> int | None:
    """Iterations of a loop whose bounds differ by a constant (``range(db, db + 2)`` -> 2)."""
    from pypto.language.subscript import _linear

    step = as_int(loop.step)
    (lt, lc), (ht, hc) = _linear(loop.start), _linear(loop.stop)
    if not step or step < 0 or lt != ht:
        return None
    return max(0, -(-(hc - lc) // step))


def tensor_roots(body: Stmt) -> dict[Var, Var]:
    """Each tensor version in ``body`` -> the one it updates or copies (a store's target, a loop's init)."""
    links: dict[Var, Var] = {}
    for s in iter_stmts(body):
        if isinstance(s, AssignStmt) and isinstance(s.var.type, TensorType):
            k = written_index(s.value) if isinstance(s.value, Call) else None
            src = s.value if isinstance(s.value, Var) else s.value.args[k] if k is not None else None
            if isinstance(src, Var):
                links[s.var] = src
        if isinstance(s, (ForStmt, WhileStmt)):
            for a, r, init in zip(s.iter_args, s.return_vars, s.inits, strict=False):
                if isinstance(init, Var):
                    links[a] = links[r] = init
    return links


@dataclass
class _Nest:
    levels: list[ForStmt]
    trips: list[int]
    prefixes: list[list[Stmt]]  # the scalar statements of each outer level before its inner loop
    body: list[Stmt]            # the innermost statements, without the yield
    yields: tuple[Expr, ...]


def _nest(loop: ForStmt, cores: Cores) -> _Nest | str:
    """``loop`` as a perfect nest: each outer level is scalar statements then the inner loop, carrying
    exactly what the inner loop carries; for anything else, why not."""
    nest = _Nest([], [], [], [], ())
    cur = loop
    while True:
        n = trip_count(cur)
        stmts = flatten(cur.body)
        y = stmts[-1] if stmts and isinstance(stmts[-1], YieldStmt) else None
        body = stmts[:-1] if y is not None else stmts
        if n is None:
            return "its trip count is not a constant"
        if (y is None) != (not cur.iter_args) or any(isinstance(s, YieldStmt) for s in body):
            return "it yields from inside its body"
        nest.levels.append(cur)
        nest.trips.append(n)
        inner = body[-1] if body else None
        if isinstance(inner, ForStmt) and len(cores(inner)) > 1 and not any(cores(s) for s in body[:-1]):
            if tuple(inner.inits) != tuple(cur.iter_args) or y is None or tuple(y.values) != inner.return_vars:
                return "its outer loop carries values other than its inner loop's"
            nest.prefixes.append(body[:-1])
            cur = inner
            continue
        nest.body, nest.yields = body, tuple(y.values) if y is not None else ()
        return nest


@dataclass
class _Plan:
    """Which core runs first, each statement's core, the carried values each half owns, the crossing tiles."""

    first: str
    second: str
    part: dict[str, list[Stmt]]
    own: dict[str, list[int]]
    cross: list[Var]


def _rw(stmts: list[Stmt], root: Callable[[Var], Var]) -> tuple[set[Var], set[Var]]:
    reads: set[Var] = set()
    writes: set[Var] = set()
    for call in (c for s in stmts for c in calls_in(s)):
        k = written_index(call)
        for i, a in enumerate(call.args):
            if isinstance(a, Var) and isinstance(a.type, TensorType):
                (writes if i == k else reads).add(root(a))
    return reads, writes


def _plan(nest: _Nest, cores: Cores, root: Callable[[Var], Var]) -> _Plan | str:
    """How the nest splits; else why it cannot."""
    body = nest.body
    if any(len(cores(s)) > 1 for s in body):
        return "a statement in its body (an if or an inner loop) itself mixes cube and vector work"
    part = {c: [s for s in body if cores(s) == {c}] for c in ("cube", "vector")}
    scalars = [s for stmts in (*nest.prefixes, body) for s in stmts if not cores(s)]
    carried = {a for lv in nest.levels for a in lv.iter_args}
    core_defs = {v for stmts in part.values() for s in stmts for v in defined_vars(s)}
    (r1, w1), (r2, w2) = _rw(part["cube"], root), _rw(part["vector"], root)
    if shared := ((r1 | w1) & (r2 | w2)) & (w1 | w2):  # a tensor both halves touch must be read-only
        return f"both halves touch {_names(shared)} and one of them writes it"
    for s in scalars:  # copied into both halves: plain index arithmetic only
        reads, writes = _rw([s], root)
        if reads | writes:
            return f"a statement outside its cube and vector work reads or writes {_names(reads | writes)}"
        if not isinstance(s, AssignStmt) or set(free_vars(s)) & (core_defs | carried):
            return "a scalar statement in it depends on its tiles or carried values"
    defs = {c: {v for s in part[c] for v in defined_vars(s)} for c in part}
    uses = {c: {v for s in part[c] for v in free_vars(s)} for c in part}
    to_vec, to_cube = defs["cube"] & uses["vector"], defs["vector"] & uses["cube"]
    if to_vec and to_cube:
        return (f"values flow both ways between its halves within an iteration ({_names(to_vec)} to the vector "
                f"half, {_names(to_cube)} to the cube half)")
    first = "vector" if to_cube else "cube"
    second = "cube" if first == "vector" else "vector"
    own: dict[str, list[int]] = {"cube": [], "vector": []}
    for i, (a, y) in enumerate(zip(nest.levels[-1].iter_args, nest.yields, strict=True)):
        owners = {c for c in part if a in uses[c] or y in defs[c]}
        if len(owners) > 1 or (y is not a and not owners):
            return f"both halves use the value it carries as '{base_name(a.name)}'"
        own[owners.pop() if owners else first].append(i)
    cross = sorted(to_vec | to_cube, key=lambda v: v.uid)
    if odd := [v for v in cross if not isinstance(v.type, TileType) or v.type.memory_space not in CROSS_SPACES
               or not all(isinstance(d, int) for d in v.type.shape)]:
        return f"{_names(set(odd))} passes between its halves and is not a static Vec or Acc tile"
    return _Plan(first, second, part, own, cross)


def _names(vs: set[Var]) -> str:
    return ", ".join(f"'{base_name(v.name)}'" for v in sorted(vs, key=lambda v: v.uid))


def fission(loop: Stmt, kernel: str, cores: Cores, root: Callable[[Var], Var], limit: int) -> list[Stmt] | None:
    """The two loops of a mixed ``loop`` (nest) of more than ``limit`` constant iterations in all; None
    when it is not one or cannot be split (see module doc)."""
    if not isinstance(loop, ForStmt) or len(cores(loop)) < 2:
        return None
    nest = _nest(loop, cores)
    total = 0 if isinstance(nest, str) else math.prod(nest.trips)
    if isinstance(nest, str) or total <= limit:
        return None
    plan = _plan(nest, cores, root)
    if isinstance(plan, str):
        return None
    temps = {v: _temp(v, total, kernel, loop) for v in plan.cross}
    return [_half(nest, plan, plan.first, temps), _half(nest, plan, plan.second, temps)]


def obstacle(loop: ForStmt, cores: Cores, root: Callable[[Var], Var]) -> str | None:
    """Why a mixed ``loop`` cannot be split in two (for its refusal); None when nothing in it forbids that."""
    nest = _nest(loop, cores)
    plan = nest if isinstance(nest, str) else _plan(nest, cores, root)
    return plan if isinstance(plan, str) else None


def _temp(v: Var, total: int, kernel: str, loop: Stmt) -> Var:
    t = v.type
    assert isinstance(t, TileType)
    rows = int(t.shape[0])
    size = total * math.prod(int(d) for d in t.shape) * t.dtype.nbytes
    if size > MAX_TEMP_BYTES:
        raise UnsupportedFeatureError(
            f"kernel '{kernel}': splitting this mixed cube+vector for-loop into a cube loop and a vector loop "
            f"needs a GM buffer of {size / (1 << 20):.1f} MiB for tile '{base_name(v.name)}' ({total} iterations "
            f"x {list(t.shape)} {t.dtype.name}), more than {MAX_TEMP_BYTES >> 20} MiB", loop.span,
            hint="use fewer iterations or smaller tiles in this loop, or do its cube work and its vector work in "
                 "two loops yourself")
    return Var(f"{base_name(v.name)}_loop_gm", TensorType((total * rows, *t.shape[1:]), t.dtype), span=v.span)


def _half(nest: _Nest, plan: _Plan, core: str, temps: dict[Var, Var]) -> Stmt:
    """The loop nest running ``core``'s statements, the crossing tiles stored (first half) or loaded (second)."""
    idx, heads = zip(*(_normalised(lv) for lv in nest.levels), strict=True)
    lin: Expr = idx[0]
    for k, n in zip(idx[1:], nest.trips[1:], strict=True):
        dt = scalar_dtype(k)
        lin = BinaryExpr(BinOp.Add, BinaryExpr(BinOp.Mul, lin, ConstInt(n, dt), dt), k, dt)
    mine = [s for s in nest.body if any(s is m for m in plan.part[core])]
    stmts = [*_needed([s for s in nest.body if _core_in(s, plan) is None], mine), *mine]
    stmts = sorted(stmts, key=lambda s: next(i for i, b in enumerate(nest.body) if b is s))
    if core == plan.second:
        loads, renames = _loads(plan.cross, temps, lin, LOAD_SPACE[core])
        stmts = [*loads, *drop_noop_moves([substitute_typed(s, renames) for s in stmts])]
    else:
        stmts = _with_stores(stmts, plan.cross, temps, lin)
    own = plan.own[core]
    body: Stmt | None = None
    for depth in range(len(nest.levels) - 1, -1, -1):
        lv, dt = nest.levels[depth], scalar_dtype(idx[depth])
        if body is None:
            inner = [*stmts, *_yield([nest.yields[i] for i in own], lv)]
        else:
            assert isinstance(body, ForStmt)
            pre = _needed(nest.prefixes[depth], [body])
            inner = [*pre, body, *_yield(list(body.return_vars), lv)]
        body = ForStmt(idx[depth], ConstInt(0, dt), ConstInt(nest.trips[depth], dt), ConstInt(1, dt),
                       seq([*heads[depth], *inner], span=lv.span), tuple(lv.iter_args[i] for i in own),
                       inits=tuple(lv.inits[i] for i in own), return_vars=tuple(lv.return_vars[i] for i in own),
                       kind=lv.kind, attrs=dict(lv.attrs), span=lv.span)
    assert body is not None
    if core == plan.second:  # the loop indices and scalars both halves compute get Vars of their own
        dup = [*(lv.loop_var for lv in nest.levels),
               *(v for s in (*(x for p in nest.prefixes for x in p), *nest.body) if not _core_in(s, plan)
                 for v in defined_vars(s))]
        body = substitute(body, {v: Var(v.name, v.type, span=v.span) for v in dup})
    return body


def _core_in(s: Stmt, plan: _Plan) -> str | None:
    """The core whose half runs ``s`` (None: a scalar statement both halves copy as they need it)."""
    return next((c for c, stmts in plan.part.items() if any(s is m for m in stmts)), None)


def _normalised(lv: ForStmt) -> tuple[Var, list[Stmt]]:
    """The index counting ``lv``'s iterations from 0 by 1, and the statement deriving its loop var from it."""
    start, step = as_int(lv.start), as_int(lv.step)
    if start == 0 and step == 1:
        return lv.loop_var, []
    dt = scalar_dtype(lv.loop_var)
    k = Var(f"{base_name(lv.loop_var.name)}_k", lv.loop_var.type, span=lv.loop_var.span)
    value = BinaryExpr(BinOp.Add, lv.start, BinaryExpr(BinOp.Mul, k, lv.step, dt), dt)
    return k, [AssignStmt(lv.loop_var, value, span=lv.span)]


def _needed(candidates: list[Stmt], users: list[Stmt]) -> list[Stmt]:
    """The statements of ``candidates`` whose values ``users`` need, in order."""
    want = {v for u in users for v in free_vars(u)}
    keep: list[Stmt] = []
    for s in reversed(candidates):
        if set(defined_vars(s)) & want:
            keep.append(s)
            want |= set(free_vars(s))
    return keep[::-1]


def _row(lin: Expr, v: Var) -> MakeTuple:
    dt = scalar_dtype(lin)
    shape = v.type.shape
    return ints((BinaryExpr(BinOp.Mul, lin, ConstInt(int(shape[0]), dt), dt), *(0,) * (len(shape) - 1)), v.span)


def _with_stores(stmts: list[Stmt], cross: list[Var], temps: dict[Var, Var], lin: Expr) -> list[Stmt]:
    """``stmts`` with each crossing tile stored into its temp after its last write."""
    last = last_writes(stmts, set(cross))
    out: list[Stmt] = []
    for i, s in enumerate(stmts):
        out.append(s)
        out += [store_tile(v, _row(lin, v), temps[v]) for v in cross if last[v] == i]
    return out


def _loads(cross: list[Var], temps: dict[Var, Var], lin: Expr, space: MemorySpace) -> tuple[list[Stmt], dict]:
    out: list[Stmt] = []
    renames: dict[Var, Expr] = {}
    for v in cross:
        shape = ints(v.type.shape, v.span)
        load = make_call("tile.load", [temps[v], _row(lin, v), shape, shape], {"target_memory": space}, span=v.span)
        var = Var(base_name(v.name), load.result_type, span=v.span)
        out.append(AssignStmt(var, load, span=v.span))
        renames[v] = var
    return out, renames


def noop_move(s: Stmt) -> tuple[Var, Call] | None:
    """``x = tile.move(t, target_memory=S)`` with ``t`` already in S (a loaded GM temp)."""
    move = assign_of(s, "tile.move")
    src = move[1].args[0].type if move is not None else None
    return move if isinstance(src, TileType) and src.memory_space is move[1].kwargs.get("target_memory") else None


def drop_noop_moves(stmts: list[Stmt]) -> list[Stmt]:
    """``stmts`` without their no-op moves (:func:`noop_move`), in nested loops too; their uses read the source."""
    moves = [m for s in stmts for x in iter_stmts(s) if (m := noop_move(x)) is not None]
    if not moves:
        return stmts
    renames: dict[Var, Expr] = {v: call.args[0] for v, call in moves}
    renames = {v: follow(renames, v) for v in renames}
    body = map_blocks(seq(stmts), lambda block: [x for x in block if noop_move(x) is None])
    return [substitute_typed(x, renames) for x in flatten(body)]


def _yield(values: list[Expr], loop: ForStmt) -> list[Stmt]:
    return [YieldStmt(tuple(values), span=loop.span)] if values else []
