"""Argument dumps, PMU rows and scope statistics from the simulator's raw DFX records."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from pypto.runtime.dfx import pmu_tables
from pypto.runtime.dfx.records import ARG_TYPES, dtype_name

SCOPE_STATS_VERSION = 6
_ROLE = {"INPUT": "input", "OUTPUT": "output", "OUTPUT_EXISTING": "output", "INOUT": "inout"}


def _active(kernels: list[int]) -> list[int]:
    return [int(k) for k in kernels if int(k) >= 0]


def _tensor_entry(task: dict[str, Any], arg: int, after: bool, off: int, size: int) -> dict[str, Any]:
    a = task["args"][arg]
    t = a["tensor"]
    kind = ARG_TYPES[a["kind"]] if 0 <= a["kind"] < len(ARG_TYPES) else "INPUT"
    return {"task_id": f"0x{int(task['id']):016x}", "func_id": _active(task["kernels"]), "role": _ROLE[kind],
            "stage": "after_completion" if after else "before_dispatch", "arg_index": arg, "kind": "tensor",
            "dtype": dtype_name(t["dtype"]).lower(), "shape": t["shape"], "strides": t["strides"],
            "start_offset": t["start_offset"], "is_contiguous": bool(t["contiguous"]), "truncated": False,
            "overwritten": False, "bin_offset": off, "bin_size": size}


def args_dump(raw: dict[str, Any], run_dir: str, level: int) -> dict[str, Any]:
    """``args_dump.json``: one entry per dumped tensor (bytes in ``args.bin``) and per scalar argument."""
    tasks = raw["tasks"]
    entries = [_tensor_entry(tasks[t], arg, bool(after), off, size) for t, arg, after, off, size in raw["dumps"]]
    dispatched = {t for t, _arg, after, _o, _s in raw["dumps"] if not after}
    for t in sorted(dispatched):
        task = tasks[t]
        base = len(task["args"])
        for j, value in enumerate(task["scalars"]):
            entries.append({"task_id": f"0x{int(task['id']):016x}", "func_id": _active(task["kernels"]),
                            "role": "input", "stage": "before_dispatch", "arg_index": base + j, "kind": "scalar",
                            "dtype": "uint64", "value": value, "bin_offset": 0, "bin_size": 0,
                            "truncated": False, "overwritten": False})
    roles = [e["role"] for e in entries]
    return {
        "run_dir": run_dir, "bin_format": {"type": "logical_contiguous", "byte_order": "little_endian"},
        "dump_args_level": level, "total_args": len(entries),
        "before_dispatch": sum(e["stage"] == "before_dispatch" for e in entries),
        "after_completion": sum(e["stage"] == "after_completion" for e in entries),
        "input_args": roles.count("input"), "output_args": roles.count("output"), "inout_args": roles.count("inout"),
        "truncated_args": 0, "dropped_records": 0, "dropped_overwrite": 0, "bin_file": "args.bin", "args": entries,
    }


def pmu_csv(raw: dict[str, Any], platform: str, event_type: int) -> tuple[str, int]:
    """(CSV text, effective event type): one row per executed unit, every counter 0 (none is modelled)."""
    event, names = pmu_tables.resolve(platform, event_type)
    clusters = int(raw["num_cores"]) // 3
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([*pmu_tables.FIXED_COLUMNS, *names, "event_type"])
    for core, t, _block, slot, _seq, *_times in raw["units"]:
        task = raw["tasks"][t]
        w.writerow([0, core, f"0x{int(task['id']):016x}", int(task["kernels"][slot]), 0 if core < clusters else 1,
                    0, *([0] * len(names)), event])
    return out.getvalue(), event


def scope_stats_lines(raw: dict[str, Any]) -> list[str]:
    """``scope_stats.jsonl``: a header line, then one line per scope begin / end."""
    window = int(raw.get("ring_task_window") or 0)
    scopes = raw["scopes"]
    head = {"version": SCOPE_STATS_VERSION, "fatal": bool(raw["failed"]), "dropped": 0, "total": len(scopes),
            "task_window_max": [window] * 4, "heap_max": [0] * 4, "dep_pool_max": [0] * 4, "tensormap_max": 0,
            "pypto_note": "heap, dep-pool and tensormap capacities do not exist in the simulator (0 = unknown); "
                          "the heap is never reclaimed during a run, so heap_start stays 0"}
    lines = [json.dumps(head)]
    for s in scopes:
        ring = int(s["ring"])
        lines.append(json.dumps({
            "site": s["site"] or "<unknown>", "phase": "begin" if s["begin"] else "end", "depth": s["depth"],
            "ring": ring, "task_window_start": s["released"][ring], "task_window_end": s["allocated"][ring],
            "heap_start": 0, "heap_end": s["heap"], "dep_pool_start": 0, "dep_pool_end": 0,
            "tensormap": s["tensormap"]}))
    return lines


def write_args(out: Path, raw: dict[str, Any], blob: bytes, level: int) -> None:
    d = out / "args_dump"
    d.mkdir(parents=True, exist_ok=True)
    (d / "args.bin").write_bytes(blob)
    (d / "args_dump.json").write_text(json.dumps(args_dump(raw, str(out.parent), level), indent=1))

