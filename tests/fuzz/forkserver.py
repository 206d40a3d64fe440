"""Runs ``pypto`` CLI invocations for the fuzz test, each in its own forked process.

Started once per test session as ``python forkserver.py``: it imports pypto (once), then reads one JSON
request per line on stdin — ``{"argv": [...], "cwd": "...", "timeout": s}`` — forks a child that runs
``pypto.cli.main.main(argv)`` with stdout/stderr in files under ``cwd`` and exits with its return code,
and answers one JSON line: ``{"status": "exit"|"signal"|"timeout", "code": n, "stderr": tail, "stdout":
tail}``. An optional ``"env"`` object sets (string) or removes (null) variables in the child only. A fork
costs milliseconds where a fresh interpreter costs a second, so a few hundred cases fit in a minute,
and every case still ends as a real process exit status (signals and hangs are seen as such).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def _child(argv: list[str], cwd: str, env: dict | None = None) -> None:
    for key, value in (env or {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    os.chdir(cwd)
    for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
        f = os.open(os.path.join(cwd, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(f, fd)
        os.close(f)
    code = 1
    try:
        from pypto.cli.main import main

        code = main(argv)
    except BaseException as exc:  # noqa: BLE001 - report, then exit like an uncaught exception would
        import traceback

        traceback.print_exc()
        code = 1 if not isinstance(exc, SystemExit) else int(exc.code or 0)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _wait(pid: int, timeout: float) -> dict:
    end = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                return {"status": "signal", "code": -os.WTERMSIG(status)}
            return {"status": "exit", "code": os.WEXITSTATUS(status)}
        if time.monotonic() > end:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"status": "timeout", "code": None}
        time.sleep(0.01)


def _warm_up() -> None:
    """Import what a compile imports (in the server, once): a child then starts compiling at once."""
    import importlib

    for name in ("numpy", "pypto.cli.main", "pypto.driver", "pypto.flows.loader", "pypto.language", "pypto.passes",
                 "pypto.codegen", "pypto.backend.assemble", "pypto.jit", "pypto.runtime", "pypto.runtime.worker",
                 "pypto.toolchain.settings", "pypto.toolchain.settings_model", "pypto.toolchain.logging"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # a module moved: the child imports it itself


def serve() -> None:
    _warm_up()

    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            os.setpgid(0, 0)  # own process group: a timeout kills g++/ptoas children too
            _child(req["argv"], req["cwd"], req.get("env"))
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child already did it (or already exited)
        result = _wait(pid, float(req.get("timeout", 120)))
        for name in ("stderr", "stdout"):
            try:
                with open(os.path.join(req["cwd"], f"{name}.txt"), errors="replace") as f:
                    result[name] = f.read()[-4000:]
            except OSError:
                result[name] = ""
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
