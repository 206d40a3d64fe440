"""The beginner examples (examples/beginner/*.py) run and check themselves on both sim platforms."""

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

BEGINNER = listed("beginner")


def test_all_beginner_examples_are_listed() -> None:
    assert BEGINNER == ["01_hello_world.py", "02_elementwise.py", "03_scalar_ops.py", "04_activation.py",
                        "05_matmul.py", "06_concat.py"]


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("name", BEGINNER)
def test_beginner_example(name: str, platform: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    files = run_example(f"beginner/{name}", platform, tmp_path, monkeypatch, capsys)
    if platform == "a2a3sim":  # the a5sim modules differ only in the device spec
        verify_pto(files)
