"""How many of upstream PyPTO's own programs run unchanged against this pypto.

The yardstick for compatibility is upstream's material: the runnable blocks of its English user
manual (``docs/en/user/**.md``: a ``<!-- doctest: run -->`` block runs after every
``<!-- doctest: setup -->`` block above it on the same page, with ``__PLATFORM__`` replaced) and
the scripts under its ``examples/`` tree (run from the checkout root with the ``examples`` package
importable; a package's entry module as ``python -m``). Nothing of upstream is copied here: point
``--upstream`` at a checkout of hw-native-sys/pypto.

    python benchmarks/upstream_compat.py --upstream DIR [--platform a2a3sim] [--docs|--examples]
        [-k SUBSTRING] [--distributed] [--jobs 2] [--timeout 900] [--json results.json] [-v]
    python benchmarks/upstream_compat.py --api [SNAPSHOT] [-v]
    python benchmarks/upstream_compat.py --upstream DIR --st [--platform a5sim] [-k ops/] [--jobs 2] [-v]
    python benchmarks/upstream_compat.py --pypto-lib SNAPSHOT [--platform a2a3sim|a5sim|both]
        [-k SUBSTRING] [--jobs 1] [--timeout 300] [--json results.json] [-v]

``--api`` surveys upstream's public Python API instead (see ``benchmarks/upstream_api.py``): SNAPSHOT
is a git snapshot or checkout of hw-native-sys/pypto (default ``$UPSTREAM_SNAPSHOT``, else
``--upstream``); the last lines are ``api public: F/N names (modules M/K)`` and the same for
``pypto_core``. Exit code 0.

``--st`` runs upstream's system tests (``tests/st/runtime``) through our own harness instead (see
``benchmarks/_compat_st.py``): one pytest process per file, ``--timeout`` seconds each; the last lines
are ``st <folder> P/N`` per folder, a failure histogram and ``st total P/N (platform)``.

``--pypto-lib`` runs hw-native-sys/pypto-lib's simulator CI loop instead (see
``benchmarks/_compat_lib.py``): ``python <file> -p <platform>`` from a private copy of SNAPSHOT (a
checkout or git snapshot of pypto-lib) for its examples and its Qwen3-14B, Qwen3-32B and
DeepSeek-V3.2 model files, 300 s each; one line per file (PASS/FAIL/TIMEOUT, seconds, last error line)
and ``pypto-lib P/N (<platform>)`` per platform.

Each case runs in a fresh interpreter in its own temporary directory (docs) or in the checkout
root (examples), with ``PYPTO_PLATFORM`` and ``PYPTO_RUN_PLATFORM`` set to the platform (so a
``RunConfig()`` naming no platform runs there; a script naming one keeps it). The last line is
``upstream-compat: docs P/N, examples P/N`` and the exit code is 0 only when every case passed.
A script that hard-codes a hardware platform (``RunConfig(platform="a2a3")``, or ``default="a2a3"``) runs with
``PYPTO_RUN_HW_ON_SIM=1``: pypto then runs it on the simulator of that architecture, with a warning,
and its status line says so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

MARKED_BLOCK = re.compile(r"<!--\s*doctest:\s*(setup|run)\s*-->\s*\n```python\n(.*?)\n```", re.S)
# Examples that need several simulated chips (issue: distributed programs); skipped unless asked.
DISTRIBUTED = ("examples/distributed/", "examples/runtime/distributed_callback.py",
               "examples/runtime/multi_program_kv_cache.py")
# A script that hard-codes a hardware platform (``RunConfig(platform="a2a3")``, an annotated default
# ``platform: str = "a2a3"``, or an argparse ``--platform`` option with ``default="a2a3"``) runs with the
# ``run_hw_on_sim`` setting on, so its run goes to the simulator of that architecture (pypto warns).
HW_PLATFORM = re.compile(r"""(platform\s*(?::\s*\w+\s*)?|default)\s*=\s*["'](a2a3|a5)["']""")
# Command-line variants of the distributed examples: each runs as its own case ("<file> <args>").
VARIANTS = {
    "examples/distributed/04_barrier.py": (["--use-builtin"],),
    "examples/distributed/05_remote_load_store.py": (["--mode", "store"],),
    "examples/distributed/06_put_get.py": (["--mode", "get"],),
    "examples/distributed/07_dynamic_rank_count.py": (["--mode", "get"], ["-d", "0,1,2,3"],
                                                      ["--mode", "get", "-d", "0,1,2"]),
}
# Package entry points upstream runs with ``python -m``.
MODULE_ENTRIES = {"examples/models/qwen3_jit/qwen3_decode.py": "examples.models.qwen3_jit.qwen3_decode"}


@dataclass
class Case:
    kind: str            # "docs" | "examples"
    name: str            # page.md#N or examples/<dir>/<file>.py
    argv: list[str]
    source: str | None   # program text for docs blocks
    cwd: str | None
    hw_on_sim: bool = False  # hard-codes a hardware platform: run with PYPTO_RUN_HW_ON_SIM=1


@dataclass
class Outcome:
    kind: str
    name: str
    ok: bool
    exit_code: int | None
    seconds: float
    tail: str
    hw_on_sim: bool = False


def doc_cases(root: Path, platform: str) -> list[Case]:
    """One case per run block: the page's setup blocks above it, then the block itself."""
    cases: list[Case] = []
    for page in sorted((root / "docs" / "en" / "user").rglob("*.md")):
        setup: list[str] = []
        index = 0
        for match in MARKED_BLOCK.finditer(page.read_text(encoding="utf-8")):
            kind, code = match.group(1), match.group(2).replace("__PLATFORM__", platform)
            if kind == "setup":
                setup.append(code)
                continue
            index += 1
            rel = page.relative_to(root / "docs" / "en" / "user").as_posix()
            source = "\n\n".join([*setup, code]) + "\n"
            cases.append(Case("docs", f"{rel}#{index}", [sys.executable, "block.py"], source, None))
    return cases


def _is_script(path: Path, root: Path) -> bool:
    """``examples/<group>/<file>.py``, or a deeper module with a ``__main__`` block."""
    depth = len(path.relative_to(root).parts)
    return path.name != "__init__.py" and (depth == 3 or "__main__" in path.read_text(encoding="utf-8"))


def example_cases(root: Path, distributed: bool) -> list[Case]:
    cases: list[Case] = []
    for path in sorted((root / "examples").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if not _is_script(path, root) or (not distributed and rel.startswith(DISTRIBUTED)):
            continue
        module = MODULE_ENTRIES.get(rel)
        argv = [sys.executable, "-m", module] if module else [sys.executable, rel]
        code = (line.split("#", 1)[0] for line in path.read_text(encoding="utf-8").splitlines())
        hw = any(HW_PLATFORM.search(line) for line in code)
        cases.append(Case("examples", rel, argv, None, str(root), hw_on_sim=hw))
        for extra in VARIANTS.get(rel, ()) if distributed else ():
            cases.append(Case("examples", f"{rel} {' '.join(extra)}", argv + extra, None, str(root), hw_on_sim=hw))
    return cases


def run_case(case: Case, platform: str, timeout: float, root: Path) -> Outcome:
    env = dict(os.environ, PYPTO_PLATFORM=platform, PYPTO_RUN_PLATFORM=platform, PYTHONUNBUFFERED="1")
    if case.hw_on_sim:
        env["PYPTO_RUN_HW_ON_SIM"] = "1"
    if case.kind == "examples":
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pypto-compat-") as tmp:
        env.setdefault("PYPTO_PROG_BUILD_DIR", str(Path(tmp, "build_output")))  # keep the checkout clean
        if case.source is not None:
            Path(tmp, "block.py").write_text(case.source, encoding="utf-8")
        try:
            proc = subprocess.run(case.argv, cwd=case.cwd or tmp, env=env, capture_output=True,
                                  timeout=timeout, check=False)
            code: int | None = proc.returncode
            out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        except subprocess.TimeoutExpired as exc:
            code = None
            out = ((exc.stdout or b"") + (exc.stderr or b"")).decode("utf-8", "replace")
            out += f"\n[timed out after {timeout:.0f} s]"
    tail = "\n".join(out.strip().splitlines()[-12:])
    return Outcome(case.kind, case.name, code == 0, code, time.perf_counter() - start, tail, case.hw_on_sim)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", type=Path, help="checkout of hw-native-sys/pypto")
    ap.add_argument("--api", nargs="?", const="", metavar="SNAPSHOT",
                    help="survey upstream's public API names and module paths instead of running programs")
    ap.add_argument("--pypto-lib", type=Path, metavar="SNAPSHOT",
                    help="run pypto-lib's simulator CI loop on a checkout or git snapshot of it")
    ap.add_argument("--platform", default="a2a3sim", help="a2a3sim, a5sim or (--pypto-lib) both")
    only = ap.add_mutually_exclusive_group()
    only.add_argument("--docs", action="store_true", help="only the manual's run blocks")
    only.add_argument("--examples", action="store_true", help="only the example scripts")
    only.add_argument("--st", action="store_true", help="upstream's tests/st/runtime through our harness")
    ap.add_argument("-k", dest="pattern", default="", help="only cases whose name contains this")
    ap.add_argument("--distributed", action="store_true", help="include the multi-chip examples")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=None, help="seconds a case (default 900; pypto-lib 300)")
    ap.add_argument("--json", type=Path, help="write every outcome here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the output tail of failures")
    args = ap.parse_args(argv)
    if args.api is not None:
        return api_main(ap, args)
    if args.pypto_lib is not None:
        return lib_main(ap, args)
    args.timeout = args.timeout or 900.0
    if args.upstream is None:
        ap.error("--upstream DIR is required (or --api [SNAPSHOT])")
    root = args.upstream.resolve()
    if args.st:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import _compat_st

        return _compat_st.main(root, args.platform, args.pattern, args.jobs, args.timeout, args.verbose)
    if not (root / "docs" / "en" / "user").is_dir() or not (root / "examples").is_dir():
        ap.error(f"{root} is not a checkout of upstream PyPTO (no docs/en/user or examples/)")
    cases = [] if args.examples else doc_cases(root, args.platform)
    cases += [] if args.docs else example_cases(root, args.distributed)
    cases = [c for c in cases if args.pattern in c.name]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        outcomes = list(pool.map(lambda c: run_case(c, args.platform, args.timeout, root), cases))
    for o in outcomes:
        status = "PASS" if o.ok else ("TIMEOUT" if o.exit_code is None else f"FAIL({o.exit_code})")
        note = "  [hardware platform run on the simulator: PYPTO_RUN_HW_ON_SIM=1]" if o.hw_on_sim else ""
        print(f"{status:9} {o.seconds:7.1f}s  {o.kind:8} {o.name}{note}")
        if args.verbose and not o.ok:
            print("    " + o.tail.replace("\n", "\n    "))
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1), encoding="utf-8")
    summary = []
    for kind in ("docs", "examples"):
        sel = [o for o in outcomes if o.kind == kind]
        if sel:
            summary.append(f"{kind} {sum(o.ok for o in sel)}/{len(sel)}")
    print(f"upstream-compat ({args.platform}): " + ", ".join(summary))
    return 0 if all(o.ok for o in outcomes) else 1


