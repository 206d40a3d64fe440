"""run_ranks: one forked process per rank, results over pipes, every rank killed and reaped on every path.

Rules (see the package docstring): fork only with no ChipWorker alive in the parent; each rank builds its
own worker inside ``fn``; torch runs single-threaded in a rank (its OpenMP pool does not survive a fork). A rank ignores SIGINT (the parent owns Ctrl-C and kills the ranks) and gets
SIGKILL if the parent dies (PR_SET_PDEATHSIG), so a killed parent leaves no ranks behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import PyptoError, UserError
from pypto.runtime.distributed.arena import RankArena

PR_SET_PDEATHSIG = 1
FAIL_GRACE_S = 1.0  # after a rank fails, the others get this long to finish (or report their own error)


@dataclass(frozen=True, slots=True)
class RankFailure:
    """Why one rank did not return a result."""

    rank: int
    kind: str       # exception class name, "killed", "exited", "timeout" or "stopped"
    message: str
    details: str = ""  # the rank's traceback, when it raised

    def line(self) -> str:
        return f"rank {self.rank}: {self.kind}: {self.message}"


class DistributedRunError(PyptoError, RuntimeError):
    """One or more ranks failed; the message has one line per failing rank (``rank 3: KernelFaultError: ...``)."""

    def __init__(self, message: str, failures: list[RankFailure]) -> None:
        self.failures = failures
        super().__init__(message)

    @property
    def ranks(self) -> list[int]:
        return [f.rank for f in self.failures]


class DistributedTimeoutError(DistributedRunError):
    """The deadline passed; the message names the ranks still running and what they wait for."""


@dataclass
class _Rank:
    rank: int
    pid: int
    fd: int
    data: bytearray = field(default_factory=bytearray)
    status: int | None = None  # waitpid status once reaped
    eof: bool = False


def run_ranks(nranks: int, fn: Callable[[int], Any], *, timeout_s: float, label: str = "",
              arena: RankArena | None = None) -> list[Any]:
    """Fork ``nranks`` processes, run ``fn(rank)`` in each and return their (picklable) results in rank order.

    Call it after the arena and shared host arrays exist (they are inherited). ``timeout_s`` bounds the
    whole run; ``arena`` (optional) lets a timeout say which signal cell a rank is blocked on. Raises
    :class:`DistributedRunError` (one line per failing rank) or :class:`DistributedTimeoutError`; on any
    path, KeyboardInterrupt included, every rank is killed and reaped before this returns or raises.
    """
    if int(nranks) < 1:
        raise UserError(f"run_ranks: nranks must be >= 1, got {nranks}")
    if timeout_s <= 0:
        raise UserError(f"run_ranks: timeout_s must be positive, got {timeout_s}")
    _check_fork_safe()
    what = f"run_ranks({label})" if label else "run_ranks"
    ranks: list[_Rank] = []
    try:
        for r in range(int(nranks)):
            ranks.append(_spawn(r, fn, ranks))
        failures = _collect(ranks, time.monotonic() + timeout_s, timeout_s, arena, what)
    finally:
        _kill_and_reap(ranks)
    if failures:
        cls = DistributedTimeoutError if any(f.kind == "timeout" for f in failures) else DistributedRunError
        raise cls(_message(what, failures, int(nranks), timeout_s), failures)
    return [_decode(rk)[1] for rk in ranks]


def _check_fork_safe() -> None:
    from pypto.runtime import build, worker

    worker.close_implicit_workers()  # idle caches of compiled(...) calls: recreated when next needed
    live = worker.live_worker_count()
    if live:
        raise UserError(
            f"run_ranks: {live} ChipWorker(s) are alive in this process; forking would copy their core threads "
            "mid-state into every rank",
            hint="leave their `with` blocks (or close() them) before running a distributed program; each rank "
                 "creates its own ChipWorker inside fn")
    build.wait_background()  # a background build thread must not hold a lock while we fork


def _spawn(rank: int, fn: Callable[[int], Any], started: list[_Rank]) -> _Rank:
    rfd, wfd = os.pipe()
    parent = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the rank: never returns into the caller's code
        os.close(rfd)
        for other in started:
            with contextlib.suppress(OSError):
                os.close(other.fd)
        _child(rank, fn, wfd, parent)
    os.close(wfd)
    return _Rank(rank, pid, rfd)


def _child(rank: int, fn: Callable[[int], Any], wfd: int, parent: int) -> None:
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _die_with_parent()
        _single_threaded_torch()
        if os.getppid() != parent:  # the parent died before the death signal was armed
            os._exit(1)
        try:
            data = pickle.dumps(("ok", fn(rank)))
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which re-raises
            data = pickle.dumps(("err", type(exc).__name__, str(exc), traceback.format_exc()))
        view = memoryview(data)
        while view:
            view = view[os.write(wfd, view):]
    except BaseException:  # noqa: BLE001 - nothing can be reported any more; exit non-zero
        code = 3
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _single_threaded_torch() -> None:
    """A forked rank inherits the parent's OpenMP pool in a broken state (its threads are gone): a
    multi-threaded torch op would hang. One intra-op thread per rank (which also fits the host's
    cores shared by all ranks) keeps torch usable in ``fn``."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _collect(ranks: list[_Rank], deadline: float, timeout_s: float, arena: RankArena | None,
             what: str) -> list[RankFailure]:
    failed_at: float | None = None
    failures: dict[int, RankFailure] = {}
    while True:
        open_ = [rk for rk in ranks if not rk.eof]
        if not open_:
            break
        now = time.monotonic()
        if now >= deadline:
            for rk in open_:
                status = arena.wait_status(rk.rank) if arena is not None and not arena.closed else None
                failures[rk.rank] = RankFailure(rk.rank, "timeout", f"still running after {timeout_s:g} s"
                                                + (f"; {status}" if status else ""))
            break
        if failed_at is not None and now >= failed_at + FAIL_GRACE_S:
            first = min(failures)
            for rk in open_:
                failures[rk.rank] = RankFailure(rk.rank, "stopped", f"killed, still running {FAIL_GRACE_S:g} s "
                                                f"after rank {first} failed")
            break
        limit = min(deadline, failed_at + FAIL_GRACE_S if failed_at is not None else deadline) - now
        ready, _, _ = select.select([rk.fd for rk in open_], [], [], max(0.0, min(limit, 0.5)))
        for rk in open_:
            if rk.fd in ready and _read(rk):
                f = _failure_of(rk)
                if f is not None:
                    failures[rk.rank] = f
                    failed_at = failed_at if failed_at is not None else time.monotonic()
    return [failures[r] for r in sorted(failures)]


