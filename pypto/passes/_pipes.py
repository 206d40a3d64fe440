"""Explicit cross-core pipes (``tpush``/``tpop`` between the AIC and AIV kernels of a Group) through GM.

ptoas 0.1.1 has no cross-core pipe instructions (``pto.tpush``/``tpop``/``tfree`` and the pipe set-up
arrived later). A Group whose member kernels talk through pipes is rewritten before inlining:

* the ``k``-th ``tpush`` of pipe ``(direction, id)`` stores its tile into a GM slot tensor ``<dir>_pipe<id>_<k>``
  (a new ``Out`` parameter of the producer kernel); the ``k``-th ``tpop`` of that pipe loads it (a new ``In``
  parameter of the consumer), with the popped tile's annotated type, memory space and valid shape;
* ``tfree``, ``*_initialize_pipe``, ``reserve_buffer`` and ``import_peer_buffer`` have nothing left to
  do and are dropped;
* the Group becomes an Inline function that creates the slot tensors and calls the producer before the
  consumer, so InlineFunctions splices it into the orchestration: two tasks the runtime orders through
  the slot tensors (the producer writes them, the consumer reads them), instead of one co-scheduled task.

That needs data to flow one way between the kernels. Pipes used in both directions, or inside a loop
or ``if``, are located ``UnsupportedFeatureError`` s (a later ptoas with ``pto.tpush``/``tpop`` takes them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import FunctionType, ParamDirection, TensorLayout
from pypto.ir.expr import Call, Expr, GlobalVar, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.pipe_ops import FREE, POP, PUSH, SETUP
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, Stmt, flatten, seq
from pypto.ir.types import TensorType, TileType
from pypto.passes._rewrite import create_tensor, emit, ints, match, program_call
from pypto.passes._util import calls_in

PIPE_OPS = frozenset(PUSH) | frozenset(POP) | frozenset(FREE) | frozenset(SETUP)
LATER = "ptoas 0.1.1 has no cross-core pipe instructions (pto.tpush/tpop arrived in later ptoas releases)"


def has_pipes(f: Function) -> bool:
    return any(c.op in PIPE_OPS for c in calls_in(f.body))


@dataclass
class _End:
    """One end of a pipe transfer: the kernel, the statement's tile (pushed value / popped var), the span."""

    kernel: str
    tile: Expr
    stmt: Stmt


