"""``ir.compile``: defaults, settings, option validation, artifact layout and atomicity."""

from __future__ import annotations

import json

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ToolchainError
from pypto.ir.options import MemoryPlanner, PassDumpLevel, VerificationLevel
from pypto.ir.printer import python_print
from pypto.passes.context import PassContext
from pypto.toolchain import settings as settings_mod

SRC = '''
import pypto.language as pl

@pl.program
class HalfSum:
    @pl.function(type=pl.FunctionType.InCore)
    def half_sum(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        tx: pl.Tile[[64, 64], pl.FP32] = pl.load(x, [0, 0], [64, 64])
        ty: pl.Tile[[64, 64], pl.FP32] = pl.load(y, [0, 0], [64, 64])
        s: pl.Tile[[64, 64], pl.FP32] = pl.mul(pl.add(tx, ty), 0.5)
        r: pl.Tensor[[64, 64], pl.FP32] = pl.store(s, [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        tmp: pl.Tensor[[64, 64], pl.FP32] = pl.create_tensor([64, 64], dtype=pl.FP32)
        tmp = self.half_sum(a, b, tmp)
        out = self.half_sum(tmp, b, out)
        return out
'''


@pytest.fixture()
def program():
    return pl.parse(SRC, filename="half_sum.py")


@pytest.fixture(autouse=True)
def _cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYPTO_PROG_BUILD_DIR", raising=False)


def test_only_program_is_positional(program, tmp_path):
    with pytest.raises(TypeError):
        ir.compile(program, tmp_path / "o")  # type: ignore[misc]


def test_default_output_dir_and_layout(program, tmp_path):
    compiled = ir.compile(program, skip_ptoas=True)
    out = compiled.output_dir
    assert out.parent == tmp_path / "build_output" and out.name.startswith("HalfSum_")
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {"compiled_meta.json", "orchestration/main.cpp", "kernels/aiv/half_sum.pto",
            "passes_dump/00_frontend.py", "passes_dump/54_after_MaterializeValidShapeSymbols.py"} <= files
    assert (out / "report").is_dir()
    assert "kernel_config.py" not in files  # skip_ptoas: compile-only artifact
    meta = json.loads((out / "compiled_meta.json").read_text())
    assert meta["schema"] == 1 and [p["name"] for p in meta["params"]] == ["a", "b", "out"]
    assert meta["params"][2] == {"name": "out", "direction": "Out", "shape": [64, 64], "dtype": "fp32"}
    assert meta["platform"] == "a2a3sim" and meta["backend_type"] == "Ascend910B"
    assert not list(out.glob(".staging-*"))


def test_prog_build_dir_setting(program, tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "builds"))
    with settings_mod.override():
        compiled = ir.compile(program, skip_ptoas=True, dump_passes=False)
    assert compiled.output_dir.parent == tmp_path / "builds"


def test_platform_selects_backend(program, tmp_path):
    compiled = ir.compile(program, output_dir=tmp_path / "o", platform="a5sim", skip_ptoas=True)
    assert compiled.backend_type is ir.BackendType.Ascend950 and compiled.platform == "a5sim"
    with pytest.raises(ValueError, match=r"Invalid platform 'x86'\. Expected 'a2a3sim', 'a2a3', 'a5sim', or 'a5'\."):
        ir.compile(program, platform="x86")


def test_bad_strategy_and_program_type(program):
    with pytest.raises(ValueError, match="Unsupported optimization strategy"):
        ir.compile(program, strategy="fast")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expects an ir.Program"):
        ir.compile("not a program")  # type: ignore[arg-type]


def test_pass_context_conflict(program):
    with PassContext(), pytest.raises(RuntimeError, match="compile\\(\\) was called with memory_planner while a "
                                                          "PassContext is already active"):
        ir.compile(program, memory_planner=MemoryPlanner.PTOAS)


@pytest.mark.parametrize(("planner", "count"), [(MemoryPlanner.PYPTO, 54), (MemoryPlanner.DSA_RP, 53),
                                                (MemoryPlanner.PTOAS, 52)])
def test_planner_pass_counts(program, tmp_path, planner, count):
    compiled = ir.compile(program, output_dir=tmp_path / "o", memory_planner=planner, skip_ptoas=True)
    assert len(list((compiled.output_dir / "passes_dump").glob("*_after_*.py"))) == count


