"""Upstream's ``pypto.runtime.bench``: :func:`benchmark` returning :class:`BenchmarkStats` of span trees.

Upstream reads per-launch timing from the device runtime's ``[STRACE]`` log markers. The simulated
runtime measures each launch itself, so every launch here becomes one :class:`TraceInvocation` whose
spans are ``chip.run`` (host wall of the call), ``chip.run.runner_run.device_wall`` (the simulated
chip's wall from orchestration start to the last task's end, ``clk=dev``) and its two children
``orch`` (the orchestration function) and ``sched`` (task execution). So, unlike upstream's sim
platforms, ``device_wall_us`` is not zero here: it is the simulator's wall time, not hardware time.
A distributed (HOST-level) program is timed per round as one host span (no device spans).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pypto.runtime.config import RunConfig

_HOST, _DEVICE = "chip.run", "chip.run.runner_run.device_wall"
_ORCH, _SCHED = f"{_DEVICE}.orch", f"{_DEVICE}.sched"
_METRICS = {"device": "device_wall_us", "host": "host_wall_us", "effective": "effective_us"}


@dataclass
class TraceSpan:
    """One span of a launch's call tree; ``ts``/``dur`` in nanoseconds, ``attrs`` has ``clk=dev`` on device spans."""

    pid: int
    tid: int
    inv: int
    hid: str
    depth: int
    name: str
    ts: int
    dur: int
    attrs: str = ""

    @property
    def is_device(self) -> bool:
        return "clk=dev" in self.attrs

    @property
    def dur_us(self) -> float:
        return self.dur / 1000.0


@dataclass
class TraceInvocation:
    """The spans of one launch (``pid`` = rank, ``inv`` = launch number, ``hid`` = the program's name)."""

    pid: int
    inv: int
    hid: str
    spans: list[TraceSpan] = field(default_factory=list)

    def root(self) -> TraceSpan | None:
        return next((s for s in self.spans if s.depth == 0), None)

    def by_name(self) -> dict[str, TraceSpan]:
        found: dict[str, TraceSpan] = {}
        for s in self.spans:
            found.setdefault(s.name, s)
        return found

    @property
    def task(self) -> str:
        return self.hid

    @property
    def task_name(self) -> str:
        return self.hid

    def _us(self, name: str) -> float:
        span = self.by_name().get(name)
        return span.dur_us if span is not None else 0.0

    @property
    def device_wall_us(self) -> float:
        return self._us(_DEVICE)

    @property
    def host_wall_us(self) -> float:
        return self._us(_HOST)

    @property
    def effective_us(self) -> float:
        """The union of the ``orch`` and ``sched`` windows (µs); 0 without them."""
        by = self.by_name()
        spans = [s for s in (by.get(_ORCH), by.get(_SCHED)) if s is not None]
        if not spans:
            return 0.0
        return (max(s.ts + s.dur for s in spans) - min(s.ts for s in spans)) / 1000.0

    def format_tree(self, *, us: bool = True, value_fn: Callable[[TraceSpan], list[str]] | None = None) -> str:
        """The span tree, one line per span indented by depth, device spans tagged ``[dev]``."""
        rows = []
        for s in sorted(self.spans, key=lambda s: (s.name.count("."), s.ts)):
            cols = value_fn(s) if value_fn is not None else [f"{s.dur_us:.1f}us" if us else f"{s.dur}ns"]
            label = "   " * s.depth + s.name.rsplit(".", 1)[-1] + (" [dev]" if s.is_device else "")
            rows.append((label, cols))
        width = max((len(label) for label, _ in rows), default=0)
        return "\n".join((label.ljust(width) + "".join("  " + c for c in cols)).rstrip() for label, cols in rows)


