"""The IR verifier: one checker per verified IRProperty, each returning Diagnostics with spans."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from pypto.diagnostics import Diagnostic, Severity
from pypto.errors import VerificationError
from pypto.ir.callgraph import written_args
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import Call, ConstInt, Expr, GlobalVar, IterArg, Var
from pypto.ir.function import Function, Program
from pypto.ir.memo import IdentityMemo
from pypto.ir.ops.registry import op_of
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    RuntimeScopeStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
    defined_by,
    flatten,
    preorder,
    trailing_yield,
)
from pypto.ir.types import ShapedType, TensorType, TileType, UnknownType
from pypto.ir.visitor import IRVisitor

# Error codes of the upstream verifier (SSA 1-7, TypeCheck 101-111, UseAfterDef 401).
MULTIPLE_ASSIGNMENT, MISSING_YIELD, ITER_ARGS_RETURN_VARS_MISMATCH, YIELD_COUNT_MISMATCH = 1, 3, 4, 5
TYPE_MISMATCH, CALL_ARITY = 101, 102
USE_BEFORE_DEF = 401


_LEAVES = (AssignStmt, ReturnStmt, YieldStmt)
Checker = Callable[[Program], list[Diagnostic]]


def _err(rule: str, code: int, msg: str, span: object = None) -> Diagnostic:
    return Diagnostic(Severity.ERROR, rule, msg, span, code)  # type: ignore[arg-type]


def walk(stmt: Stmt | None) -> Iterator[Stmt]:
    """Pre-order statements of a body (:func:`pypto.ir.stmt.preorder`, remembered per body)."""
    return iter(preorder(stmt))


def _children(stmt: Stmt) -> tuple[Stmt | None, ...]:
    if isinstance(stmt, SeqStmts):
        return stmt.stmts
    if isinstance(stmt, IfStmt):
        return (stmt.then_body, stmt.else_body)
    if isinstance(stmt, (ForStmt, WhileStmt, ScopeStmt)):
        return (stmt.body,)
    return ()


class _Refs(IRVisitor):
    def __init__(self) -> None:
        self.refs: list[Var] = []

    def visit_Var(self, node: Var) -> None:  # noqa: N802
        self.refs.append(node)

    def visit_IterArg(self, node: IterArg) -> None:  # noqa: N802
        self.refs.append(node)


def refs(node: object) -> list[Var]:
    """Vars referenced in a node or a list of nodes (None entries skipped)."""
    v = _Refs()
    for n in node if isinstance(node, (list, tuple)) else [node]:
        if n is not None:
            v.visit(n)
    return v.refs


class _Calls(IRVisitor):
    def __init__(self) -> None:
        self.found: list[Call] = []

    def visit_Call(self, c: Call) -> None:  # noqa: N802
        self.found.append(c)
        self.generic_visit(c)


def calls(node: object) -> list[Call]:
    """Every Call in a tree (pre-order); the walk is remembered per node (passes and checkers ask again
    for the bodies a pass left as they were), each caller gets a list of its own."""
    return list(_CALLS.get(None, node, _walk_calls))


def _walk_calls(node: object) -> tuple[Call, ...]:
    v = _Calls()
    v.visit(node)
    return tuple(v.found)


_CALLS = IdentityMemo(4096)


_MEMO = IdentityMemo(1024)  # per Function object: its checks


def _stmts(f: Function) -> tuple[Stmt, ...]:
    """Pre-order statements of ``f``'s body, collected once per Function and shared by the checkers."""
    return preorder(f.body)


def _body_calls(f: Function) -> tuple[Call, ...]:
    return _CALLS.get(None, f.body, _walk_calls)


def _per_function(check: Callable[[Function], list[Diagnostic]]) -> Checker:
    """A checker whose findings depend on one function alone: each Function object is checked once."""
    def run(program: Program) -> list[Diagnostic]:
        return [d for f in program.functions for d in _MEMO.get(check, f, check)]
    run.__name__ = run.__qualname__ = check.__name__
    return run


