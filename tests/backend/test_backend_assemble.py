"""The assembler stage: artifact tree, ptoas runs, kernel wrappers, failures, pass dumps."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import irbuild as B
import pytest
from ptocheck import SHARED

from pypto.artifact import ArtifactMeta, KernelUnit, commit, load_artifact
from pypto.backend import assemble
from pypto.backend.ptoas_stage import ptoas_argv, split_debug_modules
from pypto.codegen import generate
from pypto.errors import PartialCodegenError, ToolchainError

REF = SHARED / "reference" / "upstream-pypto"


def _ptoas() -> Path:
    from pypto.toolchain.ptoas import find_ptoas

    exe = find_ptoas()
    if exe is None:
        pytest.skip("ptoas 0.1.1 not installed")
    return exe


def _gen(program, **kw):
    return generate(program, backend_type="Ascend910B", platform="a2a3sim", runtime="tensormap_and_ringbuffer", **kw)


def _commit(root: Path, program) -> None:
    """What the driver does after assembling: record the metadata last."""
    commit(root, ArtifactMeta.from_program(program, platform="a2a3sim", backend_type="Ascend910B",
                                           runtime="tensormap_and_ringbuffer", toolchain=None))


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_skip_ptoas_tree_matches_reference(tmp_path):
    ref = REF / "add"
    if not ref.is_dir():
        pytest.skip("reference artifacts absent")
    files = assemble(_gen(B.add_program()), tmp_path, skip_ptoas=True)
    assert "compiled_meta.json" not in files  # the driver's, written last
    _commit(tmp_path, B.add_program())
    want = {t for t in _tree(ref) if not t.startswith("passes_dump/")}
    assert _tree(tmp_path) == want == {*files, "compiled_meta.json"}
    assert (tmp_path / "report").is_dir()
    assert "kernel_config.py" not in files


@pytest.mark.ptoas
def test_ptoas_tree_wrappers_and_config_load(tmp_path):
    exe = _ptoas()
    files = assemble(_gen(B.add_program()), tmp_path, ptoas=exe, max_workers=1)
    _commit(tmp_path, B.add_program())
    assert set(files) == {"orchestration/add.cpp", "kernel_config.py",
                          "ptoas/add_incore_0.pto", "ptoas/add_incore_0.cpp", "ptoas/add_incore_0.log",
                          "kernels/aiv/add_incore_0.cpp"}
    wrapper = files["kernels/aiv/add_incore_0.cpp"]
    assert 'extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args)' in wrapper
    assert "add_incore_0(arg0, arg1, arg2);" in wrapper
    info = load_artifact(tmp_path)
    assert [k.name for k in info.kernels] == ["add_incore_0"]
    assert info.kernels[0].source == tmp_path.resolve() / "kernels/aiv/add_incore_0.cpp"
    assert [p.direction for p in info.params] == ["In", "In", "Out"]


@pytest.mark.ptoas
def test_parallel_units_and_pass_dump(tmp_path):
    exe = _ptoas()
    files = assemble(_gen(B.ffn_swiglu_program()), tmp_path, ptoas=exe, max_workers=2, dump_ptoas_passes=True)
    assert {"kernels/aic/matmul_kernel.cpp", "kernels/aiv/swiglu_kernel.cpp"} <= set(files)
    dumps = sorted(f for f in files if f.startswith("ptoas_passes/matmul_kernel/"))
    assert "ptoas_passes/matmul_kernel/ptoas_debug.log" in dumps
    assert any(f.endswith(".mlir") for f in dumps)


def _broken(art):
    bad = KernelUnit(art.units[0].name, art.units[0].pto.replace("pto.tadd ins(%a, %b", "pto.tadd ins(%a :"),
                     art.units[0].funcs)
    return type(art)(**{**art.__dict__, "units": [bad, *art.units[1:]]})


@pytest.mark.ptoas
def test_failure_report_and_repro(tmp_path):
    exe = _ptoas()
    with pytest.raises(ToolchainError) as ei:
        assemble(_broken(_gen(B.add_program())), tmp_path, ptoas=exe)
    assert not isinstance(ei.value, PartialCodegenError)
    msg = str(ei.value)
    assert "1 function(s) failed to compile:" in msg and "add_incore_0" in msg
    assert "expected" in ei.value.stderr
    assert ei.value.repro.startswith(f"cd <artifact dir> && {exe}") and "ptoas/add_incore_0.pto" in ei.value.repro
    report = (tmp_path / "report" / "codegen_errors.txt").read_text()
    assert report.startswith("1 function(s) failed to compile:") and "Repro command:" in report
    assert not (tmp_path / "kernel_config.py").exists()


@pytest.mark.ptoas
def test_partial_failure_keeps_other_units(tmp_path):
    exe = _ptoas()
    art = _gen(B.ffn_swiglu_program())
    bad = KernelUnit(art.units[1].name, "module {\n  garbage\n}\n", art.units[1].funcs)
    art = type(art)(**{**art.__dict__, "units": [art.units[0], bad]})
    with pytest.raises(PartialCodegenError) as ei:
        assemble(art, tmp_path, ptoas=exe, max_workers=2)
    assert "kernels/aic/matmul_kernel.cpp" in ei.value.files
    assert "swiglu_kernel" in (tmp_path / "report" / "codegen_errors.txt").read_text()


def test_timeout_is_a_toolchain_error(tmp_path):
    fake = tmp_path / "slow_ptoas"
    fake.write_text("#!/bin/sh\nsleep 5\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(ToolchainError, match=r"ptoas did not finish within 0.5 s(.|\n)*PYPTO_PTOAS_TIMEOUT_S"):
        assemble(_gen(B.add_program()), tmp_path / "out", ptoas=fake, timeout=0.5)


def test_missing_binary_is_a_toolchain_error(tmp_path):
    with pytest.raises(ToolchainError, match="cannot run ptoas"):
        assemble(_gen(B.add_program()), tmp_path, ptoas=tmp_path / "nope")


def test_argv_is_a_list_with_insert_sync():
    assert ptoas_argv(Path("/p"), Path("a.pto"), Path("a.cpp")) == ["/p", "a.pto", "-o", "a.cpp", "--enable-insert-sync"]
    assert "--enable-insert-sync" not in ptoas_argv(Path("/p"), Path("a.pto"), Path("a.cpp"), insert_sync=False)


def test_split_debug_modules():
    log = "module {\n  a\n}\nHello PTO Infer Mem Scope!\nmodule {\n  b\n}\nend PTO plan Mem!\n[Debug] x\n"
    out = split_debug_modules(log)
    assert list(out) == ["00_hello_pto_infer_mem_scope.mlir", "01_end_pto_plan_mem.mlir"]
    assert out["01_end_pto_plan_mem.mlir"] == "module {\n  b\n}\n"


def test_no_machine_paths_in_generated_files(tmp_path):
    files = assemble(_gen(B.add_program()), tmp_path, skip_ptoas=True)
    home = os.path.expanduser("~")
    assert not any(home in t or str(tmp_path) in t for t in files.values())


def test_normalize_ptoas_cpp_renumbers_address_names():
    from pypto.backend.ptoas_stage import normalize_ptoas_cpp

    a = "using GTShape_692729600 = S;\nGT_692729600 v = GT_692729600(GTShape_692729600());\nGT_11 w;"
    b = "using GTShape_5 = S;\nGT_5 v = GT_5(GTShape_5());\nGT_77 w;"
    assert normalize_ptoas_cpp(a) == normalize_ptoas_cpp(b)
    assert "GT_0 v" in normalize_ptoas_cpp(a) and "GT_1 w" in normalize_ptoas_cpp(a)
