"""OutlineIncoreScopes: each ``pl.at(level=CORE_GROUP)`` region becomes an InCore function
``<f>_incore_<k>`` (or its name_hint) called from the parent, which becomes an Orchestration.

A region may write several outer tensors (``pl.Out`` params or orchestration tensors): each becomes
an Out (InOut when the region also reads it) param and a result of the call; with several results the
call returns a tuple whose items rebind every version of the written tensors after the region.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from pypto.errors import UnsupportedFeatureError
from pypto.ir.callgraph import callee_first, written_args
from pypto.ir.enums import FunctionType, ParamDirection, TensorLayout
from pypto.ir.expr import Call, Expr, IterArg, TupleGetItem, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import (
    AssignStmt,
    EvalStmt,
    InCoreScopeStmt,
    ReturnStmt,
    SpmdScopeStmt,
    Stmt,
    first_program_call,
    flatten,
    merge_sources,
    seq,
)
from pypto.ir.types import ScalarType, TensorType, TupleType, UnknownType
from pypto.ir.visitor import substitute
from pypto.passes._rewrite import call_function, create_tensor, emit, expand_stmts, ints, match
from pypto.passes._util import base_name, defined_vars, follow, free_vars, iter_stmts, map_blocks, used_vars
from pypto.passes.base import Pass

_LAUNCH = "__spmd_launch"  # InCore region attr (inside this pass only): the pl.spmd launch of its call


@dataclass
class _Region:
    """Def-use facts of one region: which outer tensors it writes and which local vars are versions of them."""

    body: Stmt
    program: Program
    source: dict[Var, Var] = field(default_factory=dict)  # local version -> the var it was derived from
    targets: list[Var] = field(default_factory=list)      # vars written (before root resolution)
    reads: set[Var] = field(default_factory=set)          # vars read by something other than a write
    merged: set[Var] = field(default_factory=set)         # loop / if results (the values after a construct)

    def __post_init__(self) -> None:
        for s in iter_stmts(self.body):
            self._scan(s)

    def _scan(self, s: Stmt) -> None:
        for v, src in merge_sources(s):  # iter args and loop / if results
            if isinstance(src, Var):
                self.source[v] = src
                self.merged.update(rv for rv in s.return_vars if rv is v)
        if isinstance(s, AssignStmt):
            self._scan_value(s.value, s.var)
        elif isinstance(s, EvalStmt):
            self._scan_value(s.expr, None)

    def _scan_value(self, value: Expr, result: Var | None) -> None:
        if isinstance(value, Var) and result is not None:
            self.source[result] = value
            return
        if not isinstance(value, Call):
            self.reads.update(used_vars(value))
            return
        written = written_args(value, self.program)
        for i, a in enumerate(value.args):
            if i in written and isinstance(a, Var):
                self.targets.append(a)
                if int(value.kwargs.get("atomic") or 0):  # an atomic-add store reads the window it adds into
                    self.reads.add(a)
                if result is not None and len(written) == 1:
                    self.source[result] = a
            else:
                self.reads.update(used_vars(a))

    def root(self, v: Var) -> Var:
        return follow(self.source, v)


@dataclass
class _Outliner:
    parent: Function
    program: Program
    new_funcs: list[Function] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    taken: set[str] = field(default_factory=set)  # function names in the program, shared by all outliners

    def _func_name(self, want: str) -> str:
        """``want`` unless a function has that name: a clash with a function outlined from this parent
        gets ``_<n>``, a clash with any other function (e.g. the parent itself) ``<parent>_<want>``."""
        if want in self.taken:
            local = any(f.name == want for f in self.new_funcs)
            want = want if local else f"{self.parent.name}_{want}"
            stem, k = want, 0
            while want in self.taken:
                want, k = f"{stem}_{k}", k + 1
        self.taken.add(want)
        return want

    def block(self, stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        rest = list(stmts)
        while rest:
            s = rest.pop(0)
            if not isinstance(s, InCoreScopeStmt):
                out.append(s)
                continue
            s, hoisted = _hoist_reads(s, self.program)
            out.extend(hoisted)
            s, buffers, escaping = self._escape_buffers(s, rest)
            out.extend(buffers)
            call_stmts, renames = self.outline(s)
            renames.update({v: renames[w] for v, w in escaping if w in renames})
            _check_escapes(s, rest, renames)
            out.extend(call_stmts)
            rest = [substitute(r, renames) for r in rest]
        return out

    def spmd(self, s: Stmt) -> list[Stmt] | None:
        """A pl.spmd scope's statements, with its InCore region (or dispatched call) carrying the launch."""
        if not isinstance(s, SpmdScopeStmt):
            return None
        n = as_int(s.core_num)
        launch: dict[str, object] = {"block_num": n if n is not None else s.core_num}
        if s.sync_start:
            launch["sync_start"] = True
        if s.predicate is not None:  # the orchestration dispatches the task only when it holds
            launch["predicate"] = s.predicate
        stmts = flatten(s.body)
        for i, x in enumerate(stmts):
            if isinstance(x, InCoreScopeStmt):
                region = dataclasses.replace(x, deps=x.deps + s.deps, task_var=s.task_var or x.task_var,
                                             attrs={**x.attrs, _LAUNCH: launch})
                return stmts[:i] + [region] + stmts[i + 1:]
        i = first_program_call(stmts)
        if i is None:
            raise UnsupportedFeatureError("a pl.spmd scope must contain one pl.at region or one kernel call",
                                          s.span)
        return stmts[:i] + _launch_call(stmts[i], launch, s, self._fresh_name) + stmts[i + 1:]

    def _escape_buffers(self, scope: InCoreScopeStmt, rest: list[Stmt]
                        ) -> tuple[InCoreScopeStmt, list[Stmt], list[tuple[Var, Var]]]:
        """A tensor computed in the region and used after it goes out through a GM buffer.

        The orchestration creates ``<v>_buf`` before the region; the region ends by writing ``v``
        into it (so the buffer is an Out parameter of the kernel) and later statements read the
        kernel's result instead of ``v``. Returns the scope, the buffer creations and
        ``(v, the write's result)`` pairs.
        """
        local = set(defined_vars(scope.body))
        region = _Region(scope.body, self.program)
        leaked = [v for v in dict.fromkeys(used_vars(rest)) if v in local and region.root(v) in local
                  and isinstance(v.var_type, TensorType) and all(isinstance(d, int) for d in v.var_type.shape)]
        if not leaked:
            return scope, [], []
        creates: list[Stmt] = []
        writes: list[Stmt] = []
        pairs: list[tuple[Var, Var]] = []
        for v in leaked:
            buf, create = create_tensor(self._fresh_name(f"{base_name(v.name)}_buf"), v.var_type, v.span,
                                        layout=TensorLayout.ND)
            creates.append(create)
            write = make_call("tensor.assemble", [buf, v, ints((0,) * len(v.var_type.shape))], span=v.span)
            pairs.append((v, emit(writes, self._fresh_name(f"{base_name(v.name)}_out"), write, v.span)))
        return dataclasses.replace(scope, body=seq([*flatten(scope.body), *writes])), creates, pairs

    def _fresh_name(self, stem: str) -> str:
        k = 1
        while f"{stem}__ssa_v{k}" in self.names:
            k += 1
        name = f"{stem}__ssa_v{k}"
        self.names.add(name)
        return name

    def outline(self, scope: InCoreScopeStmt) -> tuple[list[Stmt], dict[Var, Expr]]:
        free = free_vars(scope.body)
        region = _Region(scope.body, self.program)
        written = {region.root(t) for t in region.targets}
        outs = [v for v in free if v in written and isinstance(v.var_type, TensorType)]
        fname = self._func_name(scope.name_hint or f"{self.parent.name}_incore_{len(self.new_funcs)}")
        params: dict[Var, Expr] = {v: Var(v.name, v.var_type, span=v.span) for v in free}
        dirs = tuple(ParamDirection.In if v not in written else ParamDirection.InOut if v in region.reads
                     else ParamDirection.Out for v in free)
        body = flatten(expand_stmts(substitute(scope.body, params), _name_store))
        body.append(ReturnStmt(tuple(params[v] for v in outs), span=scope.span))
        func = Function(fname, tuple(params[v] for v in free), dirs,  # type: ignore[misc]
                        tuple(v.var_type for v in outs), seq(body), FunctionType.InCore, span=scope.span)
        self.new_funcs.append(func)
        return self._call_site(scope, func, free, outs, region)

    def _call_site(self, scope: InCoreScopeStmt, func: Function, free: list[Var], outs: list[Var],
                   region: _Region) -> tuple[list[Stmt], dict[Var, Expr]]:
        attrs = dict(scope.attrs.get(_LAUNCH, {}))
        if scope.attrs.get("allow_early_resolve"):  # a pure scheduling hint for the runtime
            attrs["allow_early_resolve"] = True
        if scope.deps:  # declared edges: the orchestration passes them to set_dependencies
            attrs["manual_dep_edges"] = tuple(scope.deps)
        dump_args = [i for i, v in enumerate(free) if any(d is v for d in scope.dumps)]
        if dump_args:  # dumps= / pl.dump_tag: argument positions the orchestration marks with params.dump(...)
            attrs["dump_args"] = dump_args
        call = call_function(func, free, scope.span, **attrs)
        task = scope.task_var
        if task is not None:  # `as tid`: the call also yields its task id, as the last tuple item
            call = dataclasses.replace(call, result_type=TupleType((*func.return_types, task.var_type)))
        if not outs and task is None:
            return [EvalStmt(call, span=scope.span)], {}
        versions = {v: [lv for lv in region.source if region.root(lv) is v] for v in outs}
        results = {v: Var(self._result_name(v, versions[v], region.merged), v.var_type, span=scope.span)
                   for v in outs}
        if len(outs) == 1 and task is None:
            stmts: list[Stmt] = [AssignStmt(results[outs[0]], call, span=scope.span)]
        else:
            tup = Var(self._fresh_name(f"{func.name}_out"), call.result_type, span=scope.span)
            items = [results[v] for v in outs] + ([task] if task is not None else [])  # the task id comes last
            stmts = [AssignStmt(tup, call, span=scope.span)]
            stmts += [AssignStmt(x, TupleGetItem(tup, i, span=scope.span), span=scope.span)
                      for i, x in enumerate(items)]
        renames: dict[Var, Expr] = {lv: results[v] for v in outs for lv in versions[v]}
        renames.update({v: results[v] for v in outs})
        return stmts, renames

    def _result_name(self, v: Var, versions: list[Var], merged: set[Var]) -> str:
        """The name of the region's last version of ``v`` (a loop/if result wins over a body version)."""
        local = sorted((lv for lv in versions if not isinstance(lv, IterArg)), key=lambda lv: lv in merged)
        return local[-1].name if local else self._fresh_name(base_name(v.name))


