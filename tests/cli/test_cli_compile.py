"""`pypto compile` / `pypto run` against the driver interface (a fake driver), and --in-container."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import pypto.flows.loader
import pypto.toolchain
from pypto.cli._common import ExitCode
from pypto.cli.compile_cmd import CompileRequest, ShapeSpec, parse_shape
from pypto.cli.main import cli
from pypto.errors import InternalError, ParserSyntaxError, ToolchainError

REPO = Path(__file__).resolve().parents[2]


class FakeCompiled:
    def __init__(self, out: Path) -> None:
        self.output_dir = out
        self.timings = {"passes": 0.5}


class FakeDriver:
    """Records calls; returns a CompiledProgram-like object or raises ``error``."""

    def __init__(self, error: BaseException | None = None, run_result: Any = None) -> None:
        self.calls: list[tuple[str, Path, str | None, Any, CompileRequest]] = []
        self.error = error
        self.run_result = run_result

    def compile_file(self, path: Path, name: str | None, settings: Any, request: CompileRequest) -> Any:
        self.calls.append(("compile", path, name, settings, request))
        if self.error:
            raise self.error
        return FakeCompiled(request.output_dir or Path("build_output/x"))

    def run_file(self, path: Path, name: str | None, settings: Any, request: CompileRequest) -> Any:
        self.calls.append(("run", path, name, settings, request))
        if self.error:
            raise self.error
        return self.run_result


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    path = tmp_path / "kernel.py"
    path.write_text("# a kernel\n")
    return path


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    driver = FakeDriver()
    monkeypatch.setattr(pypto.flows.loader, "compile_file", driver.compile_file, raising=False)
    monkeypatch.setattr(pypto.flows.loader, "run_file", driver.run_file, raising=False)
    return driver


def invoke(*args: str):
    return CliRunner().invoke(cli, ["--log-level", "error", *args], catch_exceptions=False)


def test_compile_prints_artifact(fake: FakeDriver, kernel: Path, tmp_path: Path) -> None:
    result = invoke("compile", f"{kernel}::tile_add", "--platform", "a5sim", "-o", str(tmp_path / "out"),
                    "--skip-ptoas", "--dump-passes", "EXPLICIT", "--verify", "roundtrip", "--profile",
                    "--shape", "a=128x64:f32", "--shape", "b=16:bf16")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(tmp_path / "out")
    kind, path, name, settings, request = fake.calls[0]
    assert (kind, path, name) == ("compile", kernel, "tile_add")
    assert (settings.platform, settings.source_of("platform")) == ("a5sim", "argument")
    assert settings.verify_level == "roundtrip" and settings.compile_profiling
    assert request.skip_ptoas and request.dump_passes == "explicit" and not request.run
    assert request.shapes == (ShapeSpec("a", (128, 64), "fp32"), ShapeSpec("b", (16,), "bf16"))


def test_compile_json(fake: FakeDriver, kernel: Path) -> None:
    result = invoke("compile", str(kernel), "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["ok"] and data["schema_version"] == 1 and data["command"] == "compile"
    assert data["artifact"] == "build_output/x" and data["platform"] == "a2a3sim"
    assert data["runtime"] == "tensormap_and_ringbuffer" and data["toolchain"]
    assert data["timings"]["passes"] == 0.5 and data["timings"]["total_seconds"] >= 0
    assert len(data["manifest_sha256"]) == 64
    assert fake.calls[0][2] is None


def test_compile_run_flag_calls_run_file(fake: FakeDriver, kernel: Path) -> None:
    fake.run_result = types.SimpleNamespace(output_dir=Path("o"), max_error=1e-7, passed=True, timings={"run": 1})
    result = invoke("compile", str(kernel), "--run")
    assert result.exit_code == 0 and fake.calls[0][0] == "run" and fake.calls[0][4].run
    assert "max error: 1e-07" in result.stdout


@pytest.mark.parametrize("args", [["nope.py"], ["{k}::not-an-id"], ["{k}", "--shape", "a=12xq"],
                                  ["{k}", "--shape", "a=4:f99"], ["{k}", "--shape", "a=0x4"],
                                  ["{k}", "--dump-passes", "all"], ["{k}", "--verify", "full"]])
def test_usage_errors_exit_2(fake: FakeDriver, kernel: Path, args: list[str]) -> None:
    result = invoke("compile", *[a.format(k=kernel) for a in args])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert not fake.calls


def test_bad_platform_exit_3(fake: FakeDriver, kernel: Path) -> None:
    result = invoke("compile", str(kernel), "--platform", "x")
    assert result.exit_code == ExitCode.USER
    assert "Invalid platform 'x'" in result.stderr and "--platform" in result.stderr
    assert not fake.calls


def test_bad_runtime_json_error(fake: FakeDriver, kernel: Path) -> None:
    result = invoke("compile", str(kernel), "--runtime", "x", "--json")
    assert result.exit_code == ExitCode.USER
    data = json.loads(result.stdout)
    assert data["ok"] is False and "Unknown runtime 'x'" in data["error"]["message"]


@pytest.mark.parametrize(("error", "code"), [
    (ParserSyntaxError("bad program"), ExitCode.USER),
    (ToolchainError("ptoas failed", repro="ptoas a.pto -o a.cpp"), ExitCode.TOOLCHAIN),
    (InternalError("broken invariant"), ExitCode.INTERNAL),
    (RuntimeError("surprise"), ExitCode.INTERNAL),
])
def test_driver_errors_map_to_exit_codes(monkeypatch: pytest.MonkeyPatch, kernel: Path,
                                         error: BaseException, code: ExitCode) -> None:
    driver = FakeDriver(error=error)
    monkeypatch.setattr(pypto.flows.loader, "compile_file", driver.compile_file, raising=False)
    result = invoke("compile", str(kernel))
    assert result.exit_code == code
    assert str(error).splitlines()[0].removeprefix("error: ") in result.stderr
    if code == ExitCode.INTERNAL:
        assert "pypto bug" in result.stderr


def test_run_reports_and_passes(fake: FakeDriver, kernel: Path) -> None:
    fake.run_result = types.SimpleNamespace(output_dir=Path("o"), max_error=0.0, passed=True, timings={})
    result = invoke("run", str(kernel), "--platform", "a5sim", "--rtol", "1e-3", "--seed", "7", "--json")
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["passed"] and data["max_error"] == 0.0 and data["command"] == "run"
    request = fake.calls[0][4]
    assert request.run and request.rtol == 1e-3 and request.seed == 7


def test_run_mismatch_exit_3(fake: FakeDriver, kernel: Path) -> None:
    fake.run_result = types.SimpleNamespace(output_dir=Path("o"), max_error=0.5, passed=False, timings={})
    assert invoke("run", str(kernel)).exit_code == ExitCode.USER


def test_missing_driver_function_is_internal(monkeypatch: pytest.MonkeyPatch, kernel: Path) -> None:
    monkeypatch.delattr(pypto.flows.loader, "compile_file", raising=False)
    result = invoke("compile", str(kernel))
    assert result.exit_code == ExitCode.INTERNAL and "compile_file" in result.stderr


def test_in_container_delegates(monkeypatch: pytest.MonkeyPatch, fake: FakeDriver, kernel: Path,
                                tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def run_in_container(argv: list[str], *, settings: Any, source_dir: Path, output_dir: Path) -> int:
        seen.update(argv=argv, settings=settings, source_dir=source_dir, output_dir=output_dir)
        return 3

    def to_container_path(path: Path, source_dir: Path, output_dir: Path) -> str:
        return "/src/" + path.relative_to(source_dir).as_posix()

    module = types.SimpleNamespace(run_in_container=run_in_container, to_container_path=to_container_path,
                                   CONTAINER_OUT="/out", CONTAINER_SRC="/src")
    monkeypatch.setitem(sys.modules, "pypto.toolchain.docker", module)
    monkeypatch.setattr(pypto.toolchain, "docker", module, raising=False)
    monkeypatch.chdir(tmp_path)
    result = invoke("compile", "kernel.py::k", "--in-container", "--platform", "a5sim", "--skip-ptoas",
                    "--shape", "a=8x8:f32", "-o", "out")
    assert result.exit_code == 3, result.stderr
    # the container records /src/... paths; the map makes them the host's (byte-identical artifacts)
    assert seen["argv"] == ["compile", "/src/kernel.py::k", "--platform", "a5sim", "--shape", "a=8x8:f32",
                            "--skip-ptoas", "--dump-passes", "concise", "--output-dir", "/out",
                            "--file-prefix-map", f"/src={tmp_path.resolve()}"]
    assert seen["source_dir"] == tmp_path and seen["output_dir"] == tmp_path / "out"
    assert seen["settings"].platform == "a5sim" and not fake.calls
    # the caller's own map applies on top: host dir -> /proj, so the container maps /src -> /proj
    result = invoke("compile", "kernel.py::k", "--in-container", "--file-prefix-map", f"{tmp_path.resolve()}=/proj")
    assert result.exit_code == 3, result.stderr
    assert seen["argv"][-2:] == ["--file-prefix-map", "/src=/proj"]


def test_file_prefix_map_reaches_the_driver_and_rejects_bad_values(fake: FakeDriver, kernel: Path) -> None:
    result = invoke("compile", str(kernel), "--file-prefix-map", "/a=/b", "--file-prefix-map", "/c/=/d")
    assert result.exit_code == 0, result.output
    assert fake.calls[0][3].file_prefix_map == "/a=/b;/c=/d"
    result = CliRunner().invoke(cli, ["compile", str(kernel), "--file-prefix-map", "nonsense"])
    assert result.exit_code == ExitCode.USAGE and "OLD=NEW" in result.output


@pytest.mark.parametrize(("source", "words", "line"), [
    ("import os\nimport no_such_module_xyz\n", "no module named 'no_such_module_xyz'", 2),
    ("x = 1\ndef f(:\n    pass\n", "invalid Python syntax", 2),
    ("import json\n\nraise ValueError('broken at import')\n", "ValueError: broken at import", 3),
])
def test_a_file_that_fails_to_import_is_a_user_error(tmp_path: Path, source: str, words: str, line: int) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(source)
    result = invoke("compile", str(bad))
    assert result.exit_code == ExitCode.USER, result.output
    assert f"{bad}:{line}:" in result.stderr and words in result.stderr
    assert "pypto bug" not in result.stderr and "Traceback" not in result.stderr


def test_parse_shape_aliases() -> None:
    assert parse_shape("x=2x3") == ShapeSpec("x", (2, 3), "fp32")
    assert parse_shape("y=4:i32").dtype == "int32"
    assert parse_shape("z=1x1x1:F16").dtype == "fp16"


def test_compile_hello_world_end_to_end(tmp_path: Path) -> None:
    example = REPO / "examples" / "beginner" / "01_hello_world.py"
    result = invoke("compile", str(example), "-o", str(tmp_path / "out"), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    artifact = Path(data["artifact"])
    assert artifact == tmp_path / "out" and (artifact / "compiled_meta.json").is_file()
    assert (artifact / "kernels" / "aiv" / "add_incore_0.cpp").is_file()
    assert data["platform"] == "a2a3sim" and data["toolchain"] and data["timings"]["total_seconds"] > 0
    assert data["program"] == "_jit_add"


def test_run_hello_world_checks_golden(tmp_path: Path) -> None:
    example = REPO / "examples" / "beginner" / "01_hello_world.py"
    result = invoke("run", str(example), "-o", str(tmp_path / "out"), "--platform", "a5sim", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["passed"] is True and data["max_error"] == 0.0 and data["platform"] == "a5sim"


def test_compile_jit_without_shapes_is_a_user_error(tmp_path: Path) -> None:
    src = tmp_path / "k.py"
    src.write_text("import pypto.language as pl\n\n@pl.jit\ndef k(a: pl.Tensor, out: pl.Out[pl.Tensor]):\n"
                   "    with pl.at(level=pl.Level.CORE_GROUP):\n        out[:] = pl.exp(a)\n    return out\n")
    result = invoke("compile", str(src))
    assert result.exit_code == 3
    assert "needs sample shapes" in result.output and "--shape" in result.output
    ok = invoke("compile", str(src), "--shape", "a=64x64:f32", "--shape", "out=64x64:f32",
                "-o", str(tmp_path / "o"), "--skip-ptoas")
    assert ok.exit_code == 0, ok.output


def test_compile_picks_kernel_by_name(tmp_path: Path) -> None:
    src = tmp_path / "two.py"
    body = ("@pl.jit\ndef {n}(a: pl.Tensor, out: pl.Out[pl.Tensor]):\n    with pl.at(level=pl.Level.CORE_GROUP):\n"
            "        out[:] = pl.relu(a)\n    return out\n\n")
    src.write_text("import pypto.language as pl\n\n" + body.format(n="k1") + body.format(n="k2"))
    result = invoke("compile", str(src), "--shape", "a=64x64", "--shape", "out=64x64", "--skip-ptoas")
    assert result.exit_code == 3 and "pick one kernel with FILE::NAME (k1, k2)" in result.output
    result = invoke("compile", f"{src}::k3", "--shape", "a=64x64", "--shape", "out=64x64")
    assert result.exit_code == 3 and "no @pl.program or @pl.jit kernel named 'k3'" in result.output
    result = invoke("compile", f"{src}::k2", "--shape", "a=64x64", "--shape", "out=64x64", "--skip-ptoas",
                    "-o", str(tmp_path / "o"), "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["program"] == "_jit_k2"
