"""Run one example's ``main(platform)`` in a scratch directory and dialect-check the .pto it wrote."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))


def listed(group: str) -> list[str]:
    return sorted(p.name for p in (EXAMPLES / group).glob("[0-9][0-9]_*.py"))


def load_example(rel: str):
    """Import an example file as a module (examples/ on sys.path for ``_common``)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    path = EXAMPLES / rel
    spec = importlib.util.spec_from_file_location(f"example_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # a @pl.program class reads its source through its module
    spec.loader.exec_module(mod)
    return mod


def run_example(rel: str, platform: str, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                capsys: pytest.CaptureFixture[str]) -> list[Path]:
    """Run the example with build_output/ under ``workdir``; returns the .pto files it produced."""
    monkeypatch.chdir(workdir)
    load_example(rel).main(platform)
    out = capsys.readouterr().out
    oks = [line for line in out.splitlines() if f"on {platform}: OK" in line]
    assert oks, f"{rel} printed no OK line on {platform}:\n{out}"
    return sorted(workdir.glob("build_output/*/ptoas/*.pto"))


def verify_pto(files: list[Path]) -> None:
    """Every .pto passes ``pto_verify.py --ptoas --strict`` (skips without the shared checker)."""
    from ptocheck import verify

    assert files, "the example produced no .pto files"
    verify(*files)
