"""The distributed example (examples/distributed/*.py) runs on 2 and 4 forked ranks on both sim platforms."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from example_runner import listed, run_example

from pypto.toolchain.ptoas import find_ptoas

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++"),
    pytest.mark.skipif(find_ptoas() is None, reason="needs the pinned ptoas"),
]


def test_all_distributed_examples_are_listed() -> None:
    assert listed("distributed") == ["01_neighbor_gradient.py"]


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_neighbor_gradient(platform: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str], torch) -> None:
    run_example("distributed/01_neighbor_gradient.py", platform, tmp_path, monkeypatch, capsys)
