"""Upstream's hand-edit path over our artifacts: ``pto_backend._run_ptoas`` / ``_preprocess_ptoas_output`` and
``device_runner.build_orch_args_from_inputs`` / ``validate_golden``.

A cross-core program of our own (the vector cores compute ``a * b`` and ``a - b``, the cube core their
product) is compiled, its vector ``.pto`` edited by hand (``tsub`` -> ``tadd``), assembled again and spliced
between the kernel source's markers, then built and run on both simulators: the output follows the edit.
"""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path

import pytest

import pypto.language as pl
from pypto.artifact.directory import PTOAS_BODY_BEGIN, PTOAS_BODY_END
from pypto.errors import ToolchainError
from pypto.toolchain.ptoas import find_ptoas

needs_tools = pytest.mark.skipif(shutil.which("g++") is None or find_ptoas() is None, reason="needs ptoas and g++")


@pl.program
class MulSubMatmul:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[32, 32], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
            prod = pl.mul(a, b)
            diff = pl.sub(a, b)
            res = pl.matmul(prod, diff)
            out = pl.assemble(out, res, [0, 0])
        return out


BACKENDS = {"a2a3sim": "Ascend910B", "a5sim": "Ascend950"}


def _splice(source: Path, body: str) -> None:
    text = source.read_text()
    begin, end = text.index(PTOAS_BODY_BEGIN), text.index(PTOAS_BODY_END)
    source.write_text(f"{text[:begin]}{PTOAS_BODY_BEGIN}\n\n{body}\n{text[end:]}")


@pytest.mark.sim
@needs_tools
@pytest.mark.parametrize("platform", list(BACKENDS))
def test_a_hand_edited_pto_is_reassembled_spliced_and_run(platform: str, tmp_path: Path, torch) -> None:
    from pypto.backend import BackendType
    from pypto.backend.pto_backend import _preprocess_ptoas_output, _run_ptoas
    from pypto.runtime import compile_program
    from pypto.runtime.device_runner import (
        build_orch_args_from_inputs,
        compile_and_assemble,
        execute_on_device,
        validate_golden,
    )

    work = tmp_path / "art"
    compile_program(MulSubMatmul, work, backend_type=BackendType(BACKENDS[platform]))
    pto = next((work / "ptoas").glob("*_aiv.pto"))
    assert pto.read_text().count("pto.tsub ") == 1
    pto.write_text(pto.read_text().replace("pto.tsub ", "pto.tadd "))
    cpp = pto.with_suffix(".cpp")
    _run_ptoas(str(pto), str(cpp), ptoas_flags=["--enable-insert-sync", "--pto-level=level3", "--pto-arch", "a3"])
    body = _preprocess_ptoas_output(cpp.read_text())
    assert "#include" not in body and "static __aicore__ void" in body
    _splice(work / "kernels" / "aiv" / f"{pto.stem}.cpp", body)

    callable_, runtime, _ = compile_and_assemble(work, platform)
    torch.manual_seed(0)
    a, b = torch.randn(32, 32), torch.randn(32, 32)
    orch_args, values, ins, outs = build_orch_args_from_inputs([("a", a), ("b", b), ("out", torch.zeros(32, 32))],
                                                               {"out"})
    assert list(ins) == ["a", "b"] and list(outs) == ["out"] and values["a"] is orch_args[0]
    execute_on_device(callable_, orch_args, platform, runtime, 0)
    validate_golden(outs, {"out": (a * b) @ (a + b)}, rtol=1e-4, atol=1e-4)  # the edit, not the program
    with pytest.raises(AssertionError, match=r"Output 'out' does not match golden\.\nMismatched elements: "):
        validate_golden(outs, {"out": (a * b) @ (a - b)}, rtol=1e-4, atol=1e-4)


@needs_tools
def test_a_pto_ptoas_rejects_is_a_toolchain_error_with_the_command(tmp_path: Path) -> None:
    from pypto.backend.pto_backend import _run_ptoas

    bad = tmp_path / "bad.pto"
    bad.write_text("module {\n  func.func @k() {\n    pto.no_such_op\n  }\n}\n")
    with pytest.raises(ToolchainError, match="ptoas compilation failed on .*bad.pto") as info:
        _run_ptoas(str(bad), str(tmp_path / "bad.cpp"))
    assert "Repro command:" in str(info.value) and str(bad) in info.value.repro
    assert "--enable-insert-sync" in info.value.repro and not (tmp_path / "bad.cpp").exists()


def test_flags_newer_ptoas_has_are_dropped_the_rest_kept() -> None:
    from pypto.backend.pto_backend import pinned_flags

    assert pinned_flags(["--enable-insert-sync", "--pto-level=level3", "--pto-arch", "a3", "--x"]) == [
        "--enable-insert-sync", "--x"]
    assert pinned_flags(["--pto-arch=a5", "--pto-level", "level3"]) == [] and pinned_flags(None) == []


def test_preprocess_strips_what_the_wrapper_supplies() -> None:
    from pypto.backend.pto_backend import _preprocess_ptoas_output

    raw = '#include "pto/pto-inst.hpp"\nusing namespace pto;\n__global__ AICORE void k(__gm__ float* v1) {\n}\n'
    assert _preprocess_ptoas_output(raw) == "static __aicore__ void k(__gm__ float* v1) {\n}\n"


def test_orch_args_take_tensors_and_ctypes_scalars_only(torch) -> None:
    from pypto.runtime.device_runner import build_orch_args_from_inputs

    t = torch.ones(4, 4).t()  # not contiguous: made so
    args, values, ins, outs = build_orch_args_from_inputs([("x", t), ("n", ctypes.c_int32(7)), ("out_y", t)], set())
    assert args[0].is_contiguous() and isinstance(args[1], ctypes.c_int32) and values["n"] == 7
    assert list(ins) == ["x"] and list(outs) == ["out_y"]  # an "out" prefix is an output, as upstream
    with pytest.raises(TypeError, match=r"'n' is a int; pass a torch.Tensor or a ctypes scalar"):
        build_orch_args_from_inputs([("n", 7)], set())


def test_validate_golden_skips_nan_and_names_missing_goldens(torch) -> None:
    from pypto.runtime.device_runner import validate_golden

    got = torch.tensor([1.0, 2.0, 3.0])
    validate_golden({"y": got}, {"y": torch.tensor([1.0, float("nan"), 3.0])})
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1/3 \(1 don't-care skipped\)"):
        validate_golden({"y": got}, {"y": torch.tensor([1.0, float("nan"), 4.0])})
    with pytest.raises(AssertionError, match=r"\[0\] actual=1, expected=2"):
        validate_golden({"i": torch.tensor([1, 2])}, {"i": torch.tensor([2, 2])}, rtol=0, atol=0)
    with pytest.raises(KeyError, match=r"no golden for output 'z' \(goldens: \['y'\]\)"):
        validate_golden({"z": got}, {"y": got})
