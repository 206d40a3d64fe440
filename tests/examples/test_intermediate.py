"""The intermediate examples (examples/intermediate/*.py) run and check themselves on both sim platforms."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from example_runner import listed, run_example, verify_pto

from pypto.toolchain.ptoas import find_ptoas

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++"),
    pytest.mark.skipif(find_ptoas() is None, reason="needs the pinned ptoas"),
]

INTERMEDIATE = listed("intermediate")


def test_all_intermediate_examples_are_listed() -> None:
    assert INTERMEDIATE == ["01_fused_linear.py", "02_softmax.py", "03_normalization.py", "04_matmul_acc.py",
                            "05_assemble.py", "06_dyn_valid_shape.py", "07_task_graph.py"]


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("name", INTERMEDIATE)
def test_intermediate_example(name: str, platform: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    files = run_example(f"intermediate/{name}", platform, tmp_path, monkeypatch, capsys)
    if platform == "a2a3sim":  # the a5sim modules differ only in the device spec
        verify_pto(files)