def _launch_call(s: Stmt, launch: dict[str, object], scope: SpmdScopeStmt, fresh) -> list[Stmt]:
    """``out = self.k(...)`` inside ``with pl.spmd(n[, deps]) [as tid]``: the call with the launch attrs."""
    call = s.value if isinstance(s, AssignStmt) else s.expr
    attrs = {**call.attrs, **launch}
    if scope.deps:
        attrs["manual_dep_edges"] = tuple(attrs.get("manual_dep_edges", ())) + scope.deps
    call = dataclasses.replace(call, attrs=attrs)
    if scope.task_var is None:
        return [dataclasses.replace(s, value=call) if isinstance(s, AssignStmt) else dataclasses.replace(s, expr=call)]
    rets = call.result_type.types if isinstance(call.result_type, TupleType) else (call.result_type,)
    rets = tuple(t for t in rets if not isinstance(t, UnknownType))
    call = dataclasses.replace(call, result_type=TupleType((*rets, scope.task_var.var_type)))
    tup = Var(fresh(f"{call.op.name}_out"), call.result_type, span=scope.span)
    out: list[Stmt] = [AssignStmt(tup, call, span=s.span)]
    if isinstance(s, AssignStmt):
        if len(rets) != 1:
            raise UnsupportedFeatureError("`with pl.spmd(...) as tid` over a call with several results: "
                                          "assign the call to one name", s.span)
        out.append(AssignStmt(s.var, TupleGetItem(tup, 0, span=s.span), span=s.span))
    out.append(AssignStmt(scope.task_var, TupleGetItem(tup, len(rets), span=s.span), span=s.span))
    return out


