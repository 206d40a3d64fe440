"""ConvertToSSA: one definition per variable (``x__ssa_vN``), loop-carried names become iter_args /
return_vars, names assigned in if-branches become phi return_vars with yields.

Only names read later are carried or merged: by the next iteration, after the loop, or after the if.
The pass accepts its own output (an already-lowered program or a re-parsed pass dump): buffer
bindings (``tile.alloc``) keep their Vars, so the tiles' MemRefs stay valid.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pypto.errors import InternalError
from pypto.ir.enums import ForKind
from pypto.ir.expr import Call, ConstBool, ConstFloat, ConstInt, Expr, IterArg, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import written_index
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
    flatten,
    runs_at_least_once,
    seq,
)
from pypto.ir.types import PtrType, ScalarType, Type, map_type_exprs
from pypto.ir.visitor import IRMutator, rebuild
from pypto.passes._ssa_checks import Unbound, check_merge_types
from pypto.passes._ssa_names import (
    bound_on_every_path,
    header_names,
    live_in,
    separate_shadowed_names,
    suffix_live,
)
from pypto.passes._util import NameGen, base_name, bound_vars, defined_vars, iter_stmts
from pypto.passes.base import Pass

Env = dict[str, Var]
_Loop = tuple[Env, tuple[IterArg, ...], tuple[Expr, ...], Stmt, tuple[Var, ...]]
# Scope operands: pl.at/pl.spmd deps, pl.spmd(n) and its predicate=, pl.at(dumps=[...]) / pl.dump_tag
_SCOPE_OPERANDS = ("deps", "core_num", "predicate", "dumps")


class _Rename(IRMutator):
    """Each Var to the one its name denotes in ``env``; ``missing`` decides about a name that has none.
    Task ids in call attributes (``manual_dep_edges``) are renamed too: the mutator enters attrs.
    With ``only``, a Var not in it is kept as it is."""

    def __init__(self, env: Env, missing: Callable[[Var], Var] = lambda v: v, only: set[Var] | None = None) -> None:
        self.env = env
        self.missing = missing
        self.only = only

    def visit_Var(self, var: Var) -> Var:  # noqa: N802
        new = self.env.get(var.name) if self.only is None or var in self.only else var
        return self.missing(var) if new is None else new

    visit_IterArg = visit_Var


def _assigned(stmt: Stmt | None) -> list[str]:
    """Names assigned anywhere in ``stmt`` (first-assignment order)."""
    return list(dict.fromkeys(v.name for s in iter_stmts(stmt) for v in bound_vars(s)))


def _store_target(body: Stmt, name: str, env: Env) -> Var | None:
    """The tensor bound before the loop that every definition of ``name`` in ``body`` stores into."""
    targets: set[str] = set()
    for st in iter_stmts(body):
        if isinstance(st, AssignStmt) and st.var.name == name:
            at = written_index(st.value) if isinstance(st.value, Call) else None
            arg = None if at is None else st.value.args[at]
            if not isinstance(arg, Var) or arg.name not in env:
                return None
            targets.add(arg.name)
    return env[targets.pop()] if len(targets) == 1 else None


def _first_trip_start(s: ForStmt | WhileStmt, name: str) -> Expr | None:
    """A start value for a scalar first bound in the loop body and read after the loop, where Python
    sees its last iteration's value: the loop runs at least once (constant bounds), and its first
    iteration binds the name on every path before reading it, with no break/continue/return to skip
    that. The start (zero) is then never observed. None otherwise (tiles and tensors have no free start)."""
    if not isinstance(s, ForStmt) or s.kind is ForKind.Parallel or not runs_at_least_once(s):
        return None
    stmts = flatten(s.body)
    if any(isinstance(x, (BreakStmt, ContinueStmt, ReturnStmt)) for x in iter_stmts(s.body)) or \
            name in live_in(stmts) or name not in bound_on_every_path(stmts):
        return None
    t = next((v.var_type for v in defined_vars(s.body) if v.name == name), None)
    if not isinstance(t, ScalarType):
        return None
    if t.dtype.is_float:
        return ConstFloat(0.0, t.dtype, span=s.span)
    return ConstInt(0, t.dtype, span=s.span) if t.dtype.is_int else ConstBool(False, span=s.span)


class _Converter:
    def __init__(self, func: Function) -> None:
        self.unbound = Unbound(func)
        self.own = {*func.params, *defined_vars(func.body)}  # the Vars this function binds
        self.ssa, self.idx, self.iter = NameGen("ssa"), NameGen("idx"), NameGen("iter")

    def fresh(self, var: Var, gen: NameGen, env: Env, cls: type[Var] = Var) -> Var:
        """A fresh ``cls`` for ``var``, its type read in ``env`` (:meth:`type_in`)."""
        return cls(gen(base_name(var.name)), self.type_in(var.var_type, env), span=var.span)

    def type_in(self, t: Type, env: Env) -> Type:
        """``t`` with the Vars of this function it reads (a valid shape ``[vr, vc]``, a dynamic dim, a
        MemRef slot) renamed through ``env``. A dynamic dim that the function does not bind keeps its
        Var, even when a parameter has its name (an outlined kernel's ``M`` for ``pl.dynamic("M")``)."""
        return map_type_exprs(t, _Rename(env, only=self.own).visit)

    def expr(self, e, env: Env):
        return _Rename(env, self.unbound).visit(e)

    def block(self, body: Stmt | None, env: Env, after: frozenset[str]) -> list[Stmt]:
        """Convert a statement list; ``after`` = names read once the block is done."""
        stmts = flatten(body)
        return [self.stmt(s, env, later) for s, later in zip(stmts, suffix_live(stmts, after), strict=True)]

    def stmt(self, s: Stmt, env: Env, later: frozenset[str]) -> Stmt:
        if s.span.is_known():
            self.unbound.at = s.span  # where a read of a name without a value is reported
        if isinstance(s, AssignStmt):
            value = self.expr(s.value, env)
            if isinstance(s.var.var_type, PtrType):
                # a buffer binding (tile.alloc) of an already-lowered program: the tiles' MemRefs
                # name this Var as their base, so it keeps its identity (it is defined once anyway)
                env[s.var.name] = s.var
                return s if value is s.value else rebuild(s, value=value)
            new = self.fresh(s.var, self.ssa, env)
            env[s.var.name] = new
            return rebuild(s, var=new, value=value)
        compound = {ForStmt: self.for_, WhileStmt: self.while_, IfStmt: self.if_}.get(type(s))
        if compound is not None:
            return compound(s, env, later)
        if isinstance(s, ScopeStmt):
            # the scope's operands name values from before it: read them before converting the body
            changes = {f: self.operand(getattr(s, f), env) for f in _SCOPE_OPERANDS if hasattr(s, f)}
            changes["body"] = seq(self.block(s.body, env, later))
            return rebuild(s, **changes)
        return self.expr(s, env)

    def operand(self, e: Expr | tuple[Expr, ...] | None, env: Env) -> Expr | tuple[Expr, ...] | None:
        if isinstance(e, tuple):
            return tuple(self.expr(d, env) for d in e)
        return None if e is None else self.expr(e, env)

    def _carry(self, s: ForStmt | WhileStmt, env: Env, later: frozenset[str]) -> dict[str, Expr]:
        """Names the loop carries: assigned in the body, bound before it, and read by the next
        iteration (before the body assigns them) or after the loop. A name that is only overwritten
        is not carried, so a dead tile never becomes a loop result (or a kernel parameter).

        A name first bound in the body by a store into a tensor bound before the loop
        (``lo_new = pl.store(t, off, lo)``) and read after it is carried too, starting as that
        tensor: after zero iterations nothing was stored, so the updated tensor is ``lo`` itself.
        So is a scalar that :func:`_first_trip_start` can give a start that is never observed."""
        explicit = {ia.name for ia in s.iter_args}
        needed = live_in(flatten(s.body), s.cond if isinstance(s, WhileStmt) else None) | later
        inits: dict[str, Expr] = {}
        for n in _assigned(s.body):
            if n in explicit or n not in needed:
                continue
            init = env[n] if n in env else (_store_target(s.body, n, env) if n in later else None)
            if init is None and n in later:
                init = _first_trip_start(s, n)
            if init is not None:
                inits[n] = init
        return inits

    def _loop(self, s: ForStmt | WhileStmt, env: Env, later: frozenset[str], header: Env) -> _Loop:
        """Convert a loop's body (``header``: the loop variable's binding); returns the carried names' iter
        args, then all iter args, inits, body and results. ``env`` gets the loop's results."""
        carried = self._carry(s, env, later)
        iters = [IterArg(self.iter(base_name(n)), v.type) for n, v in carried.items()]
        all_inits = (*(self.expr(e, env) for e in s.inits), *carried.values())
        explicit = [self.fresh(ia, self.iter, env, IterArg) for ia in s.iter_args]
        body_env = {**env, **header, **{ia.name: new for ia, new in zip(s.iter_args, explicit, strict=True)},
                    **dict(zip(carried, iters, strict=True))}
        stmts = self.block(s.body, body_env, frozenset(carried))
        stmts = _merge_yield(stmts, [body_env[n] for n in carried])
        all_iters = (*explicit, *iters)
        check_merge_types(all_iters, all_inits, _yielded(stmts),
                          ("when it enters the loop", "at the end of the loop body"), s.span)
        rvs = self.results(s, env, {n: ia.var_type for n, ia in zip(carried, iters, strict=True)})
        # names of the body, loop variable and carried names: the loop gives them no value after it
        header, local = header_names(s), set(body_env) - set(env)
        self.unbound.drop(local & header, "header", s.span)
        self.unbound.drop(local - header, "loop", s.span)
        return dict(zip(carried, iters, strict=True)), all_iters, all_inits, seq(stmts), rvs

    def results(self, s: ForStmt | WhileStmt | IfStmt, env: Env, merged: dict[str, Type]) -> tuple[Var, ...]:
        """Fresh results: ``s``'s own, then one per merged name (name -> type); ``env`` binds each name."""
        rvs = [self.fresh(rv, self.ssa, env) for rv in s.return_vars]
        rvs += [Var(self.ssa(base_name(n)), t) for n, t in merged.items()]
        env.update(zip([*(rv.name for rv in s.return_vars), *merged], rvs, strict=True))
        return tuple(rvs)

    def for_(self, s: ForStmt, env: Env, later: frozenset[str]) -> Stmt:
        start, stop, step = (self.expr(e, env) for e in (s.start, s.stop, s.step))
        loop_var = self.fresh(s.loop_var, self.idx, env)
        _, all_iters, inits, body, rvs = self._loop(s, env, later, {s.loop_var.name: loop_var})
        return rebuild(s, loop_var=loop_var, start=start, stop=stop, step=step, body=body,
                       iter_args=all_iters, inits=inits, return_vars=rvs)

    def while_(self, s: WhileStmt, env: Env, later: frozenset[str]) -> Stmt:
        carried, all_iters, inits, body, rvs = self._loop(s, env, later, {})
        self.unbound.at = s.span
        cond_env = {**env, **carried, **{old.name: new for old, new in zip(s.iter_args, all_iters, strict=False)}}
        return rebuild(s, cond=self.expr(s.cond, cond_env), body=body, iter_args=all_iters, inits=inits,
                       return_vars=rvs)

    def if_(self, s: IfStmt, env: Env, later: frozenset[str]) -> Stmt:
        cond = self.expr(s.cond, env)
        then_env, else_env = dict(env), dict(env)
        then = self.block(s.then_body, then_env, later)
        other = self.block(s.else_body, else_env, later) if s.else_body is not None else []
        explicit = {rv.name for rv in s.return_vars}
        phis = [n for n in dict.fromkeys(_assigned(s.then_body) + _assigned(s.else_body))
                if n not in explicit and n in later and n in then_env and n in else_env
                and (then_env[n] is not env.get(n) or else_env[n] is not env.get(n))]
        rvs = self.results(s, env, {n: then_env[n].var_type for n in phis})
        self.unbound.drop((set(then_env) | set(else_env)) - set(env), "if", s.span)
        then = _merge_yield(then, [then_env[n] for n in phis])
        other = _merge_yield(other, [else_env[n] for n in phis])
        if rvs:
            check_merge_types(rvs, _yielded(then), _yielded(other),
                              ("at the end of the then-branch", "at the end of the else-branch"), s.span)
        else_body = seq(other) if (other or s.else_body is not None) else None
        return rebuild(s, cond=cond, then_body=seq(then), else_body=else_body, return_vars=rvs)


def _yielded(stmts: list[Stmt]) -> tuple:
    """The values a converted block's final yield gives (none without one)."""
    return stmts[-1].values if stmts and isinstance(stmts[-1], YieldStmt) else ()


def _merge_yield(stmts: list[Stmt], extra: list[Var]) -> list[Stmt]:
    if not extra:
        return stmts
    if stmts and isinstance(stmts[-1], YieldStmt):
        return [*stmts[:-1], rebuild(stmts[-1], values=(*stmts[-1].values, *extra))]
    return [*stmts, YieldStmt(tuple(extra))]


@dataclass(frozen=True)
class ConvertToSSA(Pass):
    """Rename every definition to a fresh ``<name>__ssa_v<k>`` Var (loop vars ``__idx_v``)."""

    name = "ConvertToSSA"
    produces = frozenset({IRProperty.SSAForm, IRProperty.UseAfterDef})

    def run_function(self, func: Function, program: Program) -> Function:
        func = separate_shadowed_names(func)  # a program that went through the pipeline before
        conv = _Converter(func)
        env: Env = {p.name: Var(conv.ssa(base_name(p.name)), p.var_type, span=p.span) for p in func.params}
        for p in func.params:  # a param's type may name other (scalar) params: read once all are bound
            new = env[p.name]
            if (t := conv.type_in(new.var_type, env)) is not new.var_type:
                env[p.name] = Var(new.name, t, span=new.span)
        params = [env[p.name] for p in func.params]
        try:
            body = seq(conv.block(func.body, env, frozenset()))
        except KeyError as exc:
            raise InternalError(f"ConvertToSSA: unbound name {exc} in '{func.name}'") from exc
        return func.with_(params=tuple(params), body=body)
