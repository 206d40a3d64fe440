"""Merged swimlane trace (Chrome / Perfetto trace-event JSON) and a text summary, from the on-disk records.

Input is what a run leaves in ``dfx_outputs/`` (``chip_swimlane_records.json``, optional ``deps.json`` and
``name_map_*.json``), so ``python -m pypto.tools.swimlane`` re-renders exactly what the run wrote.
Tracks: pid 1 Orchestrator (level 4), pid 3 Scheduler View (dispatch -> finish, level >= 2), pid 4 Worker
View (one thread per simulated core, slices ``<kernel>(t<k>)``); dependency arrows are ``s``/``f`` flow
events from the end of a producer's last unit to the start of the consumer's first unit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.runtime.dfx.records import core_track, task_label

PID_ORCH, PID_SCHED, PID_WORKER = 1, 3, 4
CAVEAT = ("pypto CPU simulation: a functional model. Kernel time is the host CPU time of the tile-ISA loops, "
          "24 simulated cores share the host's CPUs (preemption stretches bars), and dispatch->start is thread "
          "wake-up latency. Read the shape of the schedule, not device timing.")


@dataclass
class Unit:
    core: int
    task: int
    func_id: int
    start: float  # us
    end: float
    dispatch: float | None = None
    finish: float | None = None


@dataclass
class Timeline:
    """Units per task, kernel names, and edges (task ids), in microseconds."""

    num_cores: int
    units: list[Unit]
    names: dict[int, str]
    edges: list[tuple[int, int]]
    orch: list[dict[str, Any]] = field(default_factory=list)
    level: int = 0
    us_per_cycle: float = 1e-3

    def task_name(self, task: int) -> str:
        fids = {u.func_id for u in self.units if u.task == task}
        fid = min(fids) if fids else -1
        return f"{self.names.get(fid, f'func{fid}' if fid >= 0 else 'task')}({task_label(task)})"


def _func_ids_from_deps(deps: dict[str, Any] | None) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for t in (deps or {}).get("tasks", []):
        out[int(t["task_id"])] = [int(k) for k in t["kernel_ids"]]
    return out


def timeline(records: dict[str, Any], deps: dict[str, Any] | None = None,
             names: dict[str, Any] | None = None) -> Timeline:
    """Join records, deps.json and a name map into one timeline."""
    meta = records.get("metadata", {})
    us = 1e6 / float(meta.get("clock_freq_hz") or 1e9)
    num_cores = int(meta.get("num_cores") or len(meta.get("core_types", [])) or 24)
    by_key = {(c, seq): (d, f) for c, seq, d, f in records.get("aicpu_tasks", [])}
    extra = {(u[0], u[1]): u for u in records.get("pypto_units", [])}
    dep_kernels = _func_ids_from_deps(deps)
    units = []
    for core, tid, seq, start, end, *_ in records.get("aicore_tasks", []):
        fid = extra[(core, seq)][3] if (core, seq) in extra else _first_active(dep_kernels.get(int(tid), []))
        d, f = by_key.get((core, seq), (None, None))
        units.append(Unit(core, int(tid), fid, start * us, end * us, None if d is None else d * us,
                          None if f is None else f * us))
    if deps is not None:
        edges = sorted({(int(e["pred"]), int(e["succ"])) for e in deps.get("edges", [])})
    else:
        edges = [(int(a), int(b)) for a, b in records.get("pypto_edges", [])]
    name_of = {int(k): v for k, v in ((names or {}).get("callable_id_to_name") or {}).items()}
    orch = [o for thread in records.get("aicpu_orchestrator_phases", []) for o in thread]
    return Timeline(num_cores, units, name_of, edges, orch, int(records.get("chip_swimlane_level", 0)), us)


def _first_active(kernels: list[int]) -> int:
    return next((k for k in kernels if k >= 0), -1)


def _meta(pid: int, name: str, sort: int) -> list[dict[str, Any]]:
    return [{"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}},
            {"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": sort}}]


def _thread(pid: int, tid: int, name: str) -> dict[str, Any]:
    return {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}


def chrome_trace(tl: Timeline) -> dict[str, Any]:
    """``{"traceEvents": [...]}`` with one Worker View thread per simulated core and flow arrows."""
    fanin: dict[int, int] = {}
    fanout: dict[int, int] = {}
    for a, b in tl.edges:
        fanout[a] = fanout.get(a, 0) + 1
        fanin[b] = fanin.get(b, 0) + 1
    ev: list[dict[str, Any]] = [*_meta(PID_WORKER, "Worker View", 4)]
    cores = sorted({u.core for u in tl.units})
    ev += [_thread(PID_WORKER, c, core_track(c, tl.num_cores)) for c in cores]
    for u in sorted(tl.units, key=lambda u: (u.core, u.start)):
        span = (u.finish - u.dispatch) if u.finish is not None and u.dispatch is not None else u.end - u.start
        ev.append({"ph": "X", "pid": PID_WORKER, "tid": u.core, "name": tl.task_name(u.task), "ts": u.start,
                   "dur": max(u.end - u.start, 0.0),
                   "args": {"taskId": str(u.task), "func_id": u.func_id, "duration-us": round(span, 3),
                            "kernel-duration-us": round(u.end - u.start, 3), "fanin-hint": fanin.get(u.task, 0),
                            "fanout-hint": fanout.get(u.task, 0)}})
    if tl.level >= 2:
        ev += [*_meta(PID_SCHED, "Scheduler View", 3)]
        ev += [_thread(PID_SCHED, c, core_track(c, tl.num_cores)) for c in cores]
        for u in tl.units:
            if u.dispatch is not None and u.finish is not None:
                ev.append({"ph": "X", "pid": PID_SCHED, "tid": u.core, "name": tl.task_name(u.task),
                           "ts": u.dispatch, "dur": max(u.finish - u.dispatch, 0.0),
                           "args": {"taskId": str(u.task), "phase": "dispatch->finish"}})
    if tl.level >= 4 and tl.orch:
        ev += [*_meta(PID_ORCH, "Orchestrator", 1), _thread(PID_ORCH, 0, "orchestrator")]
        for o in tl.orch:
            ev.append({"ph": "X", "pid": PID_ORCH, "tid": 0, "name": f"{o.get('phase', 'orch_submit')}"
                       f"({task_label(int(o['task_id']))})", "ts": o["start_cycles"] * tl.us_per_cycle,
                       "dur": max((o["end_cycles"] - o["start_cycles"]) * tl.us_per_cycle, 0.0),
                       "args": {"taskId": str(o["task_id"]), "submit_idx": o["submit_idx"]}})
    ev += _flows(tl)
    return {"traceEvents": ev, "displayTimeUnit": "ns",
            "otherData": {"source": "pypto-sim", "level": tl.level, "caveat": CAVEAT}}


def _flows(tl: Timeline) -> list[dict[str, Any]]:
    last: dict[int, Unit] = {}
    first: dict[int, Unit] = {}
    for u in tl.units:
        if u.task not in last or u.end > last[u.task].end:
            last[u.task] = u
        if u.task not in first or u.start < first[u.task].start:
            first[u.task] = u
    out = []
    for i, (a, b) in enumerate(tl.edges):
        if a not in last or b not in first:
            continue  # dependency-only / allocation tasks run no unit
        p, c = last[a], first[b]
        ts = max(p.start, p.end - min(0.001, (p.end - p.start) / 2))  # inside the producer's slice
        common = {"cat": "dep", "name": "dep", "id": i + 1, "pid": PID_WORKER}
        out.append({**common, "ph": "s", "tid": p.core, "ts": ts})
        out.append({**common, "ph": "f", "bp": "e", "tid": c.core, "ts": c.start})
    return out


def summary(tl: Timeline) -> str:
    """Per-core utilisation over the makespan, and the observed critical path (last-arriving producers)."""
    if not tl.units:
        return "no kernel units were recorded"
    t0 = min(u.start for u in tl.units)
    t1 = max(u.end for u in tl.units)
    span = max(t1 - t0, 1e-9)
    lines = [f"{len({u.task for u in tl.units})} tasks, {len(tl.units)} units on "
             f"{len({u.core for u in tl.units})} of {tl.num_cores} cores; makespan {span:.1f} us", "",
             "core       units   busy us   util"]
    busy: dict[int, tuple[int, float]] = {}
    for u in tl.units:
        n, b = busy.get(u.core, (0, 0.0))
        busy[u.core] = (n + 1, b + u.end - u.start)
    for core in sorted(busy):
        n, b = busy[core]
        lines.append(f"{core_track(core, tl.num_cores):<9} {n:>6} {b:>9.1f} {100 * b / span:>5.1f}%")
    lines += ["", "critical path (each step: the producer that finished last):"]
    for task, start, end in critical_path(tl):
        lines.append(f"  {tl.task_name(task):<32} {start - t0:>10.1f} .. {end - t0:>10.1f} us")
    return "\n".join(lines)


def critical_path(tl: Timeline) -> list[tuple[int, float, float]]:
    """(task, start, end) from a source to the last task to finish, following the latest-ending producer."""
    start: dict[int, float] = {}
    end: dict[int, float] = {}
    for u in tl.units:
        start[u.task] = min(start.get(u.task, u.start), u.start)
        end[u.task] = max(end.get(u.task, u.end), u.end)
    preds: dict[int, list[int]] = {}
    for a, b in tl.edges:
        if a in end:
            preds.setdefault(b, []).append(a)
    task = max(end, key=lambda t: end[t])
    path = [task]
    seen = {task}
    while preds.get(task):
        task = max(preds[task], key=lambda t: end[t])
        if task in seen:
            break
        seen.add(task)
        path.append(task)
    return [(t, start[t], end[t]) for t in reversed(path)]