@dataclass
class _Group:
    group: Function
    members: dict[str, Function]
    pushes: dict[tuple[str, int], list[_End]] = field(default_factory=dict)
    pops: dict[tuple[str, int], list[_End]] = field(default_factory=dict)
    slots: dict[int, Var] = field(default_factory=dict)  # id(stmt) -> slot param of its kernel

    def scan(self) -> None:
        for name, m in self.members.items():
            for s in flatten(m.body):
                c = match(s, PIPE_OPS)
                if c is None:
                    nested = [x for x in calls_in(s) if x.op in PUSH or x.op in POP]
                    if nested:
                        raise UnsupportedFeatureError(
                            f"kernel '{name}': {nested[0].op} inside a loop or if; {LATER}, and pypto passes "
                            f"pipe data through GM between two tasks, so every push and pop must run once",
                            nested[0].span, hint="push/pop outside the loop, or write the work as a mixed "
                                                 "pl.at region (its halves exchange tiles through GM per step)")
                    continue
                key = (PUSH.get(c.op) or POP.get(c.op), c.kwargs.get("id") or 0)
                if c.op in PUSH:
                    self.pushes.setdefault(key, []).append(_End(name, c.args[0], s))
                elif c.op in POP:
                    assert isinstance(s, AssignStmt), "a tpop result is assigned"
                    self.pops.setdefault(key, []).append(_End(name, s.var, s))

    def pair(self) -> dict[str, set[str]]:
        """Slot tensors of every push/pop pair; producer kernel -> consumer kernels."""
        edges: dict[str, set[str]] = {n: set() for n in self.members}
        for key in sorted(set(self.pushes) | set(self.pops)):
            push, pop = self.pushes.get(key, []), self.pops.get(key, [])
            if len(push) != len(pop):
                end = (push or pop)[min(len(push), len(pop))]
                raise UnsupportedFeatureError(
                    f"group '{self.group.name}': pipe {key[0]} id {key[1]} has {len(push)} push(es) but "
                    f"{len(pop)} pop(s); every push needs one matching pop", end.stmt.span)
            for k, (src, dst) in enumerate(zip(push, pop, strict=True)):
                t = dst.tile.type
                if not isinstance(t, TileType) or not all(isinstance(d, int) for d in t.shape):
                    raise UnsupportedFeatureError(
                        f"kernel '{dst.kernel}': the popped tile needs a static shape, e.g. "
                        f"'x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(...)'", dst.stmt.span)
                st = src.tile.type
                if not isinstance(st, TileType) or st.dtype is not t.dtype or tuple(st.shape) != tuple(t.shape):
                    raise UnsupportedFeatureError(
                        f"kernel '{src.kernel}': pushed tile {st} does not match the popped {t} in "
                        f"'{dst.kernel}'; through GM the slot holds the pushed tile as it is", src.stmt.span)
                name = f"{key[0]}_pipe{key[1]}_{k}"
                for end in (src, dst):  # one slot param in each kernel
                    self.slots[id(end.stmt)] = Var(name, TensorType(tuple(t.shape), t.dtype), span=end.stmt.span)
                if src.kernel == dst.kernel:
                    raise UnsupportedFeatureError(f"kernel '{src.kernel}' pops the tile it pushed itself",
                                                  dst.stmt.span)
                edges[src.kernel].add(dst.kernel)
        return edges


def _order(g: _Group, edges: dict[str, set[str]]) -> list[str]:
    """Members, producers first (their call order otherwise); a two-way exchange is refused."""
    out: list[str] = []
    todo = list(g.members)
    while todo:
        ready = [n for n in todo if not any(n in edges[m] for m in todo if m != n)]
        if not ready:
            a, b = todo[0], next(iter(edges[todo[0]] & set(todo)))
            span = next(e.stmt.span for ends in g.pushes.values() for e in ends if e.kernel == b)
            raise UnsupportedFeatureError(
                f"group '{g.group.name}': '{a}' and '{b}' push tiles to each other; {LATER}, and pypto runs "
                f"the two kernels as separate tasks ordered through GM, so data can flow only one way", span,
                hint="split the exchange into two groups (one per direction), or write the work as a "
                     "mixed pl.at region: pypto splits it into AIC/AIV kernels exchanging tiles through GM")
        out.append(ready[0])
        todo.remove(ready[0])
    return out


def _kernel(g: _Group, f: Function) -> tuple[Function, list[Var]]:
    """The member with pushes as slot stores, pops as slot loads, set-up and tfree dropped."""
    body: list[Stmt] = []
    new: list[Var] = []
    dirs: list[ParamDirection] = []
    for s in flatten(f.body):
        c = match(s, PIPE_OPS)
        slot = g.slots.get(id(s)) if c is not None else None  # a push or pop (set-up and tfree have none)
        if c is None:
            body.append(s)
        elif slot is not None and c.op in PUSH:
            store = make_call("tile.store", [c.args[0], ints((0,) * len(slot.var_type.shape)), slot], span=s.span)
            emit(body, f"{slot.name}_store", store, s.span)
        elif slot is not None:
            body.append(_load(s.var, slot))
        if slot is not None:
            new.append(slot)
            dirs.append(ParamDirection.Out if c.op in PUSH else ParamDirection.In)
    return f.with_(params=(*f.params, *new), param_directions=(*f.param_directions, *dirs),
                   body=seq(body, span=f.body.span)), new


