"""PTO MLIR codegen for the ptoas 0.1.1 dialect: structure, rules, rejections, and the dialect checker."""

from __future__ import annotations

import re

import irbuild as B
import pytest
from ptocheck import verify, verify_text

from pypto.codegen import generate
from pypto.codegen.pto_module import emit_module
from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, BinOp, ConstFloat, ConstInt, Var
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, seq
from pypto.ir.types import ScalarType, TensorType, TileType, TileView

PROGRAMS = {
    "add": B.add_program,
    "chunked_add": B.chunked_add_program,
    "softmax": B.softmax_program,
    "matmul": B.matmul_program,
    "matmul_acc": lambda: B.matmul_program(2),
    "ffn_swiglu": B.ffn_swiglu_program,
}


def _pto(program, **kw) -> str:
    art = generate(program, backend_type=kw.pop("backend_type", "Ascend910B"), platform="a2a3sim",
                   runtime="tensormap_and_ringbuffer", **kw)
    return "\n".join(u.pto for u in art.units)


def _kernel_text(stmts_builder, params, dirs, name="k") -> str:
    f = B.kernel(name, params, dirs, stmts_builder)
    text, _ = emit_module([f], backend_type="Ascend910B", emit_loc=False)
    return text


def test_add_module_structure():
    text = _pto(B.add_program())
    assert text.startswith('module attributes {"pto.device-spec" = "Ascend910B1"} {\n')
    assert "func.func @add_incore_0(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>) {" in text
    assert "shape = [%c128, %c128] strides = [%c128, %c1] : !pto.tensor_view<2xf32>" in text
    assert "-> !pto.tile_view<128x128xf32>" in text
    # a__tile and t__tile share one MemRef in the planner's output -> one alloc_tile, in-place tadd
    assert text.count("pto.alloc_tile") == 2
    assert re.search(r"pto\.tadd ins\(%a, %b : .*\) outs\(%a : ", text)
    assert 'loc("k.py":4:9)' in text
    assert "pto.target_arch" not in text and "partition_view" not in text and "loc=vec" not in text


def test_emit_source_loc_off():
    assert "loc(" not in _pto(B.add_program(), emit_source_loc=False).replace("loc=", "")


def test_ascend950_device_spec():
    assert '"pto.device-spec" = "Ascend910_9599"' in _pto(B.add_program(), backend_type="Ascend950")


@pytest.mark.ptoas
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reference_kernels_pass_checker(name, tmp_path):
    art = generate(PROGRAMS[name](), backend_type="Ascend910B", platform="a2a3sim", runtime="tensormap_and_ringbuffer")
    paths = []
    for u in art.units:
        p = tmp_path / f"{u.name}.pto"
        p.write_text(u.pto)
        paths.append(p)
    verify(*paths)


def test_softmax_drops_unused_tmp_and_uses_col_major_row_vector():
    text = _pto(B.softmax_program())
    assert re.search(r"pto\.trowmax ins\(%tile_a : !pto\.tile_buf<[^>]*>\) outs", text)
    assert "rows=64, cols=1, v_row=64, v_col=1, blayout=col_major" in text
    assert "texpands" not in text  # the never-read tmp tiles are not filled


def test_matmul_path():
    text = _pto(B.matmul_program(2))
    for frag in ("loc=mat", "loc=left", "loc=right", "loc=acc", "fractal=1024", "pto.tmov ins(",
                 "pto.tmatmul ins(", "pto.tmatmul.acc ins(%acc0, "):
        assert frag in text


def _vec_tile(shape, dtype=DataType.FP32, valid=None):
    view = TileView(valid_shape=valid) if valid is not None else None
    return TileType(tuple(shape), dtype, view=view, memory_space=MemorySpace.Vec)


