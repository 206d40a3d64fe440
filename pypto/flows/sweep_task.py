"""The work a sweep worker does: run a batch of jobs, each in a child ``python -P -m pypto`` process.

This module is what Dask pickles by reference, so the scheduler and every worker import it: it uses
only the standard library at import time (the in-container path imports the launcher when called).

Each attempt of a job gets a fresh directory ``<store>/attempts/<sweep id>/<key>-<random>`` holding
``artifact/`` (the compile's ``--output-dir``), ``stdout.txt``, ``stderr.txt`` and ``pid``. A
finished attempt is moved to ``<store>/out/<key>``; an ``ok`` or ``user_error`` outcome is then
recorded in ``<store>/ac/<key>.json`` (written last, through a temporary name). Exit code 0 counts as
``ok`` only with the child's ``--json`` result and a non-empty artifact (:func:`outcome`). An attempt whose
worker died stays under ``attempts/`` until the sweep reaps it (kills the recorded process, removes
the directory).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

STATUS_BY_EXIT = {0: "ok", 2: "user_error", 3: "user_error", 4: "toolchain_error"}
CACHEABLE = ("ok", "user_error")
SEVERITY = {"ok": 0, "user_error": 1, "toolchain_error": 2, "internal_error": 3}
EXIT_BY_STATUS = {"ok": 0, "user_error": 3, "toolchain_error": 4, "internal_error": 1}
TAIL_LINES = 20


def status_of(exit_code: int) -> str:
    """``ok`` / ``user_error`` / ``toolchain_error`` / ``internal_error`` for a ``pypto`` exit code."""
    return STATUS_BY_EXIT.get(exit_code, "internal_error")


def new_attempt(store: Path, sweep_id: str, key: str) -> Path:
    """A fresh, empty attempt directory (a retry never reuses a dead attempt's files)."""
    attempt = store / "attempts" / sweep_id / f"{key[:24]}-{uuid.uuid4().hex[:8]}"
    (attempt / "artifact").mkdir(parents=True)
    return attempt


def cli_argv(job: dict[str, Any], target: str, output_dir: str) -> list[str]:
    """Arguments after ``pypto`` for one job."""
    return ["--toolchain", job["toolchain"], "run" if job["run"] else "compile",
            target, "--platform", job["platform"], "--runtime", job["runtime"], "--output-dir", output_dir, "--json"]


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-TAIL_LINES:])


def _result_object(stdout: str) -> dict[str, Any]:
    """The ``--json`` object the child printed last on stdout ({} when there is none).

    The object starts on a line of its own (``{``); the program may have printed anything before it.
    """
    lines = stdout.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("{")]
    for i in reversed(starts):
        try:
            data = json.loads("".join(lines[i:]))
        except ValueError:
            continue
        return data if isinstance(data, dict) else {}
    return {}


NO_RESULT = ("pypto exited with code 0 but {what}: something ended the interpreter before the job finished "
             "(os._exit() or an exec in the program's own code, for example), so the job did not succeed")


def outcome(exit_code: int, stdout: str, stderr: str, artifact: Path) -> tuple[int, str]:
    """(exit code, message) of a finished child: exit 0 counts only with its ``--json`` result and an artifact.

    A child that ends with 0 but printed no ``{"ok": true, ...}`` object, or left its artifact directory
    empty, did not finish: that is exit code 1 (``internal_error``, never stored), not ``ok``.
    """
    if exit_code != 0:
        return exit_code, summarize(exit_code, stdout, stderr)
    lacks = [what for what, bad in (("printed no result", _result_object(stdout).get("ok") is not True),
                                    ("left no artifact", not _has_files(artifact))) if bad]
    if not lacks:
        return 0, summarize(0, stdout, stderr)
    tail = _tail(stderr)
    return 1, NO_RESULT.format(what=" and ".join(lacks)) + (f"\n{tail}" if tail else "")


