"""Orchestration C++ (``orchestration/<orch>.cpp``) against the runtime ABI of runtime.md §2.4-2.5.

The IR-to-C++ mapping is 1:1: one ``PTO2_SCOPE`` per RuntimeScopeStmt, one ``alloc_tensors`` per
scope for its ``tensor.create``s, one submit per kernel call (tensors first, then scalars), loops
and ifs verbatim. A call's result is renamed to its Out/InOut argument. Before a submit, its tensor
arguments are checked against the layouts its kernel's parameters declare (:mod:`pypto.codegen.orch_args`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.artifact.model import CoreKind
from pypto.codegen import orch_comm
from pypto.codegen.cores import core_of
from pypto.codegen.emitter import Emitter, base_name
from pypto.codegen.orch_args import check_views, check_windows, gappy_windows
from pypto.codegen.orch_expr import CppExpr, call_deps, runtime_dtype
from pypto.codegen.orch_predicate import close_predicate, open_predicate
from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import ArgDirection, FunctionType, ParamDirection
from pypto.ir.expr import Call, GlobalVar, MakeTuple, TupleGetItem, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    RuntimeScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
    flatten,
)
from pypto.ir.types import ArrayType, ScalarType, TensorType, TupleType
from pypto.ir.verifier import refs

_PARAM_TO_ARG = {ParamDirection.In: ArgDirection.Input, ParamDirection.Out: ArgDirection.OutputExisting,
                 ParamDirection.InOut: ArgDirection.InOut}
_ADD = {ArgDirection.Input: "add_input", ArgDirection.Output: "add_output",
        ArgDirection.OutputExisting: "add_output", ArgDirection.InOut: "add_inout",
        ArgDirection.NoDep: "add_no_dep"}

_HEADER = """#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pto_orchestration_api.h"