def _check_ssa(f: Function) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    seen: set[Var] = set(f.params)
    for s in _stmts(f):
        for v in defined_by(s):
            if v in seen:
                out.append(_err("SSAForm", MULTIPLE_ASSIGNMENT,
                                f"variable '{v.name}' is assigned more than once in '{f.name}'", s.span))
            seen.add(v)
        out.extend(_check_yields(s))
    return out


def _check_yields(s: Stmt) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if isinstance(s, (ForStmt, WhileStmt)) and s.iter_args:
        if len(s.iter_args) != len(s.return_vars):
            out.append(_err("SSAForm", ITER_ARGS_RETURN_VARS_MISMATCH,
                            f"loop has {len(s.iter_args)} iter_args but {len(s.return_vars)} return vars", s.span))
        bodies = [s.body]
    elif isinstance(s, IfStmt) and s.return_vars:
        bodies = [s.then_body, s.else_body]
    else:
        return out
    want = len(s.return_vars)
    for body in bodies:
        y = trailing_yield(body)
        if y is None:
            out.append(_err("SSAForm", MISSING_YIELD, "block with results does not end in pl.yield_", s.span))
        elif len(y.values) != want:
            out.append(_err("SSAForm", YIELD_COUNT_MISMATCH,
                            f"pl.yield_ gives {len(y.values)} values, expected {want}", y.span))
    return out


def _check_use_after_def(f: Function) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    defined: set[Var] = set(f.params)
    for p in f.params:
        defined.update(v for v in refs_of_type(p))
    _uad_block(f.body, defined, f, out)
    return out


def refs_of_type(v: Var) -> list[Var]:
    """The variables a value's type binds: its dynamic dims, also ``M`` of a dim ``M * 2``."""
    t = v.var_type
    dims = getattr(t, "shape", ())
    return [r for d in dims if isinstance(d, Expr) for r in refs(d)]


def _uad_expr(e: object, defined: set[Var], f: Function, span: object, out: list[Diagnostic]) -> None:
    for v in refs(e):
        if v not in defined and not isinstance(v, GlobalVar):
            out.append(_err("UseAfterDef", USE_BEFORE_DEF,
                            f"variable '{v.name}' is used before it is defined in '{f.name}'", span))
            defined.add(v)


def _uad_block(stmt: Stmt | None, defined: set[Var], f: Function, out: list[Diagnostic]) -> None:
    if stmt is None:
        return
    if isinstance(stmt, (ForStmt, WhileStmt)):
        heads = [stmt.start, stmt.stop, stmt.step] if isinstance(stmt, ForStmt) else []
        heads += stmt.inits
        _uad_expr(heads, defined, f, stmt.span, out)
        defined.update(defined_by(stmt))
        if isinstance(stmt, WhileStmt):
            _uad_expr(stmt.cond, defined, f, stmt.span, out)
        _uad_block(stmt.body, defined, f, out)
        return
    if isinstance(stmt, IfStmt):
        _uad_expr(stmt.cond, defined, f, stmt.span, out)
        _uad_block(stmt.then_body, defined, f, out)
        _uad_block(stmt.else_body, defined, f, out)
        defined.update(stmt.return_vars)
        return
    if isinstance(stmt, (SeqStmts, ScopeStmt)):
        if isinstance(stmt, ScopeStmt):
            _uad_expr([*getattr(stmt, "deps", ()), *getattr(stmt, "dumps", ())], defined, f, stmt.span, out)
            task = getattr(stmt, "task_var", None)
            if task is not None:
                defined.add(task)
        for child in _children(stmt):
            _uad_block(child, defined, f, out)
        return
    if isinstance(stmt, AssignStmt):
        _uad_expr(stmt.value, defined, f, stmt.span, out)
        defined.add(stmt.var)
        return
    _uad_expr(stmt, defined, f, stmt.span, out)


def _same_type(a: object, b: object) -> bool:
    if isinstance(b, UnknownType) or isinstance(a, UnknownType):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, ShapedType) and isinstance(b, ShapedType):
        return a.dtype is b.dtype and len(a.shape) == len(b.shape)
    return True