def _elementwise(op_builder, dtype=DataType.FP32, extra_params=()):
    """x -> op_builder(body, tile) -> out, for a 32x64 tile."""
    x, o = B.tensor("x", (32, 64), dtype), B.tensor("out", (32, 64), dtype, ddr=1)
    b = B.Body()
    t = b.assign("t", make_call("tile.load", [x, B.ints(0, 0), B.ints(32, 64)], B.VEC))
    r = op_builder(b, t)
    b.eval(make_call("tile.store", [r, B.ints(0, 0), o]))
    params = [x, o, *extra_params]
    dirs = [B.IN, B.OUT] + [B.IN] * len(extra_params)
    return _kernel_text(b.ret(o), params, dirs)


SCALAR_CASES = {
    "adds_f16": (DataType.FP16, lambda b, t: b.assign("r", make_call("tile.adds", [t, ConstFloat(1.5)])),
                 "pto.tadds ins(%t, %cst_f16 : !pto.tile_buf<loc=ub, dtype=f16"),
    "muls_f16_scalar_is_f32": (DataType.FP16, lambda b, t: b.assign("r", make_call("tile.muls", [t, ConstFloat(2.0)])),
                               ", f32) outs("),
    "divs_f16": (DataType.FP16, lambda b, t: b.assign("r", make_call("tile.divs", [t, ConstFloat(2.0)])), ", f16) outs("),
    "maximums_lowered": (DataType.FP32, lambda b, t: b.assign("r", make_call("tile.maximums", [t, ConstFloat(0.0)])),
                         "pto.texpands ins(%cst_f32 : f32) outs(%maxs_tmp"),
    "minimums_untyped": (DataType.FP32, lambda b, t: b.assign("r", make_call("tile.minimums", [t, ConstFloat(6.0)])),
                         "pto.tmins ins(%t : !pto.tile_buf<"),
    "cast_f32_to_f16": (DataType.FP32, None, "{rmode = #pto<round_mode ROUND>}"),
}


@pytest.mark.ptoas
@pytest.mark.parametrize("case", sorted(SCALAR_CASES))
def test_scalar_and_cast_rules(case, tmp_path):
    dtype, build, frag = SCALAR_CASES[case]
    if build is None:  # cast: f32 in, f16 out
        x, o = B.tensor("x", (32, 64)), B.tensor("out", (32, 64), DataType.FP16, ddr=1)
        b = B.Body()
        t = b.assign("t", make_call("tile.load", [x, B.ints(0, 0), B.ints(32, 64)], B.VEC))
        r = b.assign("h", make_call("tile.cast", [t], {"target_type": DataType.FP16}))
        b.eval(make_call("tile.store", [r, B.ints(0, 0), o]))
        text = _kernel_text(b.ret(o), [x, o], [B.IN, B.OUT])
    else:
        text = _elementwise(build, dtype)
    assert frag in text
    verify_text(tmp_path, case, text)


REDUCE_CASES = {
    "row_min_tmp_filled": ("tile.row_min", "pto.trowmin ins(%t, %red_tmp"),
    "col_sum_tmp": ("tile.col_sum", "pto.tcolsum ins(%t, %red_tmp"),
}


@pytest.mark.ptoas
@pytest.mark.parametrize("op", ["tile.col_max", "tile.col_min"])
def test_col_max_min_fold_rows_because_ptoas_miscompiles_tcolmax(op, tmp_path):
    x, o = B.tensor("x", (32, 64)), B.tensor("out", (1, 64), ddr=1)
    b = B.Body()
    t = b.assign("t", make_call("tile.load", [x, B.ints(0, 0), B.ints(32, 64)], B.VEC))
    r = b.assign("r", make_call(op, [t]))
    b.eval(make_call("tile.store", [r, B.ints(0, 0), o]))
    text = _kernel_text(b.ret(o), [x, o], [B.IN, B.OUT])
    assert "pto.tcolm" not in text and "pto.textract" in text and "scf.for" in text
    verify_text(tmp_path, op.replace(".", "_"), text)