@dataclass
class BenchmarkStats:
    """Per-round timing from :func:`benchmark` (µs); the min/median/... helpers read ``device_wall_us``."""

    device_wall_us: list[float] = field(default_factory=list)
    host_wall_us: list[float] = field(default_factory=list)
    rounds: int = 0
    warmup: int = 0
    invocations: list[TraceInvocation] = field(default_factory=list)
    rounds_dispatches: list[dict[int, list[TraceInvocation]]] = field(default_factory=list)
    fallback_flattened: bool = False
    unstable_dispatch_slots: bool = False

    def dispatch_groups(self) -> dict[tuple[int, int], list[TraceInvocation]]:
        """``{(rank, slot): [round0, round1, ...]}`` of a distributed run ({} for one chip)."""
        out: dict[tuple[int, int], list[TraceInvocation]] = {}
        for ranks in self.rounds_dispatches:
            for pid, dispatches in ranks.items():
                for slot, d in enumerate(dispatches):
                    out.setdefault((pid, slot), []).append(d)
        return dict(sorted(out.items()))

    def dispatch_tasks(self) -> dict[tuple[int, int], str]:
        return {key: group[0].task_name for key, group in self.dispatch_groups().items() if group}

    def per_dispatch(self, metric: str = "device") -> dict[tuple[int, int], list[float]]:
        attr = _metric(metric)
        return {key: [getattr(d, attr) for d in group] for key, group in self.dispatch_groups().items()}

    def per_rank(self, metric: str = "device") -> dict[int, list[float]]:
        attr = _metric(metric)
        out: dict[int, list[float]] = {}
        for k, ranks in enumerate(self.rounds_dispatches):
            for pid, dispatches in ranks.items():
                out.setdefault(pid, [0.0] * len(self.rounds_dispatches))[k] = sum(getattr(d, attr) for d in dispatches)
        return out

    def per_round(self, metric: str = "device") -> list[float]:
        """One value per measured round: ``device``, ``host``, ``effective`` or ``union`` (distributed only)."""
        if metric == "device":
            return list(self.device_wall_us)
        if metric == "host":
            return list(self.host_wall_us)
        if metric == "effective":
            ranks = self.per_rank("effective")
            if ranks:
                return [max(v[k] for v in ranks.values()) for k in range(len(self.rounds_dispatches))]
            return [iv.effective_us for iv in self.invocations]
        if metric == "union":
            return [] if not self.rounds_dispatches else list(self.host_wall_us)
        raise ValueError(f"per_round(): unknown metric {metric!r}")

    def format_tree(self, launch: int | None = None, *, us: bool = True) -> str:
        """The span tree of measured launch ``launch`` (default: every launch, one after another)."""
        chosen = self.invocations if launch is None else [self.invocations[launch]]
        if not chosen:
            return "BenchmarkStats: no span tree captured"
        return "\n\n".join(f"launch {iv.inv} ({iv.hid}):\n{iv.format_tree(us=us)}" for iv in chosen)

    def print_tree(self, launch: int | None = None, *, us: bool = True, file: Any = None) -> None:
        print(self.format_tree(launch, us=us), file=file)

    device_us_min = property(lambda self: min(self.device_wall_us, default=0.0))
    device_us_max = property(lambda self: max(self.device_wall_us, default=0.0))
    device_us_median = property(lambda self: statistics.median(self.device_wall_us) if self.device_wall_us else 0.0)
    device_us_mean = property(lambda self: statistics.fmean(self.device_wall_us) if self.device_wall_us else 0.0)
    device_us_stdev = property(lambda self: statistics.stdev(self.device_wall_us)
                               if len(self.device_wall_us) > 1 else 0.0)
    samples = property(lambda self: self.device_wall_us)
    device_wall_us_min = device_us_min
    device_wall_us_max = device_us_max
    device_wall_us_median = device_us_median
    device_wall_us_mean = device_us_mean
    device_wall_us_stdev = device_us_stdev

    @property
    def all_zero_device(self) -> bool:
        """True when samples exist and none measured device time (a distributed run's host-only rounds)."""
        return bool(self.device_wall_us) and not any(self.device_wall_us)

    def __str__(self) -> str:
        if not self.device_wall_us:
            return f"BenchmarkStats(rounds={self.rounds}: no samples)"
        return (f"BenchmarkStats(rounds={self.rounds}, warmup={self.warmup}): device_wall_us "
                f"min={self.device_us_min:.1f} median={self.device_us_median:.1f} mean={self.device_us_mean:.1f} "
                f"max={self.device_us_max:.1f} stdev={self.device_us_stdev:.1f}")


def _metric(metric: str) -> str:
    if metric not in _METRICS:
        raise ValueError(f"unknown metric {metric!r}; use one of {', '.join(_METRICS)}")
    return _METRICS[metric]


