"""`pypto run-pto FILE.pto`: --arg parsing, signature mismatches, exit codes, summaries, --save, --json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner

from pypto.cli._common import ExitCode
from pypto.cli.main import cli
from pypto.cli.run_pto_cmd import parse_arg
from pypto.toolchain.ptoas import find_ptoas

PTO = Path(__file__).resolve().parents[1] / "sim_isa" / "pto"
ADD, SOFTMAX = PTO / "kernel_add_128x128_f32.pto", PTO / "kernel_softmax_rows_64x128_f32.pto"
ADD_ARGS = ("--arg", "x=128x128:f32:in", "--arg", "y=128x128:in", "--arg", "z=128x128:f32:out")
SCALE_ROWS = """\
module {
  func.func @scale_rows(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %n: index, %s: f32) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %gx = pto.make_tensor_view %x, shape = [%n, %c32] strides = [%c32, %c1] : !pto.tensor_view<2xf32>
    %gy = pto.make_tensor_view %y, shape = [%n, %c32] strides = [%c32, %c1] : !pto.tensor_view<2xf32>
    return
  }
}
"""
running = pytest.mark.skipif(find_ptoas() is None or shutil.which("g++") is None, reason="needs ptoas and g++")


@pytest.fixture(autouse=True)
def cli_cache(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """A persistent pytest-cache dir for ptoas shims and sim builds (the runtime library builds once)."""
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(request.config.cache.mkdir("pypto_cli_run_pto")))


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_parse_arg() -> None:
    spec = parse_arg("x=128x64:f16:in")
    assert (spec.name, spec.shape, spec.dtype, spec.direction) == ("x", (128, 64), "fp16", "in")
    assert parse_arg("y=8:inout").direction == "inout" and parse_arg("y=8:inout").dtype is None
    alpha = parse_arg("alpha=2.5:f32")
    assert (alpha.value, alpha.shape, alpha.dtype) == ("2.5", None, "fp32")
    for bad in ("x", "x=1x0", "x=4:f99", "alpha=2.5:in", "=4"):
        with pytest.raises(click.BadParameter):
            parse_arg(bad)


def test_malformed_arg_is_a_usage_error() -> None:
    result = invoke("run-pto", ADD, "--arg", "x=128x128:f99")
    assert result.exit_code == ExitCode.USAGE and "neither a dtype" in result.output


def test_missing_file_is_a_user_error(tmp_path: Path) -> None:
    result = invoke("run-pto", tmp_path / "nope.pto")
    assert result.exit_code == ExitCode.USER and "does not exist" in result.output


@pytest.mark.parametrize(("args", "message"), [
    (("--arg", "x=128x128", "--arg", "y=128x128"), "missing --arg z"),
    ((*ADD_ARGS, "--arg", "w=4"), "unknown --arg w"),
    (("--arg", "a=128x128", "--arg", "y=128x128", "--arg", "z=128x128"), "unknown --arg a; missing --arg x"),
    (("--arg", "x=128x128:f16", "--arg", "y=128x128", "--arg", "z=128x128"), "dtype fp16 does not match %x"),
    (("--arg", "x=2.5", "--arg", "y=128x128", "--arg", "z=128x128"), "%x: !pto.ptr<f32> is a tensor"),
])
def test_signature_mismatch_names_both_sides(args: tuple[str, ...], message: str) -> None:
    result = invoke("run-pto", ADD, *args)
    assert result.exit_code == ExitCode.USER, result.output
    assert message in result.output
    assert "@add_128x128_f32(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %z: !pto.ptr<f32>)" in result.output
    assert "expected: --arg x=128x128:fp32 --arg y=128x128:fp32 --arg z=128x128:fp32" in result.output


def test_dynamic_dim_is_not_an_arg(tmp_path: Path) -> None:
    path = tmp_path / "scale_rows.pto"
    path.write_text(SCALE_ROWS)
    result = invoke("run-pto", path, "--arg", "x=64x32", "--arg", "y=64x32", "--arg", "s=1", "--arg", "n=64")
    assert result.exit_code == ExitCode.USER
    assert "unknown --arg n" in result.output and "n are dynamic dimensions taken from tensor shapes" in result.output
    result = invoke("run-pto", path, "--arg", "x=64x32", "--arg", "y=64x32", "--arg", "s=64x2")
    assert result.exit_code == ExitCode.USER and "%s: f32 is a scalar" in result.output
    result = invoke("run-pto", path)
    assert result.exit_code == ExitCode.USER and "%x needs an --arg" in result.output
    result = invoke("run-pto", path, "--arg", "x=64x32", "--arg", "y=64x32", "--arg", "s=abc")
    assert result.exit_code == ExitCode.USER and "'abc' is not a valid fp32 value for %s" in result.output


@running
def test_ptoas_failure_is_a_toolchain_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pto"
    bad.write_text(ADD.read_text().replace("pto.tadd ", "pto.tnope "))
    result = invoke("run-pto", bad)
    assert result.exit_code == ExitCode.TOOLCHAIN
    assert "ptoas failed on" in result.output and "Repro command:" in result.output and "tnope" in result.output


@running
def test_add_prints_summaries_and_saves_outputs(tmp_path: Path) -> None:
    result = invoke("run-pto", ADD, *ADD_ARGS, "--seed", "7", "--save", tmp_path / "out")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("@add_128x128_f32 (aiv) on a2a3sim: ")
    assert lines[1].split() == ["x", "in", "fp32", "128x128"]
    assert lines[3].split()[:4] == ["z", "out", "fp32", "128x128"] and "mean" in lines[3]
    x, y, z = (np.load(tmp_path / "out" / f) for f in ("x.input.npy", "y.input.npy", "z.npy"))
    np.testing.assert_allclose(z, x + y, rtol=1e-6, atol=0)
    rng = np.random.default_rng(7)
    np.testing.assert_array_equal(x, rng.standard_normal((128, 128)).astype(np.float32))
    assert not (tmp_path / "out" / "x.npy").exists()


@running
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_softmax_json_on_both_platforms(platform: str, tmp_path: Path) -> None:
    result = invoke("run-pto", SOFTMAX, "--platform", platform, "--json", "--save", tmp_path)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ok"] and data["command"] == "run-pto" and data["platform"] == platform
    assert data["func"] == "softmax_rows_64x128" and data["core"] == "aiv"
    y = data["args"][1]
    assert (y["name"], y["direction"], y["shape"]) == ("y", "inout", [64, 128])
    assert y["mean"] == pytest.approx(1 / 128, rel=1e-5) and 0 < y["min"] <= y["max"] < 1
    x, got = np.load(tmp_path / "x.input.npy"), np.load(tmp_path / "y.npy")
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert data["timings"]["device_seconds"] > 0


@running
def test_kernel_fault_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from pypto.flows import pto_runner
    from pypto.runtime import KernelFaultError

    def fault(*_a: object, **_k: object) -> None:
        raise KernelFaultError("kernel fault in task 0 (kernel 'softmax_rows_64x128', func_id 0): boom")

    monkeypatch.setattr(pto_runner, "execute", fault)
    result = invoke("run-pto", SOFTMAX)
    assert result.exit_code == ExitCode.USER
    assert "@softmax_rows_64x128 failed on a2a3sim: kernel fault in task 0" in result.output