@pytest.mark.ptoas
@pytest.mark.parametrize("case", sorted(REDUCE_CASES))
def test_reductions(case, tmp_path):
    op, frag = REDUCE_CASES[case]
    col = op.startswith("tile.col")
    rshape = (1, 64) if col else (32, 1)
    x, o = B.tensor("x", (32, 64)), B.tensor("out", rshape, ddr=1)
    b = B.Body()
    t = b.assign("t", make_call("tile.load", [x, B.ints(0, 0), B.ints(32, 64)], B.VEC))
    r = b.assign("r", make_call(op, [t]))
    b.eval(make_call("tile.store", [r, B.ints(0, 0), o]))
    text = _kernel_text(b.ret(o), [x, o], [B.IN, B.OUT])
    assert frag in text
    if "tmp" in frag:
        assert "pto.texpands" in text  # scratch written before the read (ptoas aborts otherwise)
    verify_text(tmp_path, case, text)


@pytest.mark.ptoas
@pytest.mark.parametrize("given_tmp", [True, False])
def test_col_sum_with_a_scratch_tile_is_the_binary_tree(given_tmp, tmp_path):
    """As upstream: ``col_sum(t, tmp)`` is the binary-tree sum, which pypto writes out (row pairs side by side
    by ``treshape``, halves extracted and added: 0.1.1 drops TCOLSUM's ``isBinary``); ``col_sum(t)`` is the
    sequential TCOLSUM (0.1.1 wants a scratch tile, so pypto supplies one)."""
    x, o = B.tensor("x", (32, 64)), B.tensor("out", (1, 64), ddr=1)
    b = B.Body()
    t = b.assign("t", make_call("tile.load", [x, B.ints(0, 0), B.ints(32, 64)], B.VEC))
    args = [t]
    if given_tmp:
        args.append(b.assign("scratch", make_call("tile.load", [x, B.ints(0, 0), B.ints(32, 64)], B.VEC)))
    r = b.assign("r", make_call("tile.col_sum", args))
    b.eval(make_call("tile.store", [r, B.ints(0, 0), o]))
    text = _kernel_text(b.ret(o), [x, o], [B.IN, B.OUT])
    assert ("pto.tcolsum" in text) != given_tmp and "isBinary" not in text
    assert (text.count("pto.treshape") == 5) == given_tmp  # 32 rows: five levels
    verify_text(tmp_path, f"col_sum_binary_{given_tmp}", text)


@pytest.mark.ptoas
@pytest.mark.parametrize("op", ["tile.row_expand_add", "tile.row_expand_max", "tile.row_expand_expdif",
                                "tile.col_expand_sub", "tile.col_expand_mul"])
def test_expand_lowerings(op, tmp_path):
    col = op.startswith("tile.col")
    vshape = (1, 64) if col else (32, 1)
    x, v, o = B.tensor("x", (32, 64)), B.tensor("v", vshape, ddr=1), B.tensor("out", (32, 64), ddr=2)
    b = B.Body()
    t = b.assign("t", make_call("tile.load", [x, B.ints(0, 0), B.ints(32, 64)], B.VEC))
    tv = b.assign("tv", make_call("tile.load", [v, B.ints(0, 0), B.ints(*vshape)], B.VEC))
    r = b.assign("r", make_call(op, [t, tv]))
    b.eval(make_call("tile.store", [r, B.ints(0, 0), o]))
    text = _kernel_text(b.ret(o), [x, v, o], [B.IN, B.IN, B.OUT])
    verify_text(tmp_path, op.replace(".", "_"), text)


@pytest.mark.ptoas
def test_dynamic_rows_loop_and_valid_shape(tmp_path):
    m = Var("M", ScalarType(DataType.INDEX))
    n_blocks = Var("n_blocks", ScalarType(DataType.INDEX))
    vr = Var("valid_rows", ScalarType(DataType.INDEX))
    x, o = B.tensor("x", (m, 64)), B.tensor("out", (m, 64), ddr=1)
    top, body = B.Body(), B.Body()
    i = Var("i", ScalarType(DataType.INDEX))
    row = BinaryExpr(BinOp.Mul, i, ConstInt(32), DataType.INDEX)
    ttype = _vec_tile((32, 64), valid=(vr, 64))
    t = body.assign("t", make_call("tile.load", [x, B.ints(row, 0), B.ints(32, 64), B.ints(vr, 64)], B.VEC))
    t = Var("t2", ttype)
    body.stmts[-1] = type(body.stmts[-1])(t, body.stmts[-1].value)
    r = body.assign("r", make_call("tile.exp", [t]))
    r = Var("r2", ttype)
    body.stmts[-1] = type(body.stmts[-1])(r, body.stmts[-1].value)
    body.eval(make_call("tile.store", [r, B.ints(row, 0), o]))
    top.stmts.append(ForStmt(i, ConstInt(0), n_blocks, ConstInt(1), seq(body.stmts)))
    text = _kernel_text(top.ret(o), [x, o, n_blocks, vr], [B.IN, B.OUT, B.IN, B.IN])
    assert "%arg2: index, %arg3: index, %arg4: index" in text
    assert "v_row=?, v_col=64" in text and "valid_row = %arg3" in text
    assert "scf.for %i = %c0 to %arg2 step %c1 {" in text
    assert "-> !pto.tile_view<?x64xf32>" in text
    verify_text(tmp_path, "dyn", text)