def _load(var: Var, slot: Var) -> AssignStmt:
    t = var.var_type
    assert isinstance(t, TileType)
    shape = ints(t.shape)
    valid = ints(t.view.valid_shape) if getattr(t.view, "valid_shape", None) else shape
    kw = {"target_memory": t.memory_space} if t.memory_space is not None else {}
    load = make_call("tile.load", [slot, ints((0,) * len(t.shape)), shape, valid], kw, span=var.span)
    return AssignStmt(var, load, span=var.span)


def _group_body(g: _Group, order: list[str], new_params: dict[str, list[Var]]) -> Stmt:
    stmts = flatten(g.group.body)
    ret = stmts[-1] if stmts and isinstance(stmts[-1], ReturnStmt) else None
    calls = stmts[:-1] if ret is not None else stmts
    if ret is not None and any(isinstance(v, Call) for v in ret.values):  # return self.k(...): bind it first
        tmps = [Var(f"{v.op.name}_result", v.result_type, span=v.span) if isinstance(v, Call) else v
                for v in ret.values]
        calls += [AssignStmt(t, v, span=ret.span) for t, v in zip(tmps, ret.values, strict=True) if t is not v]
        ret = ReturnStmt(tuple(tmps), span=ret.span)
    env: dict[str, Var] = {}
    out: list[Stmt] = []
    for name in order:
        for v in new_params[name]:
            if v.name not in env:
                env[v.name], create = create_tensor(v.name, v.var_type, g.group.span, layout=TensorLayout.ND)
                out.append(create)
    keyed: dict[str, list[Stmt]] = {}
    for s in calls:
        found = program_call(s, g.members)
        if found is None:
            raise UnsupportedFeatureError(f"group '{g.group.name}': with cross-core pipes a Group may only call "
                                          f"its AIC/AIV kernels", s.span)
        c, name = found
        extra = tuple(env[v.name] for v in new_params[name])
        call = Call(c.op, (*c.args, *extra), c.kwargs, c.attrs, c.result_type, span=c.span)
        keyed.setdefault(name, []).append(AssignStmt(s.var, call, span=s.span) if isinstance(s, AssignStmt)
                                              else EvalStmt(call, span=s.span))
    for name in order:
        out += keyed.get(name, [])
    return seq([*out, *([ret] if ret is not None else [])], span=g.group.span)


def lower_pipe_groups(program: Program) -> Program:
    """Rewrite every Group whose kernels use pipes (module doc); pipes outside a Group are refused."""
    users = [f for f in program.functions if f.func_type is not FunctionType.Group and has_pipes(f)]
    if not users:
        return program
    funcs = {f.name: f for f in program.functions}
    replaced: dict[str, Function] = {}
    for grp in program.functions:
        if grp.func_type is not FunctionType.Group:
            continue
        names = [c.op.name for c in calls_in(grp.body) if isinstance(c.op, GlobalVar)]
        members = {n: funcs[n] for n in dict.fromkeys(names) if n in funcs}
        if not any(has_pipes(m) for m in members.values()):
            continue
        g = _Group(grp, members)
        g.scan()
        order = _order(g, g.pair())
        new_params: dict[str, list[Var]] = {}
        for n in order:
            replaced[n], new_params[n] = _kernel(g, members[n])
        replaced[grp.name] = grp.with_(func_type=FunctionType.Inline, body=_group_body(g, order, new_params))
    for f in users:
        if f.name not in replaced:
            c = next(c for c in calls_in(f.body) if c.op in PIPE_OPS)
            raise UnsupportedFeatureError(
                f"kernel '{f.name}' uses {c.op} but is not called from a pl.FunctionType.Group function; "
                f"{LATER}, so pypto pairs a Group's pushes and pops through GM", c.span,
                hint="call the AIC and AIV kernels from one Group function, or write a mixed pl.at region")
    return program.with_functions([replaced.get(f.name, f) for f in program.functions])
