"""``upstream_compat.py --st``: upstream PyPTO's ``tests/st/runtime`` programs, run on pypto.

Each test file of ``<upstream>/tests/st/runtime`` runs in its own pytest process from the checkout
root, with our harness (``benchmarks/st_adapter``: ``-p pypto_st_plugin --noconftest``) in place of
upstream's (which needs its C++ bindings and device runtime), ``--platform`` set, and a JUnit report
read back for every case's outcome. A file that pytest cannot import counts as one failure of kind
``import``; a file that passes ``--timeout`` (seconds per file) counts as one case of kind ``timeout``. A file
none of whose tests may run on the platform by upstream's ``@pytest.mark.platforms(...)`` (the plugin's
``pypto-st restricted:`` lines) is listed as ``hardware-only, not run on <platform>`` (or the platforms it
is for) and counts neither as a case nor as a failure. Printed:
one line per file, ``st <folder> P/N`` per folder, ``st total P/N (platform)`` and a histogram of the
first line of every failure (numbers and quoted names folded, so like failures group).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ADAPTER = Path(__file__).resolve().parent / "st_adapter"
ST_DIR = Path("tests") / "st" / "runtime"


@dataclass
class FileOutcome:
    """The cases of one test file: name -> (status, first line of the failure)."""

    path: str
    seconds: float
    cases: dict[str, tuple[str, str]] = field(default_factory=dict)
    restricted: dict[str, tuple[str, ...]] = field(default_factory=dict)  # deselected test -> its platforms

    @property
    def folder(self) -> str:
        parts = Path(self.path).parts
        return parts[3] if len(parts) > 4 else "(top level)"

    def count(self, status: str) -> int:
        return sum(s == status for s, _ in self.cases.values())


def st_files(root: Path, pattern: str = "") -> list[Path]:
    """The ``test_*.py`` files under the checkout's st runtime folder whose path contains ``pattern``."""
    found = sorted((root / ST_DIR).rglob("test_*.py"))
    return [p.relative_to(root) for p in found if pattern in p.relative_to(root).as_posix()]


_EXC_LINE = re.compile(r"^[\w.]*(Error|Exception|Failed)\b.*:")


def _first_line(message: str, text: str) -> str:
    """The line that says what went wrong: pytest's first ``E`` line, else an ``XxxError: ...`` line."""
    lines = [ln.strip() for ln in f"{text or ''}\n{message or ''}".splitlines() if ln.strip()]
    marked = [ln[2:].strip() for ln in lines if ln.startswith("E ")]
    named = [ln for ln in lines if _EXC_LINE.match(ln)]
    return (marked or named or [(message or "").strip() or "(no message)"])[0]


def _case_status(case: ET.Element) -> tuple[str, str]:
    for tag, status in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
        el = case.find(tag)
        if el is not None:
            return status, _first_line(el.get("message", ""), el.text or "")
    return "passed", ""


def read_junit(xml_text: str) -> dict[str, tuple[str, str]]:
    """Case id (``file::Class::test[param]``) -> (status, first failure line) from a JUnit report."""
    cases = {}
    for case in ET.fromstring(xml_text).iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        status, why = _case_status(case)
        if status == "error" and not case.get("classname"):  # a collection error: the file did not import
            status = "import"
        cases[name] = (status, why)
    return cases


_RESTRICTED = re.compile(r"^pypto-st restricted: (\S+) -> (\S*)$", re.MULTILINE)
ONBOARD = ("a2a3", "a5")


def read_restricted(stdout: str) -> dict[str, tuple[str, ...]]:
    """Test id -> platforms of every test the plugin deselected by its ``platforms`` marker."""
    return {m.group(1): tuple(filter(None, m.group(2).split(","))) for m in _RESTRICTED.finditer(stdout)}


def restriction(outcome: FileOutcome, platform: str) -> str:
    """Why a file with no case run here was not run ("" when it ran, or nothing said why)."""
    if outcome.cases or not outcome.restricted:
        return ""
    ids = sorted({p for ps in outcome.restricted.values() for p in ps})
    if all(p in ONBOARD for p in ids):
        return f"hardware-only ({', '.join(ids)}), not run on {platform}"
    return f"for {', '.join(ids)} only, not run on {platform}"


