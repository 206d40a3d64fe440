"""Every Python block a documentation page marks runnable runs, and passes, on a2a3sim.

A block is marked by the line ``<!-- doctest: run -->`` right above its `````python`` fence (see
``doc_blocks.py``); English and Chinese pages are collected alike. Each block is one test, named
``page:line`` (the fence's line), and runs standalone: a fresh interpreter (``sys.executable``) in an
empty temporary directory, so its artifacts land in that directory's ``build_output/`` and nothing
from an earlier block is in scope. The platform is a2a3sim through the settings that choose it when
a program names none: ``PYPTO_RUN_PLATFORM`` (a bare ``RunConfig()``) and ``PYPTO_PLATFORM`` (the
``pypto`` command); a block that names another platform fails ``test_blocks_run_on_a2a3sim_only``.
A block fails on a non-zero exit or on passing its time limit; the failure names ``page:line`` and
shows the end of the block's stderr. ``test_markup`` fails on a marker with no
Python fence under it and on a fence that is never closed, also as ``page:line``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from doc_blocks import MARKER, Block, collect, scan

import pypto
from pypto.toolchain.ptoas import find_ptoas

DOCS = Path(__file__).resolve().parents[2] / "docs"
TIMEOUT_S = 240
TAIL_LINES = 40
BLOCKS, PROBLEMS = collect(DOCS)


@dataclass(frozen=True)
class Outcome:
    ok: bool
    report: str


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYPTO_PROG_BUILD_DIR", None)  # artifacts go to build_output/ of the block's own directory
    env["PYPTO_RUN_PLATFORM"] = "a2a3sim"
    env["PYPTO_PLATFORM"] = "a2a3sim"
    root = str(Path(pypto.__file__).resolve().parents[1])  # the pypto under test, not another install
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _tail(text: str) -> str:
    return "\n".join(text.rstrip().splitlines()[-TAIL_LINES:])


def run_block(block: Block, workdir: Path, timeout_s: float = TIMEOUT_S) -> Outcome:
    """Run one block as ``block.py`` in ``workdir`` with a fresh interpreter; the report names page:line."""
    script = workdir / "block.py"
    script.write_text(block.code, encoding="utf-8")
    where = (f"{block.id}: runnable block (line N of block.py is line {block.line} + N of the page; "
             f"repro: cd <empty dir> && PYPTO_RUN_PLATFORM=a2a3sim python block.py)")
    try:
        proc = subprocess.run([sys.executable, script.name], cwd=workdir, env=_env(), capture_output=True,
                              text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return Outcome(False, f"{where}\ndid not finish within {timeout_s:g} s\n--- stderr (tail) ---\n{_tail(err)}")
    if proc.returncode != 0:
        return Outcome(False, f"{where}\nexited with {proc.returncode}\n--- stderr (tail) ---\n{_tail(proc.stderr)}")
    return Outcome(True, where)


_needs_tools = pytest.mark.skipif(shutil.which("g++") is None or find_ptoas() is None,
                                  reason="runnable blocks compile with ptoas and run on a2a3sim (needs g++)")


@pytest.mark.sim
@pytest.mark.ptoas
@_needs_tools
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_block_runs(block: Block, tmp_path: Path, executed_blocks: list) -> None:
    missing = [m for m in block.needs if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{block.id} needs {', '.join(missing)} (marker needs=...), which is not installed")
    outcome = run_block(block, tmp_path)
    executed_blocks.append(block.id)
    if not outcome.ok:
        pytest.fail(outcome.report, pytrace=False)


def test_pages_mark_blocks() -> None:
    """Both languages have runnable blocks, and no two share an id."""
    pages = {b.page for b in BLOCKS}
    assert any(p.endswith(".zh.md") for p in pages), "no Chinese page marks a runnable block"
    assert len({b.id for b in BLOCKS}) == len(BLOCKS)


_OTHER_PLATFORM = re.compile(r"""platform\s*=\s*["'](a5sim|a5|a2a3)["']""")


def test_blocks_run_on_a2a3sim_only() -> None:
    """A runnable block that names another platform would not run on a2a3sim, as the suite promises."""
    named = [f"{b.id}: a runnable block names platform '{m.group(1)}'; the suite runs them on a2a3sim "
             f"(name a2a3sim, or leave it to RunConfig's default)"
             for b in BLOCKS for m in _OTHER_PLATFORM.finditer(b.code)]
    assert not named, "\n".join(named)


def test_markup() -> None:
    """No marker without a ```python fence under it, no fence left open, on any page."""
    assert not PROBLEMS, "documentation markup:\n" + "\n".join(map(str, PROBLEMS))


@pytest.mark.parametrize(("text", "line", "what"), [
    (f"intro\n{MARKER}\n\n```python\nx = 1\n```\n", 2, "not directly followed"),
    (f"{MARKER}\n```bash\nls\n```\n", 1, "not directly followed"),
    (f"text\n{MARKER}", 2, "not directly followed"),
    ("a\n\n```python\nx = 1\n", 3, "never closed"),
    (f"{MARKER}\n````python\n```\n", 2, "never closed"),
])
def test_markup_problems_are_located(text: str, line: int, what: str) -> None:
    blocks, problems = scan("p.zh.md", text)
    assert [(p.page, p.line) for p in problems] == [("p.zh.md", line)]
    assert what in problems[0].message
    assert str(problems[0]).startswith(f"p.zh.md:{line}: ")


def test_scan_finds_marked_blocks_only() -> None:
    text = (f"{MARKER}\n```python\nprint(1)\n```\n\n```python\nprint(2)\n```\n"
            f"- item\n\n    {MARKER}\n    ```python title=\"x.py\"\n    if True:\n        print(3)\n    ```\n"
            f"````markdown\n{MARKER}\n```python\nprint(4)\n```\n````\n")
    blocks, problems = scan("q.md", text)
    assert problems == []
    assert [(b.id, b.code) for b in blocks] == [("q.md:2", "print(1)\n"),
                                                ("q.md:12", "if True:\n    print(3)\n")]
    assert [b.needs for b in blocks] == [(), ()]


def test_marker_names_what_a_block_needs() -> None:
    text = "<!-- doctest: run needs=torch,numpy -->\n```python\nimport torch\n```\n<!-- doctest: run needs= -->\n"
    blocks, problems = scan("n.md", text)
    assert [(b.id, b.needs) for b in blocks] == [("n.md:2", ("torch", "numpy"))]
    assert problems == []  # the malformed marker is no marker: its line is plain text


def test_a_broken_block_fails_with_its_location(tmp_path: Path) -> None:
    bad = Block("compiling.zh.md", 41, "import sys\nprint('to stderr', file=sys.stderr)\nraise SystemExit('boom')\n")
    outcome = run_block(bad, tmp_path)
    assert not outcome.ok
    assert outcome.report.startswith("compiling.zh.md:41: ")
    assert "to stderr" in outcome.report and "boom" in outcome.report and "exited with 1" in outcome.report


def test_a_hanging_block_fails_with_its_location(tmp_path: Path) -> None:
    outcome = run_block(Block("running.md", 7, "import time\ntime.sleep(60)\n"), tmp_path, timeout_s=1)
    assert not outcome.ok and outcome.report.startswith("running.md:7: ") and "within 1 s" in outcome.report


def test_blocks_run_on_a2a3sim_in_their_own_directory(tmp_path: Path) -> None:
    code = ("import os\nfrom pypto.runtime import RunConfig\n"
            "assert RunConfig().platform == 'a2a3sim', RunConfig().platform\n"
            "assert os.listdir('.') == ['block.py'], os.listdir('.')\n"
            "assert 'PYPTO_PROG_BUILD_DIR' not in os.environ\n")
    outcome = run_block(Block("x.md", 1, code), tmp_path)
    assert outcome.ok, outcome.report
