"""From the simulator's raw DFX records to simpler's on-disk formats: swimlane records, deps.json, name map.

The raw records (``pto_sim_dfx_records``) are measured by the runtime: steady-clock nanoseconds since the
run started, per executed unit (task x block x kernel slot) on the simulated core that ran it.
"""

from __future__ import annotations

import os
import struct
from typing import Any

# The simulator's core ids: 8 AIC cores, then 16 AIV cores (two per cluster).
NUM_CLUSTERS = 8
CLOCK_FREQ_HZ = 1_000_000_000  # the records count host nanoseconds, declared as a 1 GHz clock
DTYPE_NAMES = ("FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT8", "BFLOAT16", "INT64", "UINT64", "UINT16",
               "UINT32", "BOOL", "FP8E4M3FN", "FP8E8M0", "FP4E2M1")
ARG_TYPES = ("INPUT", "OUTPUT", "INOUT", "OUTPUT_EXISTING", "NO_DEP")
EDGE_SOURCES = ("explicit", "creator", "tensormap")
INVALID_KERNEL = -1


def core_types(num_cores: int) -> list[str]:
    """``aic`` / ``aiv`` by core id (AIC cores first, as the simulator numbers them)."""
    clusters = num_cores // 3
    return ["aic" if i < clusters else "aiv" for i in range(num_cores)]


def core_track(core_id: int, num_cores: int) -> str:
    """``AIC_<n>`` / ``AIV_<n>``: the core's index within its type."""
    clusters = num_cores // 3
    return f"AIC_{core_id}" if core_id < clusters else f"AIV_{core_id - clusters}"


def task_label(task_id: int) -> str:
    """``t<k>``, or ``r<ring>t<k>`` outside ring 0 (task id = ring << 32 | local id)."""
    ring, local = task_id >> 32, task_id & 0xFFFFFFFF
    return f"t{local}" if ring == 0 else f"r{ring}t{local}"


def dtype_name(code: int) -> str:
    return DTYPE_NAMES[code] if 0 <= code < len(DTYPE_NAMES) else f"UNKNOWN({code})"


def tensor_id(addr: int, version: int) -> int:
    """FNV-1a 64 over the little-endian buffer address (8 bytes) and version (4 bytes)."""
    h = 0xCBF29CE484222325
    for byte in struct.pack("<Qi", addr, version):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def unit_func_id(task: dict[str, Any], slot: int) -> int:
    return int(task["kernels"][slot])


def swimlane_records(raw: dict[str, Any], level: int, host_cpus: int | None = None) -> dict[str, Any]:
    """``chip_swimlane_records.json`` (simpler's schema; cycles = ns at the declared 1 GHz)."""
    tasks = raw["tasks"]
    num_cores = int(raw["num_cores"])
    aicore, aicpu, units = [], [], []
    for core, t, block, slot, seq, dispatch, start, end, finish in raw["units"]:
        tid = int(tasks[t]["id"])
        aicore.append([core, tid, seq, start, end])
        if level >= 2:
            aicpu.append([core, seq, dispatch, finish])
        units.append([core, seq, tid, unit_func_id(tasks[t], slot), block, slot])
    orch = [{"submit_idx": i, "task_id": int(tasks[t]["id"]), "start_cycles": s, "end_cycles": e, "phase": kind}
            for i, (kind, t, s, e) in enumerate(raw["orch"])] if level >= 4 else []
    metadata: dict[str, Any] = {
        "clock_freq_hz": CLOCK_FREQ_HZ, "num_cores": num_cores, "core_types": core_types(num_cores),
        "source": "pypto-sim", "clock": "host_steady_clock_ns_since_run_start",
        "host_cpus": host_cpus or os.cpu_count() or 1,
        "modelled_streams": ["aicore_tasks"] + (["aicpu_tasks"] if level >= 2 else [])
        + (["aicpu_orchestrator_phases"] if level >= 4 else []),
    }
    if level >= 3:
        metadata["core_to_thread"] = [0] * num_cores
        metadata["aicpu_scheduler_phases_note"] = (
            "not modelled: the simulator dispatches and completes tasks inline under one lock, it has no "
            "scheduler loop whose phases could be measured")
    return {
        "chip_swimlane_level": level,
        "metadata": metadata,
        "aicore_tasks": aicore,
        "aicpu_tasks": aicpu,
        "aicpu_scheduler_phases": [],  # not modelled (see metadata at level >= 3); never synthesized
        "aicpu_orchestrator_phases": [orch] if level >= 4 else [],
        # pypto extras (simpler's reader ignores them): what each unit ran, and every dependency edge, so
        # `python -m pypto.tools.swimlane` can name slices and draw arrows without deps.json.
        "pypto_units": units,
        "pypto_edges": sorted({(int(tasks[e["pred"]]["id"]), int(tasks[e["succ"]]["id"])) for e in raw["edges"]}),
    }


