"""Small helpers to build post-pipeline IR by hand for codegen tests."""

from __future__ import annotations

from pypto.ir.dtypes import DataType
from pypto.ir.enums import ArgDirection, FunctionType, MemorySpace, ParamDirection
from pypto.ir.expr import Call, ConstInt, Expr, GlobalVar, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ReturnStmt, RuntimeScopeStmt, Stmt, seq
from pypto.ir.types import MemRef, PtrType, ScalarType, TensorType, TileType
from pypto.span import Span

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
    rets = tuple(p.type for p, d in zip(params, dirs, strict=False) if d is ParamDirection.Out)
    return Function(name, tuple(params), tuple(dirs), rets, body, ftype, span=SPAN)


def call_kernel(f: Function, args: list[Expr], adirs: list[ArgDirection], result_type) -> Call:
    return Call(GlobalVar(f.name), tuple(args), {}, {"arg_directions": list(adirs)}, result_type)


def orchestration(name: str, params: list[Var], dirs: list[ParamDirection], stmts: list[Stmt],
                  manual: bool = False) -> Function:
    rets = tuple(p.type for p, d in zip(params, dirs, strict=False) if d is ParamDirection.Out)
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


VEC = {"target_memory": MemorySpace.Vec}
MAT = {"target_memory": MemorySpace.Mat}
IN, OUT = ParamDirection.In, ParamDirection.Out
AIN, AOUT = ArgDirection.Input, ArgDirection.OutputExisting


def _single_orch(name: str, k: Function, shapes: list, dirs: list[ParamDirection]) -> Function:
    params = [tensor(f"{p.name}", s, ddr=i) for i, (p, s) in enumerate(zip(k.params, shapes, strict=False))]
    outs = [p for p, d in zip(params, dirs, strict=False) if d is OUT]
    res = Var(f"{outs[0].name.split('__')[0]}__ssa_v1", outs[0].type)
    adirs = [AOUT if d is OUT else AIN for d in dirs]
    c = call_kernel(k, params, adirs, outs[0].type)
    return orchestration(name, params, dirs, [AssignStmt(res, c), ReturnStmt((res,))])


def chunked_add_program() -> Program:
    """``pl.range(4)`` over 128-row chunks of a 512x128 add."""
    from pypto.ir.expr import BinaryExpr, BinOp
    from pypto.ir.stmt import ForStmt

    a, b, c = (tensor(n, (512, 128), ddr=i) for i, n in enumerate(("a__ssa_v0", "b__ssa_v0", "c__ssa_v0")))
    top, body = Body(), Body()
    m3, m4 = top.alloc(MemorySpace.Vec, 65536), top.alloc(MemorySpace.Vec, 65536)
    i = Var("i__idx_v0", ScalarType(DataType.INDEX))
    row = BinaryExpr(BinOp.Mul, i, ConstInt(128), DataType.INDEX)
    ta = body.assign("tile_a__ssa_v0", make_call("tile.load", [a, ints(row, 0), ints(128, 128), ints(128, 128)], VEC), m3)
    tb = body.assign("tile_b__ssa_v0", make_call("tile.load", [b, ints(row, 0), ints(128, 128), ints(128, 128)], VEC), m4)
    tt = body.assign("t__tmp_v0", make_call("tile.add", [ta, tb]), m3)
    body.assign("c__store", make_call("tile.store", [tt, ints(row, 0), c]))
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1), seq(body.stmts))
    top.stmts.append(loop)
    k = kernel("chunked_add_incore_0", [a, b, c], [IN, IN, OUT], top.ret(c))
    return Program("_jit_chunked_add", (k, _single_orch("chunked_add", k, [(512, 128)] * 3, [IN, IN, OUT])))


def softmax_program(n: int = 64) -> Program:
    a, o = tensor("a__ssa_v0", (n, n)), tensor("output__ssa_v0", (n, n), ddr=1)
    b = Body()
    m2, m3, m4 = b.alloc(MemorySpace.Vec, n * n * 4), b.alloc(MemorySpace.Vec, n * n * 4), b.alloc(MemorySpace.Vec, n * 4)
    ta = b.assign("tile_a__ssa_v0", make_call("tile.load", [a, ints(0, 0), ints(n, n), ints(n, n)], VEC), m2)
    mt = b.assign("max_tmp__ssa_v0", make_call("tile.create", [ints(n, n)], {"dtype": F32, **VEC}), m3)
    rm = b.assign("row_max__ssa_v0", make_call("tile.row_max", [ta, mt]), m4)
    sh = b.assign("shifted__ssa_v0", make_call("tile.row_expand_sub", [ta, rm]), m2)
    ex = b.assign("exp_shifted__ssa_v0", make_call("tile.exp", [sh]), m2)
    st = b.assign("sum_tmp__ssa_v0", make_call("tile.create", [ints(n, n)], {"dtype": F32, **VEC}), m3)
    rs = b.assign("row_sum__ssa_v0", make_call("tile.row_sum", [ex, st]), m4)
    r = b.assign("result__ssa_v0", make_call("tile.row_expand_div", [ex, rs]), m2)
    b.assign("output__store", make_call("tile.store", [r, ints(0, 0), o]))
    k = kernel("tile_softmax_incore_0", [a, o], [IN, OUT], b.ret(o))
    return Program("_jit_tile_softmax", (k, _single_orch("tile_softmax", k, [(n, n)] * 2, [IN, OUT])))