@pytest.mark.ptoas
def test_scf_if_on_index_compare(tmp_path):
    flag = Var("k", ScalarType(DataType.INDEX))
    x, o = B.tensor("x", (32, 64)), B.tensor("out", (32, 64), ddr=1)
    b, then_b = B.Body(), B.Body()
    t = b.assign("t", make_call("tile.load", [x, B.ints(0, 0), B.ints(32, 64)], B.VEC))
    then_b.eval(make_call("tile.store", [t, B.ints(0, 0), o]))
    cond = BinaryExpr(BinOp.Eq, flag, ConstInt(0), DataType.BOOL)
    b.stmts.append(IfStmt(cond, seq(then_b.stmts)))
    text = _kernel_text(b.ret(o), [x, o, flag], [B.IN, B.OUT, B.IN])
    assert "arith.cmpi eq, %arg2, %c0 : index" in text and "scf.if %cond {" in text
    verify_text(tmp_path, "if", text)


def _reject(build, *fragments):
    with pytest.raises(UserError) as ei:
        build()
    msg = str(ei.value)
    for f in fragments:
        assert f in msg, msg


def test_rejects_fp8_tiles():
    _reject(lambda: _elementwise(lambda b, t: b.assign("r", make_call("tile.exp", [t])), DataType.FP8E4M3FN),
            "FP8E4M3FN", "ptoas 0.1.1", "pl.FP16 or pl.FP32")


def test_rejects_sin():
    x, o = B.tensor("x", (32, 64)), B.tensor("out", (32, 64), ddr=1)

    def build():
        b = B.Body()
        t = b.assign("t", make_call("tile.load", [x, B.ints(0, 0), B.ints(32, 64)], B.VEC))
        b.assign("r", make_call("tile.sin", [t]))
        return _kernel_text(b.ret(o), [x, o], [B.IN, B.OUT])

    _reject(build, "tile.sin", "ptoas 0.1.1", "hint")


def test_rejects_non_lowerable_scalar_arith_and_cast_loop_bound():
    n = Var("n", ScalarType(DataType.INDEX))
    n32 = Var("n32", ScalarType(DataType.INT32))
    x, o = B.tensor("x", (512, 64)), B.tensor("out", (512, 64), ddr=1)

    def loop(stop, off):
        def build():
            top, body = B.Body(), B.Body()
            bound = stop
            if stop == "local":  # an i32 computed inside the kernel
                bound = Var("m", ScalarType(DataType.INT32))
                top.stmts.append(AssignStmt(bound, BinaryExpr(BinOp.Mul, n32, ConstInt(2, DataType.INT32),
                                                              DataType.INT32)))
            i = Var("i", ScalarType(DataType.INDEX))
            t = body.assign("t", make_call("tile.load", [x, B.ints(off(i), 0), B.ints(32, 64)], B.VEC))
            body.eval(make_call("tile.store", [t, B.ints(0, 0), o]))
            top.stmts.append(ForStmt(i, ConstInt(0), bound, ConstInt(1), seq(body.stmts)))
            return _kernel_text(top.ret(o), [x, o, n, n32], [B.IN, B.OUT, B.IN, B.IN])
        return build

    _reject(loop(n, lambda i: BinaryExpr(BinOp.FloorDiv, i, n, DataType.INDEX)), "arith.floordivsi", "ptoas 0.1.1")
    _reject(loop("local", lambda i: i), "index_cast", "pl.INDEX")
    assert "scf.for" in loop(n32, lambda i: i)()  # an i32 parameter used directly as the bound arrives as index
    text = loop(n, lambda i: BinaryExpr(BinOp.Sub, n, i, DataType.INDEX))()  # n - i -> addi(n, muli(i, -1))
    assert "arith.muli %i, %cn1 : index" in text and "arith.subi" not in text


