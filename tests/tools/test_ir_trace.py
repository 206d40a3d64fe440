"""pypto-ir-trace: input checks, exit codes, deterministic self-contained output, and the page in Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser import load, needs_chromium

from pypto.tools import ir_trace


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pypto.tools.ir_trace", *args], capture_output=True, text=True,
                          check=False, cwd=cwd)


def _payload(path: Path) -> dict:
    m = re.search(r'<script type="application/json" id="payload">(.*?)</script>', path.read_text(), re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def test_trace_is_self_contained_and_deterministic(matmul_art: Path, tmp_path: Path) -> None:
    dump = matmul_art / "passes_dump"
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    assert _run(str(dump), "-o", str(a)).returncode == 0
    assert _run(str(dump), "-o", str(b), "--context", "3").returncode == 0
    assert a.read_bytes() == b.read_bytes()
    text = a.read_text()
    assert "http://" not in text and "https://" not in text
    data = _payload(a)
    files = sorted(p.name for p in dump.glob("*.py"))
    assert [p["file"] for p in data["passes"]] == files
    ssa = next(p for p in data["passes"] if p["name"] == "ConvertToSSA")
    assert ssa["changed"] and ssa["added"] > 0 and ssa["removed"] > 0
    assert any(f["status"] == "changed" for f in ssa["functions"])
    outline = next(p for p in data["passes"] if p["name"] == "OutlineIncoreScopes")
    assert any(f["status"] == "added" for f in outline["functions"])  # the outlined kernel appears
    assert any(not p["changed"] for p in data["passes"][1:])  # some passes are no-ops here


def test_default_output_and_log_warning(matmul_art: Path, tmp_path: Path) -> None:
    dump = tmp_path / "passes_dump"
    shutil.copytree(matmul_art / "passes_dump", dump, ignore=shutil.ignore_patterns("*.html"))
    ssa_dump = next(dump.glob("*_after_ConvertToSSA.py"))  # its number follows the pipeline's slots
    ssa_dump.with_suffix(".log").write_text("renamed 8 variables")
    p = _run(str(dump), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    page = tmp_path / "ir_trace.html"
    assert page.is_file()
    ssa = next(x for x in _payload(page)["passes"] if x["index"] == int(ssa_dump.name[:2]))
    assert ssa["warning"] == "renamed 8 variables"


def test_input_errors(matmul_art: Path, tmp_path: Path) -> None:
    missing = _run(str(tmp_path / "nope"), "-o", str(tmp_path / "x.html"))
    assert missing.returncode == 1
    assert missing.stderr.startswith("pypto-ir-trace: error: input directory does not exist")
    assert _run(str(matmul_art / "passes_dump"), "--context", "-1").returncode == 2
    gap = tmp_path / "gap"
    shutil.copytree(matmul_art / "passes_dump", gap, ignore=shutil.ignore_patterns("*.html"))
    (victim,) = gap.glob("05_after_*.py")
    victim.unlink()
    p = _run(str(gap), "-o", str(tmp_path / "g.html"))
    assert p.returncode == 1 and "missing pass dump index 05" in p.stderr
    (gap / "05_after_Renamed.py").write_text("x = 1\n")
    (gap / "05_after_Other.py").write_text("x = 2\n")
    assert "duplicate pass dump index 05" in _run(str(gap), "-o", str(tmp_path / "g.html")).stderr
    (gap / "05_after_Other.py").unlink()
    (gap / "notes.py").write_text("")
    assert "malformed pass dump name: notes.py" in _run(str(gap), "-o", str(tmp_path / "g.html")).stderr
    (gap / "notes.py").unlink()
    (gap / "00_after_X.py").write_text("")
    assert "index 00 is reserved" in _run(str(gap), "-o", str(tmp_path / "g.html")).stderr
    out_missing = _run(str(matmul_art / "passes_dump"), "-o", str(tmp_path / "no" / "dir" / "t.html"))
    assert out_missing.returncode == 1 and "output directory does not exist" in out_missing.stderr


def test_function_split_and_hunks() -> None:
    text = "import x\n\n@pl.function(type=1)\ndef f(a):\n    return a\n@pl.function()\ndef g(b):\n    return b\n"
    parts = ir_trace.split_functions(text)
    assert list(parts) == ["<module>", "f", "g"] and parts["f"][0].startswith("@pl.function")
    hunks = ir_trace._hunks(["a", "b", "c", "d"], ["a", "B", "c", "d"], context=1)
    assert [r[0] for r in hunks[0]["rows"]] == ["=", "-", "+", "="]


def test_console_script_is_declared() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    assert 'pypto-ir-trace = "pypto.tools.ir_trace:main"' in pyproject.read_text()
    if shutil.which("pypto-ir-trace") is None:
        pytest.skip("pypto-ir-trace is not installed in this environment (reinstall the package)")


@needs_chromium
def test_page_renders_in_chromium(matmul_art: Path, tmp_path: Path) -> None:
    page = tmp_path / "trace.html"
    assert _run(str(matmul_art / "passes_dump"), "-o", str(page)).returncode == 0
    dom, console = load(page, tmp_path / "trace.png")
    assert console == [], console
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-rendered="1"' in body and "data-js-error" not in body
    assert "ConvertToSSA" in dom and 'class="add"' in dom and 'class="del"' in dom  # the first diff is shown