def name_map(kernel_names: dict[int, str]) -> dict[str, Any]:
    """``name_map_<dir>.json``: func_id -> kernel name (simpler's viewers read it as a sibling)."""
    return {"level": 2, "orchestrator_name": None,
            "callable_id_to_name": {str(k): v for k, v in sorted(kernel_names.items())}}


def _view(t: dict[str, Any]) -> dict[str, Any]:
    return {"shape": t["shape"], "start_offset": str(t["start_offset"]), "strides": t["strides"]}


def deps_json(raw: dict[str, Any]) -> dict[str, Any]:
    """``deps.json``: tasks with their tensor arguments, tensors, and every edge with its source."""
    tasks_out, tensors = [], {}
    for task in raw["tasks"]:
        args = []
        for i, a in enumerate(task["args"]):
            t = a["tensor"]
            tid = tensor_id(t["addr"], t["version"])
            tensors.setdefault(tid, {"tensor_id": str(tid), "buffer_addr": str(t["addr"]), "version": t["version"],
                                     "dtype": dtype_name(t["dtype"]),
                                     "buffer_numel": t["size"] // max(1, _itemsize(t["dtype"]))})
            kind = ARG_TYPES[a["kind"]] if 0 <= a["kind"] < len(ARG_TYPES) else str(a["kind"])
            args.append({"idx": i, "type": kind, "tensor_id": str(tid), "dtype": dtype_name(t["dtype"]),
                         **_view(t)})
        kernels = [int(k) for k in task["kernels"]]
        tasks_out.append({"task_id": str(task["id"]), "scope": "manual" if task["manual"] else "auto",
                          "kernel_ids": kernels, "block_num": task["block_num"], "args": args,
                          **({"comm": task["comm"]} if "comm" in task else {})})
    edges = []
    for e in raw["edges"]:
        succ = raw["tasks"][e["succ"]]
        source = EDGE_SOURCES[e["source"]]
        edge: dict[str, Any] = {"pred": str(raw["tasks"][e["pred"]]["id"]), "succ": str(succ["id"]),
                                "arg": e["arg"], "source": source,
                                "flags": ["wait", "retain"] if source == "creator" else ["wait"]}
        if e["arg"] >= 0:
            t = succ["args"][e["arg"]]["tensor"]
            edge["tensor_id"] = str(tensor_id(t["addr"], t["version"]))
            edge.update({"consumer_dtype": dtype_name(t["dtype"]),
                         **{f"consumer_{k}": v for k, v in _view(t).items()}})
        if source == "tensormap":
            edge["overlap"] = "covered" if e["overlap"] == 1 else "other"
            if e.get("producer"):
                edge.update({f"producer_{k}": v for k, v in _view(e["producer"]).items()})
        edges.append(edge)
    return {"version": 1, "source": "pypto-sim", "tasks": tasks_out, "tensors": list(tensors.values()),
            "edges": edges}


_SIZES = (4, 2, 4, 2, 1, 1, 2, 8, 8, 2, 4, 1, 1, 1, 1)


def _itemsize(code: int) -> int:
    return _SIZES[code] if 0 <= code < len(_SIZES) else 1
