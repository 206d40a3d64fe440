"""Reference kernels built with the IR constructors (the DSL frontend's output shape, pre-pipeline)."""

from __future__ import annotations

from pypto.ir import (
    AssignStmt,
    ConstInt,
    DataType,
    EvalStmt,
    ForStmt,
    Function,
    FunctionType,
    InCoreScopeStmt,
    MakeTuple,
    MemorySpace,
    ParamDirection,
    Program,
    ReturnStmt,
    ScalarType,
    SeqStmts,
    TensorType,
    Var,
)
from pypto.ir.expr import BinaryExpr, BinOp
from pypto.ir.ops.registry import make_call

FP32 = DataType.FP32
IN, OUT = ParamDirection.In, ParamDirection.Out


def ints(*vals: object) -> MakeTuple:
    return MakeTuple(tuple(v if not isinstance(v, int) else ConstInt(v) for v in vals))  # type: ignore[misc]


def tensor(name: str, *shape: int) -> Var:
    return Var(name, TensorType(tuple(shape), FP32))


def orch(name: str, params: list[Var], dirs: list[ParamDirection], body: list, ret: Var) -> Function:
    return Function(name, tuple(params), tuple(dirs), (ret.var_type,), SeqStmts((*body, ReturnStmt((ret,)))),
                    FunctionType.Orchestration)


def add_program() -> Program:
    """``out = pl.tensor.assemble(out, pl.tensor.add(a, b), [0, 0])`` inside pl.at(CORE_GROUP)."""
    a, b, out = tensor("a", 128, 128), tensor("b", 128, 128), tensor("out", 128, 128)
    out2 = Var("out", out.var_type)
    value = make_call("tensor.assemble", [out, make_call("tensor.add", [a, b]), ints(0, 0)])
    scope = InCoreScopeStmt(AssignStmt(out2, value))
    return Program("_jit_add", (orch("add", [a, b, out], [IN, IN, OUT], [scope], out2),))


def chunked_add_program() -> Program:
    a, b, c = tensor("a", 512, 128), tensor("b", 512, 128), tensor("c", 512, 128)
    i = Var("i", ScalarType(DataType.INDEX))
    row = BinaryExpr(BinOp.Mul, i, ConstInt(128), DataType.INDEX)
    vec = {"target_memory": MemorySpace.Vec}
    la = make_call("tile.load", [a, ints(row, 0), ints(128, 128), ints(128, 128)], vec)
    lb = make_call("tile.load", [b, ints(row, 0), ints(128, 128), ints(128, 128)], vec)
    ta, tb = Var("tile_a", la.result_type), Var("tile_b", lb.result_type)
    store = make_call("tile.store", [make_call("tile.add", [ta, tb]), ints(row, 0), c])
    loop = ForStmt(i, ConstInt(0), ConstInt(4), ConstInt(1),
                   SeqStmts((AssignStmt(ta, la), AssignStmt(tb, lb), EvalStmt(store))))
    return Program("_jit_chunked_add", (orch("chunked_add", [a, b, c], [IN, IN, OUT], [InCoreScopeStmt(loop)], c),))


def matmul_acc_program() -> Program:
    a, b, c = tensor("a", 64, 64), tensor("b", 64, 64), tensor("c", 64, 64)
    mat = {"target_memory": MemorySpace.Mat}
    stmts: list = []

    def assign(name: str, call) -> Var:
        v = Var(name, call.result_type)
        stmts.append(AssignStmt(v, call))
        return v

    a0 = assign("tile_a0_l1", make_call("tile.load", [a, ints(0, 0), ints(64, 32), ints(64, 32)], mat))
    b0 = assign("tile_b0_l1", make_call("tile.load", [b, ints(0, 0), ints(32, 64), ints(32, 64)], mat))
    a0l = assign("tile_a0_l0a", make_call("tile.move", [a0], {"target_memory": MemorySpace.Left}))
    b0r = assign("tile_b0_l0b", make_call("tile.move", [b0], {"target_memory": MemorySpace.Right}))
    acc = assign("acc", make_call("tile.matmul", [a0l, b0r]))
    a1 = assign("tile_a1_l1", make_call("tile.load", [a, ints(0, 32), ints(64, 32), ints(64, 32)], mat))
    b1 = assign("tile_b1_l1", make_call("tile.load", [b, ints(32, 0), ints(32, 64), ints(32, 64)], mat))
    a1l = assign("tile_a1_l0a", make_call("tile.move", [a1], {"target_memory": MemorySpace.Left}))
    b1r = assign("tile_b1_l0b", make_call("tile.move", [b1], {"target_memory": MemorySpace.Right}))
    acc1 = assign("acc_v1", make_call("tile.matmul_acc", [acc, a1l, b1r]))
    stmts.append(EvalStmt(make_call("tile.store", [acc1, ints(0, 0), c])))
    scope = InCoreScopeStmt(SeqStmts(tuple(stmts)))
    return Program("_jit_matmul_acc_64", (orch("matmul_acc_64", [a, b, c], [IN, IN, OUT], [scope], c),))