def _launch(pid: int, inv: int, hid: str, t0: int, host_ns: int, orch_ns: int, device_ns: int) -> TraceInvocation:
    dev = "clk=dev"
    spans = [TraceSpan(pid, 0, inv, hid, 0, _HOST, t0, host_ns),
             TraceSpan(pid, 0, inv, hid, 1, _DEVICE, 0, device_ns, dev),
             TraceSpan(pid, 0, inv, hid, 2, _ORCH, 0, min(orch_ns, device_ns), dev),
             TraceSpan(pid, 0, inv, hid, 2, _SCHED, 0, device_ns, dev)]
    return TraceInvocation(pid, inv, hid, spans)


def _is_distributed(compiled: Any) -> bool:
    return callable(getattr(compiled, "prepare", None)) and hasattr(compiled, "host_callable")


def benchmark(compiled: Any, args: Sequence[Any], *, rounds: int = 100, warmup: int = 3, platform: str | None = None,
              device_id: int | None = None, config: RunConfig | None = None, persistent: bool = False,
              reset_persistent_windows: bool | None = None) -> BenchmarkStats:
    """Register ``compiled`` once and time ``rounds`` launches after ``warmup`` discarded ones.

    ``platform``/``device_id`` or ``config`` (not both) choose where a one-chip program runs;
    a distributed program takes only ``config`` (its devices are fixed at compile time), and
    ``persistent``/``reset_persistent_windows`` apply only to it (accepted; each round here is one
    call of the program). Raises ``ValueError`` on a bad combination.
    """
    if rounds <= 0:
        raise ValueError(f"rounds must be positive, got {rounds}")
    if warmup < 0:
        raise ValueError(f"warmup must be non-negative, got {warmup}")
    if _is_distributed(compiled):
        if platform is not None or device_id is not None:
            raise ValueError("benchmark(): platform=/device_id= do not apply to a distributed program; its devices "
                             "are fixed at compile time (pass config=RunConfig(...) instead)")
        return _benchmark_distributed(compiled, args, rounds, warmup, config)
    if persistent or reset_persistent_windows is not None:
        raise ValueError("benchmark(): persistent/reset_persistent_windows apply only to a distributed program")
    if config is not None and (platform is not None or device_id is not None):
        raise ValueError("benchmark(): pass either config=... or platform=/device_id=, not both")
    if config is None:
        config = RunConfig(platform=platform or getattr(compiled, "platform", None) or "a2a3sim",
                           device_id=device_id or 0)
    from pypto.runtime.dispatch import artifact_of
    from pypto.runtime.worker import ChipWorker, implicit_worker

    info = artifact_of(compiled)
    worker = ChipWorker.current(platform=config.platform, runtime=info.runtime) or implicit_worker(
        config.platform, info.runtime)
    prog = worker._load(info)
    stats = BenchmarkStats(rounds=rounds, warmup=warmup)
    for k in range(warmup + rounds):
        t0 = time.monotonic_ns()
        worker._run_loaded(prog, tuple(args), config)
        if k < warmup:
            continue
        run = worker.last_run
        inv = _launch(0, k - warmup, info.root.name, t0, int(run.host_s * 1e9), int(run.orch_s * 1e9),
                      int(run.device_s * 1e9))
        stats.invocations.append(inv)
        stats.device_wall_us.append(inv.device_wall_us)
        stats.host_wall_us.append(inv.host_wall_us)
    return stats


def _benchmark_distributed(compiled: Any, args: Sequence[Any], rounds: int, warmup: int,
                           config: RunConfig | None) -> BenchmarkStats:
    stats = BenchmarkStats(rounds=rounds, warmup=warmup)
    name = str(getattr(compiled, "output_dir", "program"))
    for k in range(warmup + rounds):
        t0 = time.monotonic_ns()
        compiled(*args, config=config)
        if k < warmup:
            continue
        span = TraceSpan(0, 0, k - warmup, name, 0, _HOST, t0, time.monotonic_ns() - t0)
        stats.invocations.append(TraceInvocation(0, k - warmup, name, [span]))
        stats.host_wall_us.append(span.dur_us)
        stats.device_wall_us.append(0.0)
    return stats


__all__ = ["BenchmarkStats", "TraceInvocation", "TraceSpan", "benchmark"]
