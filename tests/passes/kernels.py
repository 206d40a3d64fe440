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