def lib_main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--pypto-lib``: pypto-lib's sim CI loop (:mod:`_compat_lib`) on one platform or both."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _compat_lib

    platforms = list(_compat_lib.PLATFORMS) if args.platform == "both" else [args.platform]
    if any(p not in _compat_lib.PLATFORMS for p in platforms):
        ap.error(f"--platform must be one of {', '.join(_compat_lib.PLATFORMS)} or both")
    snapshot = args.pypto_lib.resolve()
    if not snapshot.exists():
        ap.error(f"{snapshot} does not exist")
    code, outcomes = _compat_lib.main(snapshot, platforms, args.timeout or 300.0, args.jobs,
                                      args.pattern, args.verbose)
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1), encoding="utf-8")
    return code


def api_main(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--api``: the API survey of :mod:`upstream_api` (imports pypto; run with the checkout on the path)."""
    snapshot = args.api or os.environ.get("UPSTREAM_SNAPSHOT") or (str(args.upstream) if args.upstream else "")
    if not snapshot:
        ap.error("--api needs SNAPSHOT (a git snapshot of hw-native-sys/pypto), $UPSTREAM_SNAPSHOT or --upstream")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import upstream_api

    try:
        tiers = upstream_api.survey(Path(snapshot))
    except subprocess.CalledProcessError as exc:
        ap.error(f"{snapshot} is not a git snapshot of upstream PyPTO: {exc.stderr.strip()}")
    print("\n".join(upstream_api.render(tiers, verbose=args.verbose)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