def _hoist_reads(scope: InCoreScopeStmt, program: Program) -> tuple[InCoreScopeStmt, list[Stmt]]:
    """Move ``x = pl.read(t, idx)`` at the region's top level out in front of the region.

    ptoas 0.1.1 has no scalar load from GM inside a kernel, so a scalar read of a tensor the region
    does not write, at indices known before the region, is done by the orchestration instead; the
    value then reaches the kernel as a scalar parameter (the same program as writing the read just
    before the ``pl.at``).
    """
    region = _Region(scope.body, program)
    written = {region.root(t) for t in region.targets}
    local = set(defined_vars(scope.body))
    hoisted: list[Stmt] = []
    kept: list[Stmt] = []
    moved: set[Var] = set()  # results of hoisted statements
    for s in flatten(scope.body):
        v = s.value if isinstance(s, AssignStmt) else None
        uses = set(used_vars(v)) if v is not None else set()
        ready = all(u not in local or u in moved for u in uses)
        read = (match(v, "tensor.read") is not None and isinstance(v.args[0], Var)
                and region.root(v.args[0]) not in written and v.args[0] not in local
                and not any(u in local for u in used_vars(list(v.args[1:]))))
        # scalar arithmetic on a hoisted read (e.g. its cast to pl.INDEX) goes along with it
        derived = (isinstance(s, AssignStmt) and isinstance(s.var.var_type, ScalarType) and not isinstance(v, Call)
                   and ready and bool(uses & moved))
        if read or derived:
            hoisted.append(s)
            moved.add(s.var)
        else:
            kept.append(s)
    if not hoisted:
        return scope, []
    return dataclasses.replace(scope, body=seq(kept)), hoisted