def _has_files(path: Path) -> bool:
    try:
        return any(path.iterdir())
    except OSError:
        return False


def summarize(exit_code: int, stdout: str, stderr: str) -> str:
    """A one-line-ish message: the run's verdict on success, the error text on failure."""
    data = _result_object(stdout)
    if exit_code == 0:
        if "passed" in data:
            return f"passed (max error {data.get('max_error')})"
        if data.get("command") == "run":
            return "ran (the file has no golden to compare with)"
        return "compiled" if data else _tail(stdout) or "ok"
    error = data.get("error", {}) if isinstance(data.get("error"), dict) else {}
    if error.get("message"):
        return str(error["message"])
    if data.get("verdict"):  # a mismatch, or a golden that checked nothing
        return str(data["verdict"])
    if data.get("passed") is False:
        return f"outputs differ from the golden (max error {data.get('max_error')})"
    return _tail(stderr) or _tail(stdout) or f"pypto exited with code {exit_code}"


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(json.dumps(data, sort_keys=True, indent=1))
    os.replace(tmp, path)


def finish(store: Path, job: dict[str, Any], attempt: Path, exit_code: int, message: str,
           seconds: float) -> dict[str, Any]:
    """Move the attempt to ``out/<key>``, record a cacheable outcome, return the result line."""
    key = job["key"]
    dest = store / "out" / key
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        old = dest.with_name(f".{key}.{uuid.uuid4().hex[:8]}.old")
        os.replace(dest, old)
        shutil.rmtree(old, ignore_errors=True)
    (attempt / "pid").unlink(missing_ok=True)
    os.replace(attempt, dest)
    status = status_of(exit_code)
    record = {"target": job["target"], "platform": job["platform"], "toolchain": job["toolchain"],
              "status": status, "exit_code": exit_code, "message": message, "artifact": str(dest / "artifact"),
              "cached": False, "seconds": round(seconds, 3), "key": key}
    if status in CACHEABLE:
        write_json_atomic(store / "ac" / f"{key}.json", record)
    return record


def run_job(job: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    """Run one job in a child ``python -m pypto``; a crash or timeout is a result, never an exception."""
    store = Path(ctx["store"])
    attempt = new_attempt(store, ctx["sweep_id"], job["key"])
    target = job["file"] + (f"::{job['name']}" if job["name"] else "")
    # -P: the working directory is not importable (as for the `pypto` script and in containers): the
    # kernel's imports resolve from its own directory only, which is what the job's key covers
    argv = [ctx.get("python") or "python", "-P", "-m", "pypto", *cli_argv(job, target, str(attempt / "artifact"))]
    start = time.monotonic()
    with open(attempt / "stdout.txt", "wb") as out, open(attempt / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=ctx.get("cwd"))
        (attempt / "pid").write_text(f"{proc.pid}\n")
        try:
            code = proc.wait(timeout=ctx.get("timeout"))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = None
    stdout = (attempt / "stdout.txt").read_text(errors="replace")
    stderr = (attempt / "stderr.txt").read_text(errors="replace")
    if code is None:
        return finish(store, job, attempt, 4, f"timed out after {ctx['timeout']}s and was killed", time.monotonic() - start)
    if code < 0:
        message = f"pypto was killed by signal {-code}\n{_tail(stderr)}".strip()
        return finish(store, job, attempt, 1, message, time.monotonic() - start)
    code, message = outcome(code, stdout, stderr, attempt / "artifact")
    return finish(store, job, attempt, code, message, time.monotonic() - start)


def run_batch(jobs: list[dict[str, Any]], ctx: dict[str, Any]) -> list[dict[str, Any]]:
    """The worker entry point: a batch of jobs, in child processes or in one container."""
    if ctx.get("in_container"):
        from pypto.flows.sweep_container import run_batch_in_container

        return run_batch_in_container(jobs, ctx)
    return [run_job(job, ctx) for job in jobs]
