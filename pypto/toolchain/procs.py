"""External tools (ptoas, g++) run with a deadline, in a process group of their own.

:func:`run_tool` starts the tool as the leader of a new process group and waits at most ``timeout``
seconds. Past it, the whole group is killed (the tool and everything it started: a wrapper script's
child, g++'s ``cc1plus`` and ``as``), so nothing is orphaned and no inherited pipe keeps the wait
open, and a :class:`~pypto.errors.ToolTimeoutError` names the tool, the limit, the setting that raises
it and the repro command. Tools still running when the process is interrupted are killed by
:func:`kill_running` (the CLI's Ctrl-C / SIGTERM handlers, :func:`interrupt_kills_tools`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pypto.errors import ToolTimeoutError

_running: dict[int, subprocess.Popen[str]] = {}
_lock = threading.Lock()
DRAIN_S = 5.0  # seconds to collect the output of a killed group


def run_tool(argv: Sequence[str], *, tool: str, timeout: float, setting: str, repro: str = "",
             cwd: str | os.PathLike[str] | None = None,
             env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to completion (text output, captured) or kill its process group after ``timeout`` s.

    ``setting`` is the settings field holding the limit (``ptoas_timeout_s``...), named by the error.
    OSError (the program cannot be started) propagates; an interrupt kills the group and propagates.
    """
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                            cwd=cwd, env=None if env is None else dict(env), process_group=0)
    with _lock:
        _running[proc.pid] = proc
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = _drain(proc)
        from pypto.toolchain.settings_sources import env_var

        raise ToolTimeoutError(tool, timeout, setting, env_var(setting), repro=repro, stderr=err[-4000:]) from None
    except BaseException:
        _kill_group(proc)
        _drain(proc)
        raise
    finally:
        with _lock:
            _running.pop(proc.pid, None)
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()


def _drain(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=DRAIN_S)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        with contextlib.suppress(OSError):
            proc.wait(timeout=DRAIN_S)
        return "", ""
    return out or "", err or ""


def kill_running() -> int:
    """Kill the process group of every tool still running (an interrupt); returns how many."""
    with _lock:
        procs = list(_running.values())
    for proc in procs:
        _kill_group(proc)
    return len(procs)


def interrupt_kills_tools() -> None:
    """Make Ctrl-C (SIGINT) kill the running tools at once, then raise KeyboardInterrupt as usual; and
    SIGTERM / SIGHUP kill them before this process ends as it would have.

    Tools run in process groups of their own, so a signal sent to ours (a terminal's Ctrl-C or hang-up,
    ``timeout``'s SIGTERM) does not reach them; without this an interrupted build would wait for its
    g++ jobs, and a terminated one would leave them running. Only Python's default handlers are
    replaced (a signal the parent shell made us ignore stays ignored); call from the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_interrupt)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _on_terminate)


def _on_interrupt(signum: int, frame: Any) -> None:
    kill_running()
    raise KeyboardInterrupt


def _on_terminate(signum: int, frame: Any) -> None:
    kill_running()
    signal.signal(signum, signal.SIG_DFL)  # then end exactly as the default action would
    os.kill(os.getpid(), signum)