def _check_escapes(scope: InCoreScopeStmt, rest: list[Stmt], renames: dict[Var, Expr]) -> None:
    local = set(defined_vars(scope.body))
    leaked = [v for v in used_vars(rest) if v in local and v not in renames]
    if leaked:
        raise UnsupportedFeatureError(
            f"value '{base_name(leaked[0].name)}' computed inside a pl.at(CORE_GROUP) region is used after it; only "
            f"tensors written by the region (e.g. `out[:] = ...`) can flow out", scope.span,
            hint="write the value into an output tensor inside the region")


def _name_store(s: Stmt) -> list[Stmt] | None:
    """``pl.tile.store(t, off, c)`` -> ``c__store = pl.tile.store(...)`` (the result names the write)."""
    store = match(s, "tile.store") if isinstance(s, EvalStmt) else None
    if store is None:
        return None
    stem = base_name(store.args[2].name) if isinstance(store.args[2], Var) else "out"
    return [AssignStmt(Var(f"{stem}__store", store.result_type, span=s.span), store, span=s.span)]


@dataclass(frozen=True)
class OutlineIncoreScopes(Pass):
    """Outline InCore scopes; params are the region's free variables (Out for tensors it writes)."""

    name = "OutlineIncoreScopes"
    produces = frozenset({IRProperty.SplitIncoreOrch, IRProperty.NoNestedInCore})

    def run(self, program: Program) -> Program:
        funcs: list[Function] = []
        changed = False
        taken = {f.name for f in program.functions}
        for f in program.functions:
            if f.is_incore or not any(isinstance(s, InCoreScopeStmt | SpmdScopeStmt) for s in iter_stmts(f.body)):
                funcs.append(f)
                continue
            o = _Outliner(f, program, names={v.name for v in used_vars(f.body)} | {p.name for p in f.params},
                          taken=taken)
            # each SpmdScopeStmt's statements are spliced into its block before outlining, so the
            # region's results are renamed in the statements after the scope
            body = expand_stmts(f.body, o.spmd)
            body = map_blocks(body, o.block)
            ftype = FunctionType.Orchestration if f.func_type is FunctionType.Opaque else f.func_type
            funcs.extend(o.new_funcs)
            funcs.append(dataclasses.replace(f, body=body, func_type=ftype) if ftype is f.func_type
                         else f.with_(body=body, func_type=ftype))
            changed = True
        return program.with_functions(callee_first(funcs)) if changed else program
