"""One ptoas process per program: module merge, C++ split, per-unit logs, fallback to per-unit runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import irbuild as B
import pytest

from pypto.artifact.model import KernelUnit
from pypto.backend import assemble, ptoas_batch
from pypto.backend.ptoas_batch import merge_modules, split_cpp, unit_functions
from pypto.codegen import generate

HEAD = 'module attributes {"pto.device-spec" = "Ascend910B1"} {'


def _ptoas() -> Path:
    from pypto.toolchain.ptoas import find_ptoas

    exe = find_ptoas()
    if exe is None:
        pytest.skip("ptoas 0.1.1 not installed")
    return exe


def _gen(program):
    return generate(program, backend_type="Ascend910B", platform="a2a3sim", runtime="tensormap_and_ringbuffer")


def test_merge_keeps_every_function_under_one_header():
    a = f"{HEAD}\n  func.func @a() {{\n    return\n  }}\n}}\n"
    b = f"{HEAD}\n  func.func @b(%arg0: i32) {{\n    return\n  }}\n}}\n"
    merged = merge_modules([a, b])
    assert merged == f"{HEAD}\n  func.func @a() {{\n    return\n  }}\n  func.func @b(%arg0: i32) {{\n    return\n  }}\n}}\n"
    assert unit_functions(merged) == ["a", "b"]


def test_merge_refuses_different_headers_and_odd_text():
    a = f"{HEAD}\n  func.func @a() {{\n  }}\n}}\n"
    assert merge_modules([a, "module {\n  func.func @b() {\n  }\n}\n"]) is None
    assert merge_modules([a, "garbage"]) is None


CPP = ('#include "common/pto_instr.hpp"\nusing namespace pto;\n'
       "__global__ AICORE void a(__gm__ float* v1) {\n  return;\n}\n\n"
       "__global__ AICORE void b(__gm__ float* v1) {\n  int x = 0;\n  return;\n}\n\n"
       "__global__ AICORE void c() {\n  return;\n}\n\n\n")
PRE = '#include "common/pto_instr.hpp"\nusing namespace pto;\n'


def test_split_lays_out_each_unit_like_its_own_run():
    one, two = split_cpp(CPP, [["a", "c"], ["b"]])
    assert one == PRE + "__global__ AICORE void a(__gm__ float* v1) {\n  return;\n}\n\n" \
                        "__global__ AICORE void c() {\n  return;\n}\n\n\n"
    assert two == PRE + "__global__ AICORE void b(__gm__ float* v1) {\n  int x = 0;\n  return;\n}\n\n\n"


def test_split_refuses_missing_or_undeclared_functions():
    assert split_cpp(CPP, [["a"], ["zz"]]) is None
    assert split_cpp(CPP, [["a"], ["b"]]) is None  # c is nobody's: a helper the batch cannot place


def test_unit_log_keeps_only_the_units_functions():
    err = (f"{HEAD}\n  func.func @a() {{\n    x\n  }}\n  func.func @b() {{\n    y\n  }}\n}}\n"
           "trace line\n")
    assert ptoas_batch._unit_log(err, {"b"}) == f"{HEAD}\n  func.func @b() {{\n    y\n  }}\n}}\n"


@pytest.mark.ptoas
def test_batch_output_is_byte_identical_to_per_unit_runs(tmp_path, monkeypatch):
    exe = _ptoas()
    art = _gen(B.ffn_swiglu_program())
    assert len(art.units) >= 2
    runs: list[list[str]] = []

    class Counting(subprocess.Popen):  # every tool start goes through Popen (pypto.toolchain.procs.run_tool)
        def __init__(self, argv, *a, **k):
            runs.append(list(argv))
            super().__init__(argv, *a, **k)

    monkeypatch.setattr(subprocess, "Popen", Counting)
    batch = assemble(art, tmp_path / "batch", ptoas=exe)
    assert len(runs) == 1 and "batch.pto" in runs[0][1]  # one process for the whole program
    per_unit = assemble(art, tmp_path / "units", ptoas=exe, dump_ptoas_passes=True, max_workers=1)
    assert len(runs) == 1 + len(art.units)
    cpp = [rel for rel in batch if rel.endswith(".cpp")]
    assert any(rel.startswith("ptoas/") for rel in cpp) and any(rel.startswith("kernels/") for rel in cpp)
    for rel in cpp:
        assert batch[rel] == per_unit[rel], rel
    assert not list((tmp_path / "batch").glob(".ptoas-batch-*"))  # the merged module is not left behind
    for u in art.units:
        log = (tmp_path / "batch" / "ptoas" / f"{u.name}.log").read_text()
        assert log.startswith(f"$ ptoas ptoas/{u.name}.pto -o ptoas/{u.name}.cpp --enable-insert-sync\n")
        others = [f"@{v.name}(" for v in art.units if v is not u]
        assert not any(o in log for o in others)


@pytest.mark.ptoas
def test_a_failing_unit_falls_back_to_per_unit_runs(tmp_path):
    exe = _ptoas()
    art = _gen(B.ffn_swiglu_program())
    good, second = art.units[0], art.units[1]
    broken = KernelUnit(second.name, second.pto.replace("    return\n", "    pto.nosuchop\n    return\n", 1), second.funcs)
    (tmp_path / "ptoas").mkdir()
    for u in (good, broken):
        (tmp_path / "ptoas" / f"{u.name}.pto").write_text(u.pto)
    results = ptoas_batch.run_units(exe, tmp_path, [good, broken], max_workers=1, timeout=60)
    assert [r.ok for r in results] == [True, False]
    assert results[0].log.startswith(f"$ ptoas ptoas/{good.name}.pto")  # its own run, not the batch's
    assert f"ptoas/{broken.name}.pto" in results[1].repro and results[1].error
