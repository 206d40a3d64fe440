"""run_pto: hand-written .pto kernels (the spec examples) on a2a3sim/a5sim vs numpy; signature parsing; errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rt_marks import needs_gxx

from pypto.errors import ToolchainError, UserError
from pypto.flows import pto_runner as runner
from pypto.flows.pto_file import infer_core, parse_pto, single_function_text
from pypto.runtime import ChipWorker, RunConfig, prepare_pto, run_pto
from pypto.toolchain.ptoas import find_ptoas

PTO = Path(__file__).resolve().parents[1] / "sim_isa" / "pto"
ADD, SOFTMAX = PTO / "kernel_add_128x128_f32.pto", PTO / "kernel_softmax_rows_64x128_f32.pto"
MATMUL, CATALOGUE = PTO / "kernel_matmul_f16_64x64_f32acc.pto", PTO / "catalogue.pto"
needs_ptoas = pytest.mark.skipif(find_ptoas() is None, reason="needs the pinned ptoas")


def running(test):
    """Marks of a test that assembles with ptoas, builds with g++ and runs on the simulator."""
    for mark in (needs_gxx, needs_ptoas, pytest.mark.sim, pytest.mark.ptoas):
        test = mark(test)
    return test


# y[r, :] = x[r, :] + s for r < n: n is a dynamic dimension (an index view extent), s a scalar
SCALE_ROWS = """\
!t = !pto.tile_buf<loc=ub, dtype=f32, rows=32, cols=32, v_row=32, v_col=32, blayout=row_major, slayout=none_box, \
fractal=512, pad=0>
!v = !pto.tile_view<32x32xf32>
!g = !pto.tensor_view<2xf32>
module {
  func.func @scale_rows(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %n: index, %s: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %gx = pto.make_tensor_view %x, shape = [%n, %c32] strides = [%c32, %c1] : !g
    %gy = pto.make_tensor_view %y, shape = [%n, %c32] strides = [%c32, %c1] : !g
    scf.for %r = %c0 to %n step %c32 {
      %t = pto.alloc_tile : !t
      %vx = pto.subview %gx, offsets = [%r, %c0], sizes = [%c32, %c32] : !g -> !v
      %vy = pto.subview %gy, offsets = [%r, %c0], sizes = [%c32, %c32] : !g -> !v
      pto.tload ins(%vx : !v) outs(%t : !t)
      pto.tadds ins(%t, %s : !t, f32) outs(%t : !t)
      pto.tstore ins(%t : !t) outs(%vy : !v)
    }
    return
  }
}
"""


@pytest.fixture
def scale_rows(tmp_path: Path) -> Path:
    path = tmp_path / "scale_rows.pto"
    path.write_text(SCALE_ROWS)
    return path


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# -- signatures (no toolchain needed) ---------------------------------------------------------------

def test_signature_of_spec_examples() -> None:
    sig = parse_pto(ADD.read_text(), ADD)
    assert (sig.func, sig.core) == ("add_128x128_f32", "aiv")
    assert [(a.name, a.kind, a.dtype, a.shape) for a in sig.args] == [
        ("x", "tensor", "fp32", (128, 128)), ("y", "tensor", "fp32", (128, 128)), ("z", "tensor", "fp32", (128, 128))]
    mm = parse_pto(MATMUL.read_text(), MATMUL)
    assert mm.core == "aic" and [a.dtype for a in mm.args] == ["fp16", "fp16", "fp32"]
    assert parse_pto(MATMUL.read_text(), MATMUL, core="aiv").core == "aiv"


def test_dynamic_dims_and_scalars(scale_rows: Path) -> None:
    sig = parse_pto(SCALE_ROWS, scale_rows)
    kinds = {a.name: (a.kind, a.dim_of) for a in sig.args}
    assert kinds == {"x": ("tensor", None), "y": ("tensor", None), "n": ("dyn_dim", (0, 0)), "s": ("scalar", None)}
    assert sig.tensors[0].shape == (None, 32)
    assert [a.name for a in sig.user_args] == ["x", "y", "s"]
    dyn = PTO / "dynamic_rows_f32.pto"  # i32 extents cast to index stay scalars the caller passes
    assert [a.kind for a in parse_pto(dyn.read_text(), dyn).args] == ["tensor", "tensor"] + ["scalar"] * 4


def test_multi_function_file_needs_func() -> None:
    text = CATALOGUE.read_text()
    with pytest.raises(UserError, match=r"defines 3 functions \(vector_ops, matmul_ops, runtime_ops\)"):
        parse_pto(text, CATALOGUE)
    with pytest.raises(UserError, match="no function @nope; the file defines @vector_ops"):
        parse_pto(text, CATALOGUE, "nope")
    assert parse_pto(text, CATALOGUE, "matmul_ops").core == "aic"
    assert parse_pto(text, CATALOGUE, "vector_ops").core == "aiv"
    only = single_function_text(text, "matmul_ops")
    assert "@vector_ops" not in only and "@matmul_ops" in only and only.count("\n") == text.count("\n")


def test_core_inference_follows_aliases() -> None:
    text = "!a = !pto.tile_buf<loc=acc, dtype=f32>\n!u = !pto.tile_buf<loc=ub, dtype=f32>\n"
    assert infer_core(text, "%0 = pto.alloc_tile : !a") == "aic"
    assert infer_core(text, "%0 = pto.alloc_tile : !u") == "aiv"


def test_bad_signatures(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        run_pto(tmp_path / "missing.pto")
    bad = tmp_path / "bad.pto"
    bad.write_text("module {\n  func.func @k(%x: memref<4xf32>) {\n    return\n  }\n}\n")
    with pytest.raises(UserError, match=r"argument %x has type memref<4xf32>, which cannot be passed"):
        run_pto(bad)
    bad.write_text("module {\n}\n")
    with pytest.raises(UserError, match="no func.func found"):
        run_pto(bad)
    with pytest.raises(UserError, match="core must be 'aiv' or 'aic'"):
        run_pto(ADD, core="cube")


def test_argument_checks_name_the_signature(scale_rows: Path) -> None:
    x = np.zeros((32, 32), np.float32)
    with pytest.raises(UserError, match=r"@scale_rows\(.*\) takes 3 argument\(s\) \(%x, %y, %s\), got 2"):
        run_pto(scale_rows, x, x)
    with pytest.raises(UserError, match="is the scalar %s: f32, got an array"):
        run_pto(scale_rows, x, x, x)
    with pytest.raises(UserError, match="is the tensor %x: !pto.ptr<f32>, got float"):
        run_pto(scale_rows, 1.0, x, 1.0)
    with pytest.raises(UserError, match="needs element type fp32, got fp16"):
        run_pto(scale_rows, x.astype(np.float16), x, 1.0)
    with pytest.raises(UserError, match=r"has shape 32x16, but the kernel's tensor view of it is \?x32"):
        run_pto(scale_rows, np.zeros((32, 16), np.float32), x, 1.0)
    with pytest.raises(UserError, match=r"4 direction\(s\) given for 3 tensor argument\(s\) of @add_128x128_f32"):
        prepare_pto(ADD, directions=["in", "out", "in", "out"])
    with pytest.raises(UserError, match="direction 'sideways' of tensor 'z'"):
        prepare_pto(ADD, directions={"z": "sideways"})
    with pytest.raises(UserError, match="directions name q, which are not tensor arguments"):
        prepare_pto(ADD, directions={"q": "in"})


# -- running ----------------------------------------------------------------------------------------

@running
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_add_and_softmax_match_numpy(platform: str) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((128, 128), np.float32), rng.standard_normal((128, 128), np.float32)
    c = np.zeros_like(a)
    out = run_pto(ADD, a, b, c, platform=platform, directions=["in", "in", "out"])
    assert out is c
    np.testing.assert_allclose(c, a + b, rtol=1e-6, atol=0)
    x = rng.standard_normal((64, 128), np.float32) * 4
    y = np.zeros_like(x)
    x_in, y_out = run_pto(SOFTMAX, x, y, platform=platform)  # default: every tensor inout
    assert x_in is x and y_out is y
    np.testing.assert_allclose(y, _softmax(x), rtol=1e-5, atol=1e-7)
    meta = prepare_pto(ADD, platform=platform, directions=["in", "in", "out"])
    assert (meta.artifact / "kernels" / "aiv" / "add_128x128_f32.cpp").is_file()
    assert meta.artifact.parent.name == "pto" and meta.output_positions == (2,)


@running
def test_matmul_is_an_aic_kernel() -> None:
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal((64, 64)).astype(np.float16) for _ in range(2))
    c = np.zeros((64, 64), np.float32)
    run_pto(MATMUL, a, b, c, directions={"a": "in", "b": "in", "c": "out"})
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-4)
    assert prepare_pto(MATMUL, directions={"a": "in", "b": "in", "c": "out"}).artifact.joinpath(
        "kernels", "aic", "matmul_f16_64x64.cpp").is_file()


@running
def test_dynamic_rows_and_scalar_on_an_active_worker(scale_rows: Path) -> None:
    rng = np.random.default_rng(5)
    with ChipWorker(RunConfig(platform="a5sim")) as worker:
        for n in (32, 96):
            x = rng.standard_normal((n, 32), np.float32)
            y = np.zeros_like(x)
            assert run_pto(scale_rows, x, y, 1.5, platform="a5sim", directions=["in", "out"]) is y
            np.testing.assert_allclose(y, x + np.float32(1.5), rtol=0, atol=0)
            assert worker.last_run.num_tasks == 1


@running
def test_second_prepare_reuses_the_artifact(monkeypatch: pytest.MonkeyPatch) -> None:
    first = prepare_pto(SOFTMAX)
    import pypto.backend.ptoas_stage as stage

    monkeypatch.setattr(stage, "run_ptoas", lambda *a, **k: pytest.fail("ptoas ran again"))
    assert prepare_pto(SOFTMAX).artifact == first.artifact


@needs_ptoas
@pytest.mark.ptoas
def test_ptoas_failure_carries_stderr_and_repro(tmp_path: Path) -> None:
    bad = tmp_path / "broken.pto"
    bad.write_text(SCALE_ROWS.replace("pto.tadds", "pto.taddzz"))
    root = runner.build.cache_root() / "pto"
    before = set(root.iterdir()) if root.is_dir() else set()
    with pytest.raises(ToolchainError) as exc:
        prepare_pto(bad)
    err = exc.value
    assert "ptoas failed on" in err.message and "@scale_rows" in err.message
    assert f'"{bad}":16:7' in err.stderr and "pto.taddzz" in err.stderr
    assert "--enable-insert-sync" in err.repro and Path(err.repro.split()[1]).is_file()
    assert set(root.iterdir()) - before <= {root / "scale_rows.failed"}  # no (partial) artifact dir left