def _read(rk: _Rank) -> bool:
    """Read what is there; True at end of file (the rank then is reaped)."""
    chunk = os.read(rk.fd, 1 << 16)
    if chunk:
        rk.data += chunk
        return False
    rk.eof = True
    os.close(rk.fd)
    try:
        _, rk.status = os.waitpid(rk.pid, 0)
    except ChildProcessError:  # SIGCHLD ignored: the kernel reaped it, its status is gone
        rk.status = 0
    return True


def _decode(rk: _Rank) -> tuple[Any, ...]:
    try:
        return pickle.loads(bytes(rk.data)) if rk.data else ()
    except Exception:  # noqa: BLE001 - a truncated result (the rank died while writing)
        return ()


def _failure_of(rk: _Rank) -> RankFailure | None:
    msg = _decode(rk)
    if msg and msg[0] == "ok" and rk.status == 0:
        return None
    if msg and msg[0] == "err":
        return RankFailure(rk.rank, msg[1], msg[2], msg[3])
    st = rk.status or 0
    if os.WIFSIGNALED(st):
        return RankFailure(rk.rank, "killed", f"terminated by {signal.Signals(os.WTERMSIG(st)).name} (no result)")
    return RankFailure(rk.rank, "exited", f"exit code {os.WEXITSTATUS(st)} without a result")


def _kill_and_reap(ranks: list[_Rank]) -> None:
    """SIGKILL every rank not yet reaped, then wait for each (no zombies); close the pipes.

    SIGINT is held back meanwhile, so a second Ctrl-C cannot leave ranks unreaped.
    """
    masked = _block_sigint()
    try:
        _reap_all(ranks)
    finally:
        if masked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _block_sigint() -> bool:
    import threading

    if threading.current_thread() is not threading.main_thread():
        return False
    return signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _reap_all(ranks: list[_Rank]) -> None:
    for rk in ranks:
        if rk.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(rk.pid, signal.SIGKILL)
    for rk in ranks:
        if rk.status is None:
            while True:
                try:
                    _, rk.status = os.waitpid(rk.pid, 0)
                    break
                except InterruptedError:
                    continue
                except ChildProcessError:
                    rk.status = -1
                    break
        if not rk.eof:
            rk.eof = True
            with contextlib.suppress(OSError):
                os.close(rk.fd)


def _message(what: str, failures: list[RankFailure], nranks: int, timeout_s: float) -> str:
    timed = [f.rank for f in failures if f.kind == "timeout"]
    if timed:
        head = (f"{what}: timed out after {timeout_s:g} s; ranks still running: "
                + ", ".join(map(str, timed)))
    else:
        head = f"{what}: {len(failures)} of {nranks} rank(s) failed"
    return "\n".join([head, *(f.line() for f in failures)])
