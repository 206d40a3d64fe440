"""Small helpers to build post-pipeline IR by hand for codegen tests."""

from __future__ import annotations

from pypto.ir.dtypes import DataType
from pypto.ir.enums import ArgDirection, FunctionType, MemorySpace, ParamDirection
from pypto.ir.expr import Call, ConstInt, Expr, GlobalVar, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.span import Span
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, RuntimeScopeStmt, Stmt, seq
from pypto.ir.types import MemRef, PtrType, TensorType, TileType

F32 = DataType.FP32
SPAN = Span("k.py", 3, 5)


def ints(*xs: int | Expr) -> MakeTuple:
    return MakeTuple(tuple(ConstInt(x) if isinstance(x, int) else x for x in xs))


def tensor(name: str, shape, dtype=F32, ddr: int = 0) -> Var:
    return Var(name, TensorType(tuple(shape), dtype, memref=MemRef(f"mem_ddr_{ddr}", ConstInt(0), 0)))


class Body:
    """Collects statements; ``alloc`` makes a MemRef base, ``tile`` a tile-typed Var."""

    def __init__(self) -> None:
        self.stmts: list[Stmt] = []
        self.n = 0

    def alloc(self, space: MemorySpace, size: int) -> Var:
        self.n += 1
        v = Var(f"mem_{space.value.lower()}_{self.n}", PtrType())
        self.stmts.append(AssignStmt(v, make_call("tile.alloc", [], {"memory_space": space, "size": size})))
        return v

    def assign(self, name: str, call: Call, base: Var | None = None, offset: int = 0,
               line: int = 3) -> Var:
        t = call.result_type
        if isinstance(t, TileType) and base is not None:
            t = TileType(t.shape, t.dtype, memref=MemRef(base, ConstInt(offset), 0), view=t.view,
                         memory_space=t.memory_space)
        v = Var(name, t)
        self.stmts.append(AssignStmt(v, call, span=Span("k.py", line, 9)))
        return v

    def eval(self, call: Call) -> None:
        self.stmts.append(EvalStmt(call))

    def ret(self, *vals: Expr) -> Stmt:
        self.stmts.append(ReturnStmt(tuple(vals)))
        return seq(self.stmts)


def kernel(name: str, params: list[Var], dirs: list[ParamDirection], body: Stmt,
           ftype: FunctionType = FunctionType.AIV) -> Function:
    rets = tuple(p.type for p, d in zip(params, dirs) if d is ParamDirection.Out)
    return Function(name, tuple(params), tuple(dirs), rets, body, ftype, span=SPAN)


def call_kernel(f: Function, args: list[Expr], adirs: list[ArgDirection], result_type) -> Call:
    return Call(GlobalVar(f.name), tuple(args), {}, {"arg_directions": list(adirs)}, result_type)


def orchestration(name: str, params: list[Var], dirs: list[ParamDirection], stmts: list[Stmt],
                  manual: bool = False) -> Function:
    rets = tuple(p.type for p, d in zip(params, dirs) if d is ParamDirection.Out)
    body = RuntimeScopeStmt(seq(stmts), manual=manual)
    return Function(name, tuple(params), tuple(dirs), rets, body, FunctionType.Orchestration, span=SPAN)


def add_program(rows: int = 128, cols: int = 128) -> Program:
    """The hello-world add, as in the reference's 49_after_MaterializeValidShapeSymbols dump."""
    a, b, out = (tensor(n, (rows, cols), ddr=i) for i, n in enumerate(("a__ssa_v0", "b__ssa_v0", "out__ssa_v0")))
    body = Body()
    m3 = body.alloc(MemorySpace.Vec, rows * cols * 4)
    m4 = body.alloc(MemorySpace.Vec, rows * cols * 4)
    vec = {"target_memory": MemorySpace.Vec}
    ta = body.assign("a__tile", make_call("tile.load", [a, ints(0, 0), ints(rows, cols), ints(rows, cols)], vec), m3)
    tb = body.assign("b__tile", make_call("tile.load", [b, ints(0, 0), ints(rows, cols), ints(rows, cols)], vec), m4)
    tt = body.assign("t__tile", make_call("tile.add", [ta, tb]), m3, line=4)
    body.assign("out__tile", make_call("tile.store", [tt, ints(0, 0), out]), line=4)
    k = kernel("add_incore_0", [a, b, out], [ParamDirection.In, ParamDirection.In, ParamDirection.Out],
               body.ret(out))
    oa, ob, oo = (tensor(n, (rows, cols), ddr=i) for i, n in enumerate(("a__ssa_v0", "b__ssa_v0", "out__ssa_v0")))
    res = Var("out__ssa_v1", oo.type)
    c = call_kernel(k, [oa, ob, oo], [ArgDirection.Input, ArgDirection.Input, ArgDirection.OutputExisting], oo.type)
    orch = orchestration("add", [oa, ob, oo], [ParamDirection.In, ParamDirection.In, ParamDirection.Out],
                         [AssignStmt(res, c), ReturnStmt((res,))])
    return Program("_jit_add", (k, orch))
