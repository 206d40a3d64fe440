"""benchmarks/upstream_compat.py --api: the API survey counts module paths and names as documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _snapshot(tmp_path: Path) -> Path:
    repo = tmp_path / "up"
    files = {
        "python/pypto/ir/__init__.py": '__all__ = ["Var", "NotOurs"]\n',
        "python/pypto/ir/directions.py": '__all__ = ["make_call", "input"]\n',
        "python/pypto/ir/no_all.py": "x = 1\n",
        "python/pypto/ir/_private.py": '__all__ = ["hidden"]\n',
        "python/pypto/language/op/tile_ops.py": '__all__ = ["add", "no_such_op"]\n',
        "python/pypto/nowhere.py": '__all__ = ["a"]\n',
        "python/pypto/pypto_core/passes.pyi": "class MemoryPlanner: ...\ndef _hidden() -> None: ...\nX: int\n",
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    for cmd in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "s"]):
        subprocess.run(["git", "-C", str(repo), *cmd], check=True, capture_output=True)
    return repo


def test_api_survey_counts_paths_faces_and_stub_names(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "upstream_compat.py"), "--api",
                          str(_snapshot(tmp_path)), "-v"], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert "public     pypto.ir: missing 1/2: NotOurs" in lines
    assert any(ln.startswith("public     pypto.language.op.tile_ops: missing 1/2: no_such_op") for ln in lines)
    assert "public     pypto.nowhere: no module path; missing 1/1: a" in lines
    assert not any("_private" in ln for ln in lines)
    # ir, ir.directions and language.op.tile_ops import; ir.no_all and nowhere are not modules of ours
    totals = [ln for ln in lines if ln.startswith("api ")]
    assert totals == ["api public: 4/7 names (modules 3/5)", "api pypto_core: 1/2 names (modules 1/1)"]
    assert "pypto_core pypto.pypto_core.passes: missing 1/2: X" in lines  # _hidden is not a public name


def test_api_survey_rejects_a_directory_that_is_not_a_snapshot(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "upstream_compat.py"), "--api", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "not a git snapshot" in proc.stderr


@pytest.mark.parametrize("argv", [[], ["--docs"]])
def test_program_runs_still_need_upstream(argv: list[str]) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "upstream_compat.py"), *argv],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "--upstream DIR is required" in proc.stderr