def test_rejects_read_of_unwritten_acc_tile():
    a, c = B.tensor("a", (64, 64)), B.tensor("c", (64, 64), ddr=1)

    def build():
        b = B.Body()
        acc = b.assign("acc", make_call("tile.create", [B.ints(64, 64)], {"dtype": DataType.FP32,
                                                                          "target_memory": MemorySpace.Acc}))
        b.eval(make_call("tile.store", [acc, B.ints(0, 0), c]))
        return _kernel_text(b.ret(c), [a, c], [B.IN, B.OUT])

    _reject(build, "read before anything writes it", "ptoas 0.1.1")


def test_unknown_op_names_op_and_toolchain():
    x, o = B.tensor("x", (32, 64)), B.tensor("out", (16, 64), ddr=1)

    def build():
        b = B.Body()
        t = b.assign("t", make_call("tile.load", [x, B.ints(0, 0), B.ints(32, 64)], B.VEC))
        b.assign("s", make_call("tile.read", [t, B.ints(1, 2)]))  # no scalar load from a tile in 0.1.1
        return _kernel_text(b.ret(o), [x, o], [B.IN, B.OUT])

    _reject(build, "tile.read", "ptoas 0.1.1")


def test_rank3_tensor_is_viewed_flat_unless_a_dim_after_the_first_is_dynamic():
    x = Var("x", TensorType((2, 32, 64), DataType.FP32))
    assert "shape = [%c64, %c64]" in _kernel_text(B.Body().ret(x), [x], [B.IN])
    n = Var("n", ScalarType(DataType.INDEX))
    y = Var("y", TensorType((n, 32, 64), DataType.FP32))  # a run-time first dim: n * 32 rows
    text = _kernel_text(B.Body().ret(y), [y, n], [B.IN, B.IN])
    assert "arith.muli" in text and "shape = [%c64, %c64]" not in text
    z = Var("z", TensorType((2, n, 64), DataType.FP32))
    _reject(lambda: _kernel_text(B.Body().ret(z), [z, n], [B.IN, B.IN]), "rank 3", "dims after the first")


def test_file_prefix_map_rewrites_loc_paths():
    # Spans name "k.py" (a relative path); map it as a whole component and leave other paths alone.
    text = _pto(B.add_program(), file_prefix_map=(("k.py", "/home/me/k.py"),))
    assert 'loc("/home/me/k.py":4:9)' in text and 'loc("k.py"' not in text
    assert _pto(B.add_program(), file_prefix_map=(("k", "/x"),)) == _pto(B.add_program())


def test_a_load_from_a_tensor_that_is_not_a_kernel_parameter_is_a_located_error():
    """A tensor-typed local the codegen has no GM view of (here one whose definition a pass dropped)."""
    x = B.tensor("x__ssa_v0", (16, 64))
    b = B.Body()
    m = b.alloc(MemorySpace.Vec, 16 * 64 * 4)
    local = Var("blk__ssa_v0", TensorType((8, 128), DataType.FP32))
    b.assign("lo__tile", make_call("tile.load", [local, B.ints(0, 0), B.ints(8, 64), B.ints(8, 64)], B.VEC), m,
             line=7)
    with pytest.raises(UserError) as ei:
        _kernel_text(b.ret(x), [x], [B.IN])
    assert "reads GM through 'blk', which is not a tensor parameter of the kernel" in ei.value.message
    assert ei.value.span.line == 7
    assert "tile.slice" in (ei.value.hint or "")