def run_file(root: Path, rel: Path, platform: str, timeout: float) -> FileOutcome:
    """Run one test file in its own pytest process; its outcome by case."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pypto-st-") as tmp:
        report = Path(tmp) / "junit.xml"
        argv = [sys.executable, "-m", "pytest", "-p", "pypto_st_plugin", "--noconftest", "-p", "no:cacheprovider",
                "-q", f"--platform={platform}", f"--junitxml={report}", "--basetemp", str(Path(tmp) / "t"),
                rel.as_posix()]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ADAPTER), str(root),
                                                                         os.environ.get("PYTHONPATH")])))
        try:
            proc = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
            tail = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired:
            proc, tail = None, f"[timed out after {timeout:.0f} s]"
        cases = read_junit(report.read_text()) if report.is_file() and report.stat().st_size else {}
    restricted = read_restricted(proc.stdout) if proc is not None else {}
    if proc is None:  # pytest writes its report at the end: the whole file counts as one timeout
        cases = {rel.as_posix(): ("timeout", tail)}
    elif not cases and proc.returncode not in (0, 5):
        cases = {rel.as_posix(): ("import", _first_line(f"pytest exited {proc.returncode}", tail))}
    return FileOutcome(rel.as_posix(), time.perf_counter() - start, cases, restricted)


_FOLD = [(re.compile(r"'[^']*'"), "'…'"), (re.compile(r"\b\d+(\.\d+)?\b"), "N"),
         (re.compile(r"/[\w./-]+"), "<path>")]


def fold(message: str) -> str:
    """A failure line with names, numbers and paths folded, so alike failures count together."""
    for pattern, repl in _FOLD:
        message = pattern.sub(repl, message)
    return message[:140]


def report(outcomes: list[FileOutcome], platform: str, verbose: bool) -> tuple[int, int]:
    """Print the per-file lines, the per-folder counts and the histogram; (passed, ran)."""
    folders: dict[str, list[int]] = {}
    hist: Counter[str] = Counter()
    not_run = 0
    for o in sorted(outcomes, key=lambda o: o.path):
        why_not = restriction(o, platform)
        if why_not:
            not_run += 1
            print(f"{'-':>4}/{'-':<4} {o.seconds:7.1f}s  {o.path}  [{why_not}]")
            continue
        ran = sum(s != "skipped" for s, _ in o.cases.values())
        print(f"{o.count('passed'):4}/{ran:<4} {o.seconds:7.1f}s  {o.path}")
        acc = folders.setdefault(o.folder, [0, 0])
        acc[0] += o.count("passed")
        acc[1] += ran
        for name, (status, why) in o.cases.items():
            if status not in ("passed", "skipped"):
                hist[f"{status}: {fold(why)}"] += 1
                if verbose:
                    print(f"      {status:7} {name}: {why[:200]}")
    for folder, (p, n) in sorted(folders.items()):
        print(f"st {folder} {p}/{n}")
    passed, ran = sum(v[0] for v in folders.values()), sum(v[1] for v in folders.values())
    print("failure histogram:")
    for why, n in hist.most_common(25):
        print(f"  {n:4}  {why}")
    if not_run:
        print(f"not run on {platform}: {not_run} file(s) restricted by upstream's platforms marker (not counted)")
    print(f"st total {passed}/{ran} ({platform})")
    return passed, ran


def main(root: Path, platform: str, pattern: str, jobs: int, timeout: float, verbose: bool) -> int:
    """Run the st files of ``root`` matching ``pattern``; exit code 0 only when every case passed."""
    if not (root / ST_DIR).is_dir():
        print(f"{root} has no {ST_DIR.as_posix()}: point --upstream at a checkout of hw-native-sys/pypto",
              file=sys.stderr)
        return 2
    files = st_files(root, pattern)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(pool.map(lambda rel: run_file(root, rel, platform, timeout), files))
    passed, ran = report(outcomes, platform, verbose)
    return 0 if passed == ran else 1
