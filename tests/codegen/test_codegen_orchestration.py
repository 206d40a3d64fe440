"""Orchestration C++, kernel_config.py and compiled_meta.json."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import irbuild as B
import pytest
from ptocheck import REPO, SHARED

from pypto.artifact import ArtifactMeta, render_kernel_config
from pypto.codegen import generate
from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import FunctionType
from pypto.ir.expr import ConstFloat, ConstInt, TupleGetItem, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, ReturnStmt, RuntimeScopeStmt, seq
from pypto.ir.types import ScalarType, TupleType

REF = SHARED / "reference" / "upstream-pypto"
HEADER_DIR = REPO / "pypto" / "runtime" / "sim" / "include"


def _gen(program):
    return generate(program, backend_type="Ascend910B", platform="a2a3sim", runtime="tensormap_and_ringbuffer")


@pytest.mark.parametrize(("ref", "build", "orch"), [
    ("add", B.add_program, "add"),
    ("ffn_swiglu", B.ffn_swiglu_program, "ffn_swiglu"),
    ("elementwise_chunked_add", B.chunked_add_program, "chunked_add"),
    ("softmax", B.softmax_program, "tile_softmax"),
    ("matmul", B.matmul_program, "matmul_64"),
    ("matmul_acc", lambda: B.matmul_program(2), "matmul_acc_64"),
])
def test_orchestration_matches_reference(ref, build, orch):
    golden = REF / ref / "orchestration" / f"{orch}.cpp"
    if not golden.is_file():
        pytest.skip(f"reference artifacts absent ({golden})")
    assert _gen(build()).files[f"orchestration/{orch}.cpp"] == golden.read_text()


@pytest.mark.parametrize(("ref", "build"), [("add", B.add_program), ("ffn_swiglu", B.ffn_swiglu_program)])
def test_compiled_meta_matches_reference_schema(ref, build):
    golden = REF / ref / "compiled_meta.json"
    if not golden.is_file():
        pytest.skip("reference artifacts absent")
    ours = ArtifactMeta.from_program(build(), platform="a2a3sim", backend_type="Ascend910B",
                                     runtime="tensormap_and_ringbuffer", toolchain=None).to_json()
    assert ours.pop("runtime") == "tensormap_and_ringbuffer" and ours.pop("toolchain") is None
    assert ours == json.loads(golden.read_text())


def test_codegen_leaves_the_metadata_to_the_driver():
    assert "compiled_meta.json" not in _gen(B.add_program()).files


def test_func_ids_first_seen_and_kernel_config():
    art = _gen(B.ffn_swiglu_program())
    assert [(f.func_id, f.name, f.core) for f in art.func_ids] == [(0, "matmul_kernel", "aic"), (1, "swiglu_kernel", "aiv")]
    text = render_kernel_config("ffn_swiglu", art.func_ids, runtime=art.runtime,
                                orch_signature=art.orch_signatures["ffn_swiglu"])
    assert "from pypto.artifact.kernel_config import ArgDirection as _D" in text
    ns: dict = {"__file__": "/x/kernel_config.py"}
    exec(compile(text, "kernel_config.py", "exec"), ns)  # noqa: S102
    assert ns["RUNTIME_CONFIG"] == {"runtime": "tensormap_and_ringbuffer", "aicpu_thread_num": 0}
    assert [k["name"] for k in ns["KERNELS"]] == ["matmul_kernel", "swiglu_kernel"]
    assert ns["KERNELS"][0]["source"].endswith("kernels/aic/matmul_kernel.cpp")
    assert [int(d) for d in ns["ORCHESTRATION"]["signature"]] == [1, 1, 1, 1, 2]


def _loop_scalar_program() -> Program:
    """A loop over chunks with a float scalar, a dynamic dim, a dependency and a manual scope."""
    m = Var("M", ScalarType(DataType.INDEX))
    alpha = Var("alpha__ssa_v0", ScalarType(DataType.FP32))
    kp = [B.tensor("x", (m, 64)), B.tensor("y", (m, 64), ddr=1), Var("s", ScalarType(DataType.FP32))]
    k = B.kernel("scale", kp, [B.IN, B.OUT, B.IN], B.Body().ret(kp[1]))
    x, y = B.tensor("x__ssa_v0", (m, 64)), B.tensor("y__ssa_v0", (m, 64), ddr=1)
    i = Var("i__idx_v0", ScalarType(DataType.INDEX))
    tid_t = ScalarType(DataType.TASK_ID)
    r1 = Var("r1", TupleType((y.type, tid_t)))
    tid = Var("tid", tid_t)
    c1 = B.call_kernel(k, [x, y, alpha], [B.AIN, B.AOUT, B.ArgDirection.Scalar], r1.type)
    c2 = B.call_kernel(k, [x, y, ConstFloat(0.5)], [B.AIN, B.AOUT, B.ArgDirection.Scalar], y.type)
    c2 = type(c2)(c2.op, c2.args, {}, {**c2.attrs, "deps": [tid]}, c2.result_type)
    body = RuntimeScopeStmt(seq([AssignStmt(r1, c1), AssignStmt(tid, TupleGetItem(r1, 1)), EvalStmt(c2)]),
                            manual=True)
    loop = ForStmt(i, ConstInt(0), m, ConstInt(64), body)
    orch = Function("scale_orch", (x, y, alpha), (B.IN, B.OUT, B.IN), (y.type,),
                    RuntimeScopeStmt(seq([loop, ReturnStmt((y,))])), FunctionType.Orchestration)
    return Program("p", (k, orch))


def test_loops_scalars_dims_deps_manual_scope():
    cpp = _gen(_loop_scalar_program()).files["orchestration/scale_orch.cpp"]
    for frag in (
        "union { uint64_t u64; float val; } alpha_conv;",
        "alpha_conv.u64 = orch_args.scalar(0);",
        "int64_t M = (int64_t)orch_args.tensor(0).ref().shapes[0];",
        "for (int64_t i = 0; i < M; i += 64) {",
        "PTO2_SCOPE(PTO2ScopeMode::MANUAL) {",
        "params_t0.add_scalar(to_u64((float)alpha));",
        "TaskOutputTensors task_0_outs = rt_submit_aiv_task(0, params_t0);",
        "PTO2TaskId params_t1_deps[1] = {task_0_outs.task_id()};",
        "params_t1.set_dependencies(params_t1_deps, 1);",
        "params_t1.add_scalar(to_u64(0.5f));",
        ".expected_arg_count = 3,",
    ):
        assert frag in cpp, frag


def _group_program() -> Program:
    a = B.tensor("a", (64, 64))
    cube = B.kernel("g_aic", [a], [B.IN], B.Body().ret(), FunctionType.AIC)
    vec = B.kernel("g_aiv", [a], [B.IN], B.Body().ret())
    ga = B.tensor("a", (64, 64))
    gbody = seq([EvalStmt(B.call_kernel(cube, [ga], [B.AIN], ga.type)),
                 EvalStmt(B.call_kernel(vec, [ga], [B.AIN], ga.type)), ReturnStmt(())])
    group = Function("grp", (ga,), (B.IN,), (), gbody, FunctionType.Group)
    oa = B.tensor("a__ssa_v0", (64, 64))
    orch = B.orchestration("o", [oa], [B.IN], [EvalStmt(B.call_kernel(group, [oa], [B.AIN], oa.type))])
    return Program("p", (cube, vec, group, orch))


def test_group_is_mixed_submission_and_one_unit():
    art = _gen(_group_program())
    cpp = art.files["orchestration/o.cpp"]
    assert "MixedKernels mixed_0 = {0, 1, INVALID_KERNEL_ID};" in cpp
    assert "rt_submit_task(mixed_0, params_t0);" in cpp
    assert [(u.name, [f.name for f in u.funcs]) for u in art.units] == [("grp", ["g_aic", "g_aiv"])]


def test_misplaced_tensor_op_is_rejected():
    x = B.tensor("x__ssa_v0", (64, 64))
    y = Var("y", x.type)
    orch = B.orchestration("o", [x], [B.IN], [AssignStmt(y, make_call("tensor.exp", [x]))])
    with pytest.raises(UserError, match=r"Misplaced tensor op 'tensor.exp' in Orchestration function"):
        _gen(Program("p", (orch,)))


def _gxx() -> str:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not available")
    if not (HEADER_DIR / "pto_orchestration_api.h").is_file():
        pytest.skip("runtime header pto_orchestration_api.h not written yet")
    return gxx


@pytest.mark.parametrize("build", [B.add_program, B.ffn_swiglu_program, _loop_scalar_program, _group_program])
def test_orchestration_compiles_with_gxx(build, tmp_path):
    gxx = _gxx()
    for rel, text in _gen(build()).files.items():
        if rel.endswith(".cpp"):
            src = tmp_path / Path(rel).name
            src.write_text(text)
            argv = [gxx, "-std=c++17", "-fsyntax-only", "-Wall", f"-I{HEADER_DIR}", str(src)]
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            assert proc.returncode == 0, f"{' '.join(argv)}\n{proc.stderr}"