extern "C" {
"""


@dataclass
class FuncIds:
    """``func_id`` of each kernel by first-seen order, shared by all orchestrations of a program."""

    ids: dict[str, int] = field(default_factory=dict)
    cores: dict[str, CoreKind] = field(default_factory=dict)

    def get(self, name: str, core: CoreKind) -> int:
        if name not in self.ids:
            self.ids[name] = len(self.ids)
            self.cores[name] = core
        return self.ids[name]


class OrchCodegen(CppExpr):
    """Emits one orchestration function."""

    def __init__(self, func: Function, program: Program, func_ids: FuncIds, backend: str = "Ascend910B") -> None:
        super().__init__()
        # the SPMD launch setter: a5's runtime calls block_num core_num (runtime.md §1.5)
        self.block_setter = "set_core_num" if backend == "Ascend950" else "set_block_num"
        self.func = func
        self.program = program
        self.func_ids = func_ids
        self.em = Emitter(indent="    ", level=1)
        self.task = 0
        self.allocs = 0
        self.deferred: set[int] = set()  # creates allocated where they stand (_allocs)
        self.needs_id: set[Var] = set()

    def _windows(self) -> dict[Var, tuple[tuple, tuple]]:
        """Vars bound to ``tensor.slice`` windows that are not contiguous in their parent (row gaps)."""
        if getattr(self, "_gappy", None) is None:
            self._gappy = gappy_windows(self.func.body)
        return self._gappy

    # ------------------------------------------------------------------ prologue
    def bind_params(self) -> None:
        self.em.line("// External tensors")
        n_t = n_s = 0
        for p in self.func.params:
            name = base_name(p.name)
            if isinstance(p.type, TensorType):
                ext = self.em.unique(f"ext_{name}")
                self.em.line(f"const ChipTensor& {ext} = orch_args.tensor({n_t}).ref();")
                self.env[p] = ext
                self._bind_dims(p, n_t)
                n_t += 1
            elif isinstance(p.type, ScalarType):
                self._bind_scalar(p, name, n_s)
                n_s += 1
            else:
                raise UserError(f"orchestration '{self.func.name}': parameter '{name}' of type {p.type} is not "
                                "supported", p.span)
        self.em.line()

    def _bind_scalar(self, p: Var, name: str, j: int) -> None:
        ctype = p.type.dtype.ctype  # type: ignore[union-attr]
        local = self.em.unique(name)
        self.em.line(f"union {{ uint64_t u64; {ctype} val; }} {local}_conv;")
        self.em.line(f"{local}_conv.u64 = orch_args.scalar({j});")
        self.em.line(f"{ctype} {local} = {local}_conv.val;")
        self.env[p] = local

    def _bind_dims(self, p: Var, i: int) -> None:
        for axis, d in enumerate(p.type.shape):  # type: ignore[union-attr]
            if isinstance(d, Var) and d not in self.env:
                local = self.em.unique(base_name(d.name))
                self.em.line(f"int64_t {local} = (int64_t)orch_args.tensor({i}).ref().shapes[{axis}];")
                self.env[d] = local

    # ------------------------------------------------------------------ statements
    def stmt(self, s: Stmt) -> None:
        handler = _STMTS.get(type(s))
        if handler is None:
            raise UserError(f"statement {type(s).__name__} is not supported in an orchestration function", s.span)
        handler(self, s)

    def _seq(self, s: SeqStmts) -> None:
        for x in s.stmts:
            self.stmt(x)

    def _scope(self, s: RuntimeScopeStmt) -> None:
        self.em.line("PTO2_SCOPE(PTO2ScopeMode::MANUAL) {" if s.manual else "PTO2_SCOPE() {")
        self.em.push()
        self._allocs(s.body)
        self.stmt(s.body)
        self.em.pop()
        self.em.line("}")

    def _allocs(self, body: Stmt) -> None:
        """Batch this scope's ``tensor.create``s into one ``alloc_tensors`` at its top; a create whose shape
        reads a scalar the scope computes first (``m = pl.tensor.dim(a, 0)``) is allocated where it stands."""
        creates = [x for x in flatten(body) if isinstance(x, AssignStmt) and isinstance(x.value, Call)
                   and x.value.op == "tensor.create"]
        ready = [a for a in creates if all(v in self.env for v in refs(a.value.args[:1]))]
        self.deferred.update(id(a) for a in creates if a not in ready)
        self._alloc(ready)

    def _alloc(self, creates: list[AssignStmt]) -> None:
        if not creates:
            return
        infos = []
        for a in creates:
            t = a.var.type
            assert isinstance(t, TensorType)
            name = self.em.unique(base_name(a.var.name))
            shape = a.value.args[0] if isinstance(a.value, Call) and a.value.args else None
            # the call's shape operands: substitution and cloning rename operands, not the Vars in types
            dims = ", ".join(self.expr(d) for d in (shape.elements if isinstance(shape, MakeTuple) else t.shape))
            self.em.line(f"uint32_t {name}_ci_shapes[{len(t.shape)}] = {{{dims}}};")
            self.em.line(f"TensorCreateInfo {name}_ci({name}_ci_shapes, {len(t.shape)}, "
                         f"DataType::{runtime_dtype(t.dtype, a.span)});")
            init = a.value.kwargs.get("init_value") if isinstance(a.value, Call) else None
            if init is not None:
                self.em.line(f"{name}_ci.set_initial_value(({t.dtype.ctype}){self.expr(init)});")
            infos.append((a.var, name))
        alloc = f"alloc_{self.allocs}"
        self.allocs += 1
        self.em.line(f"TaskOutputTensors {alloc} = alloc_tensors({', '.join(n + '_ci' for _, n in infos)});")
        for i, (var, name) in enumerate(infos):
            self.em.line(f"const ChipTensor& {name} = {alloc}.get_ref({i});")
            self.env[var] = name

    def _assign(self, s: AssignStmt) -> None:
        v = s.value
        if id(s) in self.deferred:
            self.deferred.discard(id(s))
            self._alloc([s])
        elif isinstance(v, Call) and isinstance(v.op, GlobalVar):
            self.submit(v, s.var)
        elif isinstance(v, Call) and v.op == "system.task_dummy":
            self.submit_dummy(v, s.var)
        elif isinstance(v, Call):
            self.tensor_op(v, s.var)
        elif isinstance(v, TupleGetItem) and v.tuple_value in self.env:
            items = self.tuple_items.get(v.tuple_value, [])  # type: ignore[call-overload]
            # past the outputs: the task id of a submit whose id nothing reads (so it was not captured)
            self.env[s.var] = items[v.index] if v.index < len(items) else "PTO2TaskId::invalid()"
        else:
            self.declare_scalar(s.var, v)

    def _eval(self, s: EvalStmt) -> None:
        if isinstance(s.expr, Call) and isinstance(s.expr.op, GlobalVar):
            self.submit(s.expr, None)
        elif isinstance(s.expr, Call) and s.expr.op == "system.task_dummy":
            self.submit_dummy(s.expr, None)
        elif isinstance(s.expr, Call):
            self.tensor_op(s.expr, None)

    def _return(self, s: ReturnStmt) -> None:
        return

    def _carries(self, s: ForStmt | WhileStmt) -> None:
        """A local per carried value, set to its initial value (an array is carried in place)."""
        for ia, init in zip(s.iter_args, s.inits, strict=True):
            if isinstance(ia.type, ArrayType):  # updated in place: the carry is the array itself
                self.env[ia] = self.expr(init)
                continue
            local = self.em.unique(base_name(ia.name))
            self.em.line(f"{self.decl_type(ia)} {local} = {self.expr(init)};")  # type: ignore[arg-type]
            self.env[ia] = local

    def _while(self, s: WhileStmt) -> None:
        """``while (true) { if (!cond) break; body }``: the test is evaluated in the loop, so whatever it
        computes is recomputed each time; the body's yield updates the carried locals."""
        self._carries(s)
        self.em.line("while (true) {")
        self.em.push()
        self.em.line(f"if (!({self.expr(s.cond)})) break;")
        self.yields.append([self.env[ia] for ia in s.iter_args])
        self.stmt(s.body)
        self.yields.pop()
        self.em.pop()
        self.em.line("}")
        for ia, rv in zip(s.iter_args, s.return_vars, strict=False):
            self.env[rv] = self.env[ia]

    def _for(self, s: ForStmt) -> None:
        self._carries(s)
        iv = self.em.unique(base_name(s.loop_var.name))
        self.env[s.loop_var] = iv
        self.em.line(f"for (int64_t {iv} = {self.expr(s.start)}; {iv} < {self.expr(s.stop)}; "
                     f"{iv} += {self.expr(s.step)}) {{")
        self.yields.append([self.env[ia] for ia in s.iter_args])
        self.em.push()
        self.stmt(s.body)
        self.em.pop()
        self.yields.pop()
        self.em.line("}")
        for ia, rv in zip(s.iter_args, s.return_vars, strict=False):
            self.env[rv] = self.env[ia]

    def _if(self, s: IfStmt) -> None:
        targets = []
        for rv in s.return_vars:
            local = self.em.unique(base_name(rv.name))
            if isinstance(rv.type, ArrayType):  # each branch's yield copies its array's elements in
                elem = "PTO2TaskId" if rv.type.dtype is DataType.TASK_ID else rv.type.dtype.ctype
                self.em.line(f"{elem} {local}[{rv.type.extent}];")
            else:
                self.em.line(f"{self.decl_type(rv)} {local}{{}};")
            targets.append(local)
            self.env[rv] = local
        self.yields.append(targets)
        self.em.line(f"if ({self.expr(s.cond)}) {{")
        self.em.push()
        self.stmt(s.then_body)
        self.em.pop()
        if s.else_body is not None:
            self.em.line("} else {")
            self.em.push()
            self.stmt(s.else_body)
            self.em.pop()
        self.em.line("}")
        self.yields.pop()

    def _yield(self, s: YieldStmt) -> None:
        if not self.yields:
            return
        for target, v in zip(self.yields[-1], s.values, strict=False):
            val = self.expr(v)
            if val == target:
                continue
            if isinstance(v.type, ArrayType):  # C arrays do not assign: the carried array takes the elements
                k = self.em.unique(f"{target}_k")
                self.em.line(f"for (int {k} = 0; {k} < {v.type.extent}; ++{k}) {target}[{k}] = {val}[{k}];")
            else:
                self.em.line(f"{target} = {val};")

    # ------------------------------------------------------------------ submission
    def submit(self, c: Call, result: Var | None) -> None:
        callee = self.program.get_function(c.op.name)  # type: ignore[union-attr]
        if callee is None:
            raise UserError(f"call to unknown function '{c.op.name}'", c.span)  # type: ignore[union-attr]
        dirs = self._directions(c, callee)
        check_views(c, callee)
        check_windows(c, callee, self._windows())
        k = self.task
        self.task += 1
        self.em.line()
        self.em.line(f"// Task {k}: {callee.name}")
        predicated = open_predicate(self, c, k)
        self.em.line(f"CoreTaskArgs params_t{k};")
        outs: list[str] = []
        for arg, d in zip(c.args, dirs, strict=True):
            if isinstance(arg.type, TensorType):
                x = self.expr(arg)
                self.em.line(f"params_t{k}.{_ADD.get(d, 'add_input')}({x});")
                if d in (ArgDirection.Output, ArgDirection.OutputExisting, ArgDirection.InOut):
                    outs.append(x)
        for arg in c.args:
            if not isinstance(arg.type, TensorType):
                self.em.line(f"params_t{k}.add_scalar({self.scalar_arg(arg)});")
        marked = [self.expr(c.args[i]) for i in c.attrs.get("dump_args") or ()
                  if i < len(c.args) and isinstance(c.args[i].type, TensorType)]
        if marked:  # selective argument dump (RunConfig.enable_dump_args=1)
            self.em.line(f"params_t{k}.dump({', '.join(marked)});")
        self.deps(c, k)
        self._launch(c, k)
        call = self._submit_call(callee, k)
        capture = predicated or (result is not None and (result in self.needs_id or _yields_task_id(result)))
        decl = "" if predicated else "TaskOutputTensors "
        self.em.line(f"{decl}task_{k}_outs = {call};" if capture else f"{call};")
        if predicated:
            close_predicate(self, c, k)
        self._bind_result(result, outs, k if capture else None)

    def _directions(self, c: Call, callee: Function) -> list[ArgDirection]:
        dirs = c.attrs.get("arg_directions")
        if dirs is None:
            dirs = [_PARAM_TO_ARG[d] if isinstance(p.type, TensorType) else ArgDirection.Scalar
                    for p, d in zip(callee.params, callee.param_directions, strict=True)]
        return [d if isinstance(d, ArgDirection) else ArgDirection(d) for d in dirs]

    def submit_dummy(self, c: Call, result: Var | None) -> None:
        """``pl.system.task_dummy(deps=[...])``: a task with no kernel that completes after all its deps."""
        k = self.task
        self.task += 1
        self.em.line()
        self.em.line(f"// Task {k}: dependency join")
        self.em.line(f"CoreTaskArgs params_t{k};")
        self.deps(c, k)
        name = self.em.unique(base_name(result.name) if result is not None else "join")
        self.em.line(f"PTO2TaskId {name} = rt_submit_dummy_task(params_t{k});")
        if result is not None:
            self.env[result] = name

    def deps(self, c: Call, k: int) -> None:
        deps = call_deps(c)
        if not deps:
            return
        arrays = [d for d in deps if isinstance(d.type, ArrayType)]
        if not arrays:
            ids = ", ".join(self.task_id(d) for d in deps)
            self.em.line(f"PTO2TaskId params_t{k}_deps[{len(deps)}] = {{{ids}}};")
            self.em.line(f"params_t{k}.set_dependencies(params_t{k}_deps, {len(deps)});")
            return
        # deps=[arr]: every element (invalid ids, e.g. never-written slots, are skipped by the runtime)
        total = sum(d.type.extent if isinstance(d.type, ArrayType) else 1 for d in deps)  # type: ignore[union-attr]
        self.em.line(f"PTO2TaskId params_t{k}_deps[{total}];")
        self.em.line(f"uint32_t params_t{k}_ndeps = 0;")
        for d in deps:
            if isinstance(d.type, ArrayType):
                arr = self.expr(d)
                self.em.line(f"for (int {arr}_k = 0; {arr}_k < {d.type.extent}; ++{arr}_k) "
                             f"params_t{k}_deps[params_t{k}_ndeps++] = {arr}[{arr}_k];")
            else:
                self.em.line(f"params_t{k}_deps[params_t{k}_ndeps++] = {self.task_id(d)};")
        self.em.line(f"params_t{k}.set_dependencies(params_t{k}_deps, params_t{k}_ndeps);")

    def _launch(self, c: Call, k: int) -> None:
        """``pl.spmd(n)``: the task runs as ``n`` blocks (``launch_spec``); scheduling hints."""
        n = c.attrs.get("block_num")
        if n is not None:
            self.em.line(f"params_t{k}.launch_spec.{self.block_setter}({self.expr(n)});")
        if c.attrs.get("sync_start"):
            self.em.line(f"params_t{k}.launch_spec.set_require_sync_start(true);")
        if c.attrs.get("allow_early_resolve"):
            self.em.line(f"params_t{k}.set_allow_early_resolve(true);")

    def _submit_call(self, callee: Function, k: int) -> str:
        if callee.func_type is FunctionType.Group:
            members = self.group_members(callee)
            aic = [self.func_ids.get(m.name, "aic") for m in members if m.func_type is FunctionType.AIC]
            aiv = [self.func_ids.get(m.name, "aiv") for m in members if m.func_type is FunctionType.AIV]
            slots = [str(x) for x in (aic[:1] or ["INVALID_KERNEL_ID"])]
            slots += [str(x) for x in aiv[:2]] + ["INVALID_KERNEL_ID"] * (2 - len(aiv[:2]))
            self.em.line(f"MixedKernels mixed_{k} = {{{', '.join(slots)}}};")
            return f"rt_submit_task(mixed_{k}, params_t{k})"
        core = core_of(callee)
        fid = self.func_ids.get(callee.name, core)  # type: ignore[arg-type]
        return f"rt_submit_{core}_task({fid}, params_t{k})"

    def group_members(self, group: Function) -> list[Function]:
        names: list[str] = []
        for s in flatten(group.body):
            e = s.value if isinstance(s, AssignStmt) else getattr(s, "expr", None)
            if isinstance(e, Call) and isinstance(e.op, GlobalVar) and e.op.name not in names:
                names.append(e.op.name)
        return [f for n in names if (f := self.program.get_function(n)) is not None]

    def _bind_result(self, result: Var | None, outs: list[str], k: int | None) -> None:
        if result is None:
            return
        if isinstance(result.type, TupleType):
            items: list[str] = list(outs)
            if k is not None:
                items.append(f"task_{k}_outs.task_id()")
            self.tuple_items[result] = items
            self.env[result] = f"task_{k}_outs" if k is not None else "/*tuple*/"
        elif outs:
            self.env[result] = outs[0]
        elif k is not None:
            self.env[result] = f"task_{k}_outs.task_id()"

    # ------------------------------------------------------------------ whole file
    def emit(self) -> str:
        self.needs_id = self.dep_sources(self.func.body)
        n_args = sum(1 for p in self.func.params if isinstance(p.type, TensorType | ScalarType))
        self.bind_params()
        self.stmt(self.func.body)
        body = "\n".join(self.em.lines)
        header = _HEADER.replace("extern", orch_comm.COMM_HEADER + "\nextern", 1) if _uses_comm(self.func) else _HEADER
        return (f"// Orchestration Function: {self.func.name}\n// Generated by PyPTO IR Compiler\n\n{header}\n"
                "__attribute__((visibility(\"default\")))\n"
                "PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {\n"
                "    (void)orch_args;\n    return PTO2OrchestrationConfig{\n"
                f"        .expected_arg_count = {n_args},\n    }};\n}}\n\n"
                "__attribute__((visibility(\"default\")))\n"
                "void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {\n"
                f"{body}\n}}\n\n}}  // extern \"C\"\n")


def _uses_comm(func: Function) -> bool:
    from pypto.passes._util import calls_in

    return any(isinstance(c.op, str) and c.op.startswith("comm.") for c in calls_in(func.body))


def _yields_task_id(result: Var) -> bool:
    """A ``(..., TASK_ID)`` call result (``as tid``): its last item is the task id, used or not."""
    t = result.type
    last = t.types[-1] if isinstance(t, TupleType) and t.types else None
    return isinstance(last, ScalarType) and last.dtype is DataType.TASK_ID


_STMTS = {
    SeqStmts: OrchCodegen._seq,
    RuntimeScopeStmt: OrchCodegen._scope,
    AssignStmt: OrchCodegen._assign,
    EvalStmt: OrchCodegen._eval,
    ReturnStmt: OrchCodegen._return,
    ForStmt: OrchCodegen._for,
    WhileStmt: OrchCodegen._while,
    IfStmt: OrchCodegen._if,
    YieldStmt: OrchCodegen._yield,
}