def _check_types(program: Program) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for f in program.functions:
        for s in _stmts(f):
            if isinstance(s, AssignStmt) and not _same_type(s.var.var_type, s.value.type):
                out.append(_err("TypeChecked", TYPE_MISMATCH,
                                f"'{s.var.name}' is declared {s.var.var_type} but assigned {s.value.type}", s.span))
            for c in calls(s) if isinstance(s, _LEAVES) else ():
                out.extend(_check_call_arity(c, program))
    return out


def _check_call_arity(c: Call, program: Program) -> list[Diagnostic]:
    if not isinstance(c.op, GlobalVar):
        return []
    target = program.get_function(c.op.name)
    if target is None:
        return [_err("TypeChecked", CALL_ARITY, f"call to unknown function '{c.op.name}'", c.span)]
    if len(target.params) != len(c.args):
        return [_err("TypeChecked", CALL_ARITY,
                     f"'{c.op.name}' takes {len(target.params)} arguments but {len(c.args)} were given", c.span)]
    return []


def _check_break_continue(f: Function) -> list[Diagnostic]:
    out: list[Diagnostic] = []

    def go(stmt: Stmt | None, in_loop: bool) -> None:
        if stmt is None:
            return
        if isinstance(stmt, (BreakStmt, ContinueStmt)) and not in_loop:
            kw = "break" if isinstance(stmt, BreakStmt) else "continue"
            out.append(_err("BreakContinueValid", 201, f"'{kw}' outside a loop", stmt.span))
        loop = isinstance(stmt, (ForStmt, WhileStmt))
        for child in _children(stmt):
            go(child, in_loop or loop)

    go(f.body, False)
    return out


def _check_redundant_blocks(f: Function) -> list[Diagnostic]:
    return [_err("NoRedundantBlocks", 301, "nested statement block inside a block", s.span) for s in _stmts(f)
            if isinstance(s, SeqStmts) and any(isinstance(c, SeqStmts) for c in s.stmts)]


def _check_inout_use(program: Program) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for f in program.functions:
        consumed: dict[Var, str] = {}
        for s in _stmts(f):
            if not isinstance(s, _LEAVES) and not isinstance(s, (ForStmt, IfStmt, WhileStmt)):
                continue
            head = s if isinstance(s, _LEAVES) else [getattr(s, "cond", None)]
            for v in refs(head):
                if v in consumed:
                    out.append(_err("InOutUseValid", 501,
                                    f"'{v.name}' is used after it was passed as an {consumed[v]} argument; use the "
                                    f"value returned by that call instead", s.span))
                    consumed.pop(v)
            if isinstance(s, AssignStmt):
                # a name rebound (in a branch, before ConvertToSSA merges it by name) is valid again
                consumed = {v: d for v, d in consumed.items() if v.name != s.var.name}
                consumed.update(_written_args(s.value, program))
    return out


def _written_args(value: Expr, program: Program) -> dict[Var, str]:
    """Arguments a program call writes -> the direction they were passed as (Out / InOut)."""
    if not isinstance(value, Call) or not isinstance(value.op, GlobalVar):
        return {}
    callee = program.get_function(value.op.name)
    return {a: callee.param_directions[i].value for i in written_args(value, program)
            if isinstance(a := value.args[i], Var) and callee is not None}


def _is_cube_op(call: Call) -> bool:
    op = op_of(call)
    return op is not None and op.core == "cube"


def _check_mixed_expanded(f: Function) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if f.func_type is FunctionType.InCore:
        out.append(_err("MixedKernelExpanded", 601, f"InCore function '{f.name}' was not split into AIC/AIV",
                        f.span))
    if f.func_type is FunctionType.AIV and any(_is_cube_op(c) for c in _body_calls(f)):
        out.append(_err("MixedKernelExpanded", 602, f"AIV function '{f.name}' contains cube ops", f.span))
    return out


def _tile_vars(f: Function) -> Iterator[tuple[Var, Stmt]]:
    for s in _stmts(f):
        for v in defined_by(s):
            if isinstance(v.var_type, TileType):
                yield v, s


def _check_memory_inferred(f: Function) -> list[Diagnostic]:
    if not f.is_incore:
        return []
    return [_err("TileMemoryInferred", 701, f"tile '{v.name}' in '{f.name}' has no memory space", s.span)
            for v, s in _tile_vars(f) if v.var_type.memory_space is None]  # type: ignore[union-attr]


