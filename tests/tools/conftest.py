"""Artifacts for the tool tests: the matmul example compiled with EXPLICIT pass dumps (once per platform)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def compile_example(example: str, out: Path, platform: str = "a2a3sim") -> Path:
    cmd = [sys.executable, "-m", "pypto", "compile", str(ROOT / "examples" / example), "--dump-passes", "explicit",
           "--platform", platform, "-o", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=out.parent)
    assert p.returncode == 0, p.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def matmul_art(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_example("beginner/05_matmul.py", tmp_path_factory.mktemp("mm") / "art")


@pytest.fixture(scope="session")
def matmul_art_a5(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_example("beginner/05_matmul.py", tmp_path_factory.mktemp("mm5") / "art", "a5sim")
