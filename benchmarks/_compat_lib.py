"""pypto-lib's simulator CI loop, run against this pypto (``upstream_compat.py --pypto-lib``).

hw-native-sys/pypto-lib's CI runs each runnable file as ``python <file> -p <platform>`` from the
root of its checkout (its ``golden/`` harness is imported from there): every ``examples/**.py``
but ``*_draft.py``, and the model files of the Qwen3-14B, Qwen3-32B and DeepSeek-V3.2 families
that have a ``__main__`` guard and no ``# ci: no-sim`` marker. Nothing of pypto-lib is copied into
this repository: point ``--pypto-lib`` at a checkout (or a git snapshot) of it. The snapshot is
copied into a private directory per platform, so the runs leave it untouched.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

PLATFORMS = ("a2a3sim", "a5sim")
# The model families of the simulator CI this harness measures (older snapshots nest them).
MODEL_FAMILY = re.compile(r"^models/(qwen3[_/](14|32)b|deepseek[_/]v3[_.]2)/")
NO_SIM = re.compile(r"^#\s*ci:\s*no-sim", re.M)
# The ring sizes pypto-lib's CI exports for its simulator job.
CI_ENV = {"PTO2_RING_DEP_POOL": "16384", "PTO2_RING_TASK_WINDOW": "16384", "PTO2_RING_HEAP": "1073741824"}
ERROR_LINE = re.compile(r"(Error|Exception|error:|FAIL|Traceback|timed out)")


@dataclass
class LibOutcome:
    platform: str
    name: str
    status: str          # PASS | FAIL | TIMEOUT
    exit_code: int | None
    seconds: float
    last_error: str
    tail: str


def _runnable(root: Path, path: Path) -> bool:
    text = path.read_text(encoding="utf-8", errors="replace")
    return "__main__" in text and not NO_SIM.search(text)


def lib_files(root: Path) -> list[str]:
    """The files pypto-lib's sim CI runs, relative to ``root``, sorted as its ``find | sort`` does."""
    names = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if path.name.endswith("_draft.py"):
            continue
        if rel.startswith("examples/") and not NO_SIM.search(path.read_text(encoding="utf-8", errors="replace")):
            names.append(rel)
        elif MODEL_FAMILY.match(rel) and _runnable(root, path):
            names.append(rel)
    return sorted(names)


def materialize(snapshot: Path, dest: Path) -> Path:
    """Copy a checkout (or the HEAD of a git snapshot) of pypto-lib into ``dest``; return ``dest``."""
    if (snapshot / "examples").is_dir():
        shutil.copytree(snapshot, dest, ignore=shutil.ignore_patterns(".git", "build_output", "__pycache__"))
        return dest
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", f"--git-dir={snapshot}", "archive", "HEAD"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    if not (dest / "examples").is_dir():
        raise ValueError(f"{snapshot} is not a checkout of pypto-lib (no examples/)")
    return dest


def last_error_line(output: str) -> str:
    """The last line of ``output`` that names an error, else its last non-empty line."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if ERROR_LINE.search(line):
            return line[:300]
    return lines[-1][:300] if lines else ""


def run_file(root: Path, rel: str, platform: str, timeout: float) -> LibOutcome:
    """``python <rel> -p <platform>`` from ``root`` with ``root`` on the path, as pypto-lib's CI does."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", **CI_ENV)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, rel, "-p", platform], cwd=root, env=env,
                              capture_output=True, timeout=timeout, check=False)
        code: int | None = proc.returncode
        out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    except subprocess.TimeoutExpired as exc:
        code = None
        out = ((exc.stdout or b"") + (exc.stderr or b"")).decode("utf-8", "replace")
        out += f"\n[timed out after {timeout:.0f} s]"
    status = "PASS" if code == 0 else ("TIMEOUT" if code is None else "FAIL")
    tail = "\n".join(out.strip().splitlines()[-15:])
    last = "" if status == "PASS" else last_error_line(out)
    return LibOutcome(platform, rel, status, code, time.perf_counter() - start, last, tail)


def run_platform(snapshot: Path, platform: str, timeout: float, jobs: int, pattern: str = "",
                 verbose: bool = False) -> list[LibOutcome]:
    """Every selected file of the snapshot on one platform, in a private copy of it; prints each line."""
    outcomes = []
    with tempfile.TemporaryDirectory(prefix=f"pypto-lib-{platform}-") as tmp:
        root = materialize(snapshot, Path(tmp, "pypto-lib"))
        files = [f for f in lib_files(root) if pattern in f]
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for outcome in pool.map(lambda rel: run_file(root, rel, platform, timeout), files):
                print("\n".join(file_lines(outcome, verbose)), flush=True)
                outcomes.append(outcome)
    return outcomes


def file_lines(o: LibOutcome, verbose: bool = False) -> list[str]:
    """``STATUS seconds platform file  | last error line`` (and the output tail of a failure if verbose)."""
    line = f"{o.status:7} {o.seconds:7.1f}s  {o.platform:8} {o.name}"
    lines = [line + (f"  | {o.last_error}" if o.last_error else "")]
    if verbose and o.status != "PASS":
        lines.append("    " + o.tail.replace("\n", "\n    "))
    return lines


def summary(outcomes: list[LibOutcome]) -> list[str]:
    """``pypto-lib P/N (<platform>)`` per platform, in the order they ran."""
    lines = []
    for platform in dict.fromkeys(o.platform for o in outcomes):
        sel = [o for o in outcomes if o.platform == platform]
        lines.append(f"pypto-lib {sum(o.status == 'PASS' for o in sel)}/{len(sel)} ({platform})")
    return lines


def main(snapshot: Path, platforms: list[str], timeout: float, jobs: int, pattern: str = "",
         verbose: bool = False) -> tuple[int, list[LibOutcome]]:
    """Run the loop on each platform; the exit code is 0 only when every file passed."""
    outcomes: list[LibOutcome] = []
    for platform in platforms:
        outcomes += run_platform(snapshot, platform, timeout, jobs, pattern, verbose)
    print("\n".join(summary(outcomes)), flush=True)
    return (0 if all(o.status == "PASS" for o in outcomes) else 1), outcomes