def _matmul_kernel(name: str, k_split: int = 1, out: str = "output") -> Function:
    a, bt, c = (tensor(n, (64, 64), ddr=i) for i, n in enumerate(("a__ssa_v0", "b__ssa_v0", f"{out}__ssa_v0")))
    b = Body()
    kk = 64 // k_split
    m3, m4 = b.alloc(MemorySpace.Mat, 64 * kk * 4), b.alloc(MemorySpace.Mat, 64 * kk * 4)
    m5, m6 = b.alloc(MemorySpace.Left, 64 * kk * 4), b.alloc(MemorySpace.Right, 64 * kk * 4)
    m7 = b.alloc(MemorySpace.Acc, 16384)
    acc = None
    for s in range(k_split):
        la = b.assign(f"tile_a{s}_l1", make_call("tile.load", [a, ints(0, s * kk), ints(64, kk), ints(64, kk)], MAT), m3)
        lb = b.assign(f"tile_b{s}_l1", make_call("tile.load", [bt, ints(s * kk, 0), ints(kk, 64), ints(kk, 64)], MAT), m4)
        l0a = b.assign(f"tile_a{s}_l0a", make_call("tile.move", [la], {"target_memory": MemorySpace.Left}), m5)
        l0b = b.assign(f"tile_b{s}_l0b", make_call("tile.move", [lb], {"target_memory": MemorySpace.Right}), m6)
        call = make_call("tile.matmul", [l0a, l0b]) if acc is None else make_call("tile.matmul_acc", [acc, l0a, l0b])
        acc = b.assign(f"acc{s}", call, m7)
    b.eval(make_call("tile.store", [acc, ints(0, 0), c]))
    return kernel(name, [a, bt, c], [IN, IN, OUT], b.ret(c), FunctionType.AIC)


def matmul_program(k_split: int = 1) -> Program:
    k = _matmul_kernel("matmul_64_incore_0" if k_split == 1 else "matmul_acc_64_incore_0", k_split, "c")
    name = "matmul_64" if k_split == 1 else "matmul_acc_64"
    return Program(f"_jit_{name}", (k, _single_orch(name, k, [(64, 64)] * 3, [IN, IN, OUT])))


def _swiglu_kernel() -> Function:
    g, u, o = (tensor(n, (64, 64), ddr=i) for i, n in enumerate(("gate__ssa_v0", "up__ssa_v0", "output__ssa_v0")))
    from pypto.ir.expr import ConstFloat

    b = Body()
    m3, m4, m5, m8 = (b.alloc(MemorySpace.Vec, 16384) for _ in range(4))
    tg = b.assign("tile_gate", make_call("tile.load", [g, ints(0, 0), ints(64, 64), ints(64, 64)], VEC), m3)
    tu = b.assign("tile_up", make_call("tile.load", [u, ints(0, 0), ints(64, 64), ints(64, 64)], VEC), m4)
    gn = b.assign("gate_neg", make_call("tile.muls", [tg, ConstFloat(-1.0)]), m5)
    en = b.assign("exp_neg", make_call("tile.exp", [gn]), m5)
    dn = b.assign("denom", make_call("tile.adds", [en, ConstFloat(1.0)]), m5)
    sg = b.assign("sigmoid", make_call("tile.recip", [dn]), m8)
    sw = b.assign("swish", make_call("tile.mul", [tg, sg]), m3)
    r = b.assign("result", make_call("tile.mul", [sw, tu]), m3)
    b.eval(make_call("tile.store", [r, ints(0, 0), o]))
    return kernel("swiglu_kernel", [g, u, o], [IN, IN, OUT], b.ret(o))


def ffn_swiglu_program() -> Program:
    """Three matmul calls (one func_id) and a vector kernel, three intermediates."""
    mm, sw = _matmul_kernel("matmul_kernel"), _swiglu_kernel()
    names = ("hidden_states", "gate_proj_weight", "up_proj_weight", "down_proj_weight", "output")
    ps = [tensor(f"{n}__ssa_v0", (64, 64), ddr=i) for i, n in enumerate(names)]
    h, wg, wu, wd, out = ps
    stmts: list[Stmt] = []

    def create(n: str) -> Var:
        v = Var(f"{n}__ssa_v0", TensorType((64, 64), F32))
        stmts.append(AssignStmt(v, make_call("tensor.create", [ints(64, 64)], {"dtype": F32})))
        return v

    def call(f: Function, args: list[Var], n: str) -> Var:
        v = Var(n, args[-1].type)
        stmts.append(AssignStmt(v, call_kernel(f, args, [AIN, AIN, AOUT], args[-1].type)))
        return v

    gate = create("gate")
    g1 = call(mm, [h, wg, gate], "gate_v1__ssa_v0")
    up = create("up")
    u1 = call(mm, [h, wu, up], "up_v1__ssa_v0")
    act = create("activated")
    a1 = call(sw, [g1, u1, act], "activated_v1__ssa_v0")
    o1 = call(mm, [a1, wd, out], "output_v1__ssa_v0")
    stmts.append(ReturnStmt((o1,)))
    orch = orchestration("ffn_swiglu", ps, [IN, IN, IN, IN, OUT], stmts)
    return Program("_jit_ffn_swiglu", (mm, sw, orch))