def _kernel(name: str, params: list[Var], dirs: list[ParamDirection], build) -> Function:
    stmts: list = []

    def assign(vname: str, call) -> Var:
        v = Var(vname, call.result_type)
        stmts.append(AssignStmt(v, call))
        return v

    ret = build(assign, stmts)
    stmts.append(ReturnStmt((ret,)))
    return Function(name, tuple(params), tuple(dirs), (ret.var_type,), SeqStmts(tuple(stmts)), FunctionType.InCore)


def swiglu_program() -> Program:
    """ffn_swiglu's vector kernel (gate * sigmoid(gate) * up) called once from an orchestration."""
    gate, up, out = tensor("gate", 64, 64), tensor("up", 64, 64), tensor("output", 64, 64)
    vec = {"target_memory": MemorySpace.Vec}

    def build(assign, stmts):
        g = assign("tile_gate", make_call("tile.load", [gate, ints(0, 0), ints(64, 64), ints(64, 64)], vec))
        u = assign("tile_up", make_call("tile.load", [up, ints(0, 0), ints(64, 64), ints(64, 64)], vec))
        from pypto.ir import ConstFloat
        neg = assign("gate_neg", make_call("tile.muls", [g, ConstFloat(-1.0)]))
        e = assign("exp_neg", make_call("tile.exp", [neg]))
        d = assign("denom", make_call("tile.adds", [e, ConstFloat(1.0)]))
        s = assign("sigmoid", make_call("tile.recip", [d]))
        sw = assign("swish", make_call("tile.mul", [g, s]))
        r = assign("result", make_call("tile.mul", [sw, u]))
        stmts.append(EvalStmt(make_call("tile.store", [r, ints(0, 0), out])))
        return out

    kernel = _kernel("swiglu_kernel", [gate, up, out], [IN, IN, OUT], build)
    a, b, o = tensor("a", 64, 64), tensor("b", 64, 64), tensor("o", 64, 64)
    from pypto.ir import GlobalVar
    from pypto.ir.expr import Call
    res = Var("o_v1", o.var_type)
    call = Call(GlobalVar("swiglu_kernel"), (a, b, o), result_type=o.var_type)
    return Program("_jit_swiglu", (kernel, orch("ffn", [a, b, o], [IN, IN, OUT], [AssignStmt(res, call)], res)))


def big_vec_program(rows: int) -> Program:
    """One vector kernel with three live [rows, 128] fp32 tiles (for capacity tests)."""
    a, b, out = tensor("a", rows, 128), tensor("b", rows, 128), tensor("out", rows, 128)
    vec = {"target_memory": MemorySpace.Vec}

    def build(assign, stmts):
        x = assign("x", make_call("tile.load", [a, ints(0, 0), ints(rows, 128), ints(rows, 128)], vec))
        y = assign("y", make_call("tile.load", [b, ints(0, 0), ints(rows, 128), ints(rows, 128)], vec))
        z = assign("z", make_call("tile.add", [x, y]))
        w = assign("w", make_call("tile.mul", [z, x]))
        stmts.append(EvalStmt(make_call("tile.store", [w, ints(0, 0), out])))
        return out

    kernel = _kernel("big", [a, b, out], [IN, IN, OUT], build)
    return Program("_jit_big", (kernel,))
