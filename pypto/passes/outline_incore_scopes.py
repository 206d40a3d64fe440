"""OutlineIncoreScopes: each ``pl.at(level=CORE_GROUP)`` region becomes an InCore function
``<f>_incore_<k>`` (or its name_hint) called from the parent, which becomes an Orchestration."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import Call, Expr, GlobalVar, Var
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, EvalStmt, InCoreScopeStmt, ReturnStmt, Stmt, flatten, seq
from pypto.ir.types import TensorType, TupleType
from pypto.ir.visitor import substitute
from pypto.passes._util import base_name, defined_vars, iter_stmts, map_blocks, used_vars
from pypto.passes.base import Pass

# op -> index of the tensor argument it writes into
WRITES: dict[str, int] = {"tensor.assemble": 0, "tile.store": 2, "tensor.write": 0}


def _written(body: Stmt, program: Program) -> dict[Var, Var | None]:
    """Outer tensors written inside ``body`` -> the var holding the written result (if any)."""
    out: dict[Var, Var | None] = {}
    for s in iter_stmts(body):
        value = s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None
        if not isinstance(value, Call):
            continue
        result = s.var if isinstance(s, AssignStmt) else None
        if isinstance(value.op, str) and value.op in WRITES:
            target = value.args[WRITES[value.op]]
            if isinstance(target, Var):
                out[target] = result
        elif isinstance(value.op, GlobalVar):
            callee = program.get_function(value.op.name)
            for a, d in zip(value.args, callee.param_directions if callee else (), strict=False):
                if isinstance(a, Var) and d is not ParamDirection.In:
                    out[a] = result
    return out


@dataclass
class _Outliner:
    parent: Function
    program: Program
    new_funcs: list[Function] = field(default_factory=list)
    names: set[str] = field(default_factory=set)

    def block(self, stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        rest = list(stmts)
        while rest:
            s = rest.pop(0)
            if not isinstance(s, InCoreScopeStmt):
                out.append(s)
                continue
            call_stmts, renames = self.outline(s)
            out.extend(call_stmts)
            rest = [substitute(r, renames) for r in rest]
        return out

    def _fresh_name(self, stem: str) -> str:
        k = 1
        while f"{stem}__ssa_v{k}" in self.names:
            k += 1
        name = f"{stem}__ssa_v{k}"
        self.names.add(name)
        return name

    def outline(self, scope: InCoreScopeStmt) -> tuple[list[Stmt], dict[Var, Expr]]:
        local = set(defined_vars(scope.body))
        free = [v for v in used_vars(scope.body) if v not in local]
        written = _written(scope.body, self.program)
        outs = [v for v in free if v in written and isinstance(v.var_type, TensorType)]
        fname = scope.name_hint or f"{self.parent.name}_incore_{len(self.new_funcs)}"
        params = {v: Var(v.name, v.var_type, span=v.span) for v in free}
        dirs = tuple(ParamDirection.Out if v in written else ParamDirection.In for v in free)
        inner = map_blocks(substitute(scope.body, params), lambda stmts: [_name_store(s) for s in stmts])
        body = flatten(inner)
        body.append(ReturnStmt(tuple(params[v] for v in outs), span=scope.span))
        func = Function(fname, tuple(params[v] for v in free), dirs, tuple(v.var_type for v in outs), seq(body),
                        FunctionType.InCore, span=scope.span)
        self.new_funcs.append(func)
        return self._call_site(scope, func, free, outs, written)

    def _call_site(self, scope: InCoreScopeStmt, func: Function, free: list[Var], outs: list[Var],
                   written: dict[Var, Var | None]) -> tuple[list[Stmt], dict[Var, Expr]]:
        call = Call(GlobalVar(func.name), tuple(free), result_type=_ret_type(func), span=scope.span)
        if not outs:
            return [EvalStmt(call, span=scope.span)], {}
        if len(outs) > 1:
            raise UnsupportedFeatureError(f"pl.at(CORE_GROUP) region writing {len(outs)} tensors "
                                          f"({', '.join(v.name for v in outs)}); write one output per region",
                                          scope.span)
        v = outs[0]
        result = written[v] or Var(self._fresh_name(base_name(v.name)), v.var_type, span=scope.span)
        result = Var(result.name, v.var_type, span=result.span) if written[v] else result
        renames: dict[Var, Expr] = {v: result}
        if written[v] is not None:
            renames[written[v]] = result  # type: ignore[index]
        return [AssignStmt(result, call, span=scope.span)], renames


def _name_store(s: Stmt) -> Stmt:
    """``pl.tile.store(t, off, c)`` -> ``c__store = pl.tile.store(...)`` (the result names the write)."""
    if isinstance(s, EvalStmt) and isinstance(s.expr, Call) and s.expr.op == "tile.store":
        target = s.expr.args[2]
        stem = base_name(target.name) if isinstance(target, Var) else "out"
        return AssignStmt(Var(f"{stem}__store", s.expr.result_type, span=s.span), s.expr, span=s.span)
    return s


def _ret_type(func: Function):
    if len(func.return_types) == 1:
        return func.return_types[0]
    return TupleType(func.return_types)


@dataclass(frozen=True)
class OutlineIncoreScopes(Pass):
    """Outline InCore scopes; params are the region's free variables (Out for tensors it writes)."""

    name = "OutlineIncoreScopes"
    produces = frozenset({IRProperty.SplitIncoreOrch, IRProperty.NoNestedInCore})

    def run(self, program: Program) -> Program:
        funcs: list[Function] = []
        changed = False
        for f in program.functions:
            if f.is_incore or not any(isinstance(s, InCoreScopeStmt) for s in iter_stmts(f.body)):
                funcs.append(f)
                continue
            o = _Outliner(f, program, names={v.name for v in used_vars(f.body)} | {p.name for p in f.params})
            body = map_blocks(f.body, o.block)
            ftype = FunctionType.Orchestration if f.func_type is FunctionType.Opaque else f.func_type
            funcs.extend(o.new_funcs)
            funcs.append(dataclasses.replace(f, body=body, func_type=ftype) if ftype is f.func_type
                         else f.with_(body=body, func_type=ftype))
            changed = True
        return program.with_functions(funcs) if changed else program