def _check_addresses(f: Function) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if not f.is_incore:
        return out
    for v, s in _tile_vars(f):
        mr = v.var_type.memref  # type: ignore[union-attr]
        if mr is None or not isinstance(mr.offset, (int, ConstInt)):
            out.append(_err("AllocatedMemoryAddr", 801, f"tile '{v.name}' in '{f.name}' has no address", s.span))
    return out


def _check_call_directions(f: Function) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for c in _body_calls(f):
        if isinstance(c.op, GlobalVar):
            dirs = c.attrs.get("arg_directions")
            if dirs is None or len(dirs) != len(c.args):
                out.append(_err("CallDirectionsResolved", 901,
                                f"call to '{c.op.name}' in '{f.name}' has no arg_directions", c.span))
    return out


def _check_runtime_scopes(f: Function) -> list[Diagnostic]:
    if f.func_type is not FunctionType.Orchestration or any(isinstance(s, RuntimeScopeStmt) for s in flatten(f.body)):
        return []
    return [_err("RuntimeScopesMaterialized", 1001, f"orchestration '{f.name}' has no runtime scope", f.span)]


def _check_return_params(f: Function) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if not f.is_incore:
        return out
    params = {p for p, d in zip(f.params, f.param_directions, strict=True) if d is not ParamDirection.In}
    for s in _stmts(f):
        if isinstance(s, ReturnStmt):
            bad = [v for v in s.values if isinstance(v.type, TensorType) and v not in params]
            out.extend(_err("ReturnParamsExplicit", 1101,
                            f"'{f.name}' returns tensor '{v.name}' that is not an Out/InOut parameter", s.span)
                       for v in bad)
    return out


def _nothing_to_check(program: Program) -> list[Diagnostic]:
    """Properties about constructs our IR cannot express (submit deps, split AIV, syncall, ...)."""
    return []


P = IRProperty
# TypeChecked and InOutUseValid read the called functions' signatures: they check the whole program.
CHECKERS: dict[IRProperty, Checker] = {
    P.SSAForm: _per_function(_check_ssa),
    P.TypeChecked: _check_types,
    P.UseAfterDef: _per_function(_check_use_after_def),
    P.BreakContinueValid: _per_function(_check_break_continue),
    P.NoRedundantBlocks: _per_function(_check_redundant_blocks),
    P.InOutUseValid: _check_inout_use,
    P.MixedKernelExpanded: _per_function(_check_mixed_expanded),
    P.TileMemoryInferred: _per_function(_check_memory_inferred),
    P.AllocatedMemoryAddr: _per_function(_check_addresses),
    P.CallDirectionsResolved: _per_function(_check_call_directions),
    P.RuntimeScopesMaterialized: _per_function(_check_runtime_scopes),
    P.ReturnParamsExplicit: _per_function(_check_return_params),
    P.ManualDepsOnSubmitOnly: _nothing_to_check,
    P.AivSplitValid: _nothing_to_check,
    P.HardSyncallOccupancyValid: _nothing_to_check,
    P.IterArgCarryClassified: _nothing_to_check,
    P.AccToGmStoreValid: _nothing_to_check,
    P.AtomicAddDtypeValid: _nothing_to_check,
}


def verify(program: Program, properties: Iterable[IRProperty]) -> list[Diagnostic]:
    """Diagnostics for every violated property in ``properties`` (unknown properties are skipped)."""
    out: list[Diagnostic] = []
    for prop in sorted(properties, key=lambda p: p.value):
        checker = CHECKERS.get(prop)
        if checker is not None:
            out.extend(checker(program))
    return out


def verify_or_raise(program: Program, properties: Iterable[IRProperty], where: str = "") -> None:
    """Raise VerificationError listing every violation (rule, code, message, span)."""
    diags = verify(program, properties)
    if diags:
        lines = "\n".join(f"  [{d.rule} #{d.code}] {d.message}" + (f" at {d.span}" if d.span else "")
                          for d in diags)
        raise VerificationError(f"IR verification failed{' ' + where if where else ''}:\n{lines}", diags)