def test_roundtrip_verification_and_profile(program, tmp_path):
    compiled = ir.compile(program, output_dir=tmp_path / "o", verification_level=VerificationLevel.ROUNDTRIP,
                          profiling=True, skip_ptoas=True, dump_passes=PassDumpLevel.EXPLICIT)
    txt = (compiled.output_dir / "report" / "pipeline_profile.txt").read_text()
    assert txt.startswith("PyPTO Compile Profile\n" + "=" * 22 + "\nTotal: ")
    prof = json.loads((compiled.output_dir / "report" / "pipeline_profile.json").read_text())
    assert [s["name"] for s in prof["stages"]][:1] == ["passes"]
    assert len(prof["stages"][0]["children"]) == 54


def test_emit_source_loc(program, tmp_path):
    on = ir.compile(program, output_dir=tmp_path / "on", skip_ptoas=True, dump_passes=False)
    off = ir.compile(program, output_dir=tmp_path / "off", skip_ptoas=True, dump_passes=False,
                     emit_source_loc=False)
    assert 'loc("half_sum.py":' in (on.output_dir / "kernels/aiv/half_sum.pto").read_text()
    assert "loc(" not in (off.output_dir / "kernels/aiv/half_sum.pto").read_text()


def test_reproducible_artifacts(program, tmp_path):
    a = ir.compile(program, output_dir=tmp_path / "a").output_dir
    b = ir.compile(program, output_dir=tmp_path / "b").output_dir
    for rel in ("kernels/aiv/half_sum.cpp", "ptoas/half_sum.pto", "ptoas/half_sum.cpp", "orchestration/main.cpp",
                "kernel_config.py", "compiled_meta.json"):
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    dumps = sorted(p.name for p in (a / "passes_dump").iterdir())
    assert any(name.endswith("_after_AllocateMemoryAddr.py") for name in dumps)
    for name in dumps:  # found by pass name: a new pipeline slot renumbers the dumps after it
        assert (a / "passes_dump" / name).read_bytes() == (b / "passes_dump" / name).read_bytes(), name


def test_failed_compile_is_not_complete(program, tmp_path, monkeypatch):
    from pypto.backend import ptoas_stage

    out = tmp_path / "o"
    ir.compile(program, output_dir=out, skip_ptoas=True, dump_passes=False)
    assert (out / "compiled_meta.json").is_file()

    def broken(argv_ptoas, pto, cpp, *, insert_sync=True):
        return ["false"]
    monkeypatch.setattr(ptoas_stage, "ptoas_argv", broken)
    monkeypatch.setenv("PYPTO_CACHE_MAX_MB", "0")  # ptoas runs (and fails) even where its output is cached
    with pytest.raises(ToolchainError) as ei:
        ir.compile(program, output_dir=out, dump_passes=False)
    assert not (out / "compiled_meta.json").exists()  # the stale marker is gone too
    assert (out / "ptoas" / "half_sum.pto").is_file()  # kept for the repro command
    assert str(out.resolve()) in ei.value.repro
    assert (out / "report" / "codegen_errors.txt").read_text().startswith("1 function(s) failed to compile:")
    assert not list(out.glob(".staging-*"))


def test_missing_ptoas_is_a_clear_error(program, tmp_path, monkeypatch):
    monkeypatch.setenv("PTOAS_ROOT", str(tmp_path / "nowhere"))
    with settings_mod.override(), pytest.raises(ToolchainError, match="PTOAS_ROOT is set to"):
        ir.compile(program, output_dir=tmp_path / "o", dump_passes=False)


def test_distributed_config_needs_a_host_orchestrator(program):
    from pypto.errors import UserError
    from pypto.ir.distributed_compiled_program import DistributedConfig

    with pytest.raises(UserError, match="exactly one HOST-level Orchestrator"):
        ir.compile(program, distributed_config=DistributedConfig(device_ids=[0, 1]))


def test_explicit_dumps_state_every_tile_layout(program, tmp_path):
    """EXPLICIT writes each tile's resolved blayout/slayout/fractal; CONCISE leaves implicit views out."""
    concise = ir.compile(program, output_dir=tmp_path / "c", skip_ptoas=True, dump_passes=PassDumpLevel.CONCISE)
    explicit = ir.compile(program, output_dir=tmp_path / "e", skip_ptoas=True, dump_passes=PassDumpLevel.EXPLICIT)
    [c_path] = (concise.output_dir / "passes_dump").glob("*_after_AllocateMemoryAddr.py")
    [e_path] = (explicit.output_dir / "passes_dump").glob("*_after_AllocateMemoryAddr.py")
    c_text, e_text = c_path.read_text(), e_path.read_text()
    tiles = [ln for ln in e_text.splitlines() if "pl.Tile[" in ln]
    assert tiles and all("blayout=pl.TileLayout." in ln and "fractal=" in ln for ln in tiles)
    assert "blayout=" not in c_text
    reparsed = pl.parse_program(e_text)
    assert python_print(reparsed) == python_print(pl.parse_program(c_text))
