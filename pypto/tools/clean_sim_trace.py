"""Clean an operator-simulator dump (``visualize_data.bin``) into a readable AI-core pipeline trace.

    python -m pypto.tools.clean_sim_trace <visualize_data.bin | OPPROF_* dir> [-o DIR] [--keep-scalar]
                                          [--raw-metrics] [--no-copy-raw]

The input comes from CANN's ``msprof op simulator`` (not from a pypto run). It is a sequence of blocks, each a
12-byte header ``<QBBBB`` (payload size, type, padding, instr version, magic 0x5A) and a JSON payload
(SOURCE blocks carry a 4096-byte path first). From the TRACE block this writes ``trace.clean.json``: only
instruction slices on the pipeline lanes (MTE2, MTE1, CUBE, VECTOR, FIXPIPE, MTE3; SCALAR with
``--keep-scalar``) in dataflow order, overlapping instructions of one pipe split into sub-lanes
(``MTE1``, ``MTE1#1``, ...), SET_FLAG -> WAIT_FLAG pairs redrawn as arrows between the producing and the
consuming instruction, timestamps unchanged. From API_INSTR it writes ``instr_metrics.json`` (per-core
instruction records; ``--raw-metrics`` keeps the block verbatim). With ``-o`` the raw simulator files are
copied to ``<DIR>/raw_simulator/``. Exit 1 on a missing or corrupt input or one without a TRACE block.
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HEADER = struct.Struct("<QBBBB")
MAGIC = 0x5A
SOURCE, TRACE, API_INSTR = 1, 2, 4
SOURCE_PATH_BYTES = 4096
LANES = ("MTE2", "MTE1", "CUBE", "VECTOR", "FIXPIPE", "MTE3", "SCALAR")  # dataflow order
LANE_TITLES = {"MTE2": "MTE2 (load GM->UB)", "MTE1": "MTE1 (load L1->L0)", "CUBE": "CUBE (matmul)",
               "VECTOR": "VECTOR (compute)", "FIXPIPE": "FIXPIPE (quant/out)", "MTE3": "MTE3 (store UB->GM)",
               "SCALAR": "SCALAR (setup)"}
LANE_COLORS = {"MTE2": "thread_state_iowait", "MTE1": "thread_state_iowait", "CUBE": "rail_response",
               "VECTOR": "good", "FIXPIPE": "yellow", "MTE3": "cq_build_passed", "SCALAR": "grey"}
DROPPED_LANES = frozenset({"CACHEMISS", "FLOWCTRL", "ALL"})
SYNC_OPS = frozenset({"SET_FLAG", "WAIT_FLAG", "BAR"})
PIPE_NAMES = {"VEC": "VECTOR"}  # flag details spell some pipes differently from the lanes


class DumpError(ValueError):
    """A corrupt or unusable dump (printed as ``error: ...``, exit 1)."""


def blocks(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(type, payload)`` of every block, padding (and a SOURCE block's path) removed."""
    pos = 0
    while pos + HEADER.size <= len(data):
        size, kind, padding, _version, magic = HEADER.unpack_from(data, pos)
        start = pos + HEADER.size
        if magic != MAGIC or size > len(data) - start or padding > min(3, size):
            raise DumpError(f"corrupt block header at byte {pos} (size {size}, padding {padding}, magic {magic:#x})")
        payload = data[start:start + size]
        if kind == SOURCE:
            if size < SOURCE_PATH_BYTES:
                raise DumpError(f"SOURCE block at byte {pos} is shorter than its {SOURCE_PATH_BYTES}-byte path")
            payload = payload[SOURCE_PATH_BYTES:]
        yield kind, payload[:len(payload) - padding]
        pos = start + size


def _fields(detail: Any) -> dict[str, str]:
    out = {}
    for part in str(detail or "").split(","):
        key, sep, value = part.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _pipe(name: str) -> str:
    return PIPE_NAMES.get(name, name)


def split_sublanes(slices: list[dict[str, Any]]) -> None:
    """Give every slice a ``lane`` (tid) so slices on one tid never partially overlap."""
    by_pipe: dict[tuple[Any, str], list[dict[str, Any]]] = {}
    for s in slices:
        by_pipe.setdefault((s.get("pid", ""), s["pipe"]), []).append(s)
    for (_pid, pipe), group in by_pipe.items():
        free_at: list[float] = []
        for s in sorted(group, key=lambda s: (s.get("ts", 0.0), s.get("dur", 0.0))):
            start = s.get("ts", 0.0)
            k = next((i for i, t in enumerate(free_at) if t <= start), len(free_at))
            if k == len(free_at):
                free_at.append(0.0)
            free_at[k] = start + s.get("dur", 0.0)
            s["sub"], s["lane"] = k, pipe if k == 0 else f"{pipe}#{k}"


def _flag_spans(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """Matched B/E pairs of one flag op: pid, detail fields, begin and end time."""
    open_: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    spans = []
    for e in events:
        if e.get("name") != name:
            continue
        key = (e.get("pid", ""), e.get("tid", ""))
        if e.get("ph") == "B":
            open_.setdefault(key, []).append(e)
        elif e.get("ph") == "E" and open_.get(key):
            b = open_[key].pop()
            spans.append({"pid": key[0], "fields": _fields(b.get("args", {}).get("detail")),
                          "begin": b.get("ts", 0.0), "end": e.get("ts", 0.0)})
    return spans


def sync_arrows(slices: list[dict[str, Any]], events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Flow events from the instruction before each SET_FLAG to the first one after its WAIT_FLAG."""
    lanes: dict[tuple[Any, str], list[dict[str, Any]]] = {}
    for s in sorted(slices, key=lambda s: s.get("ts", 0.0)):
        lanes.setdefault((s.get("pid", ""), s["pipe"]), []).append(s)

    def key(span: dict[str, Any]) -> tuple[Any, str, str, str]:
        f = span["fields"]
        return span["pid"], _pipe(f.get("PIPE", "")), _pipe(f.get("TRIGGERPIPE", "")), f.get("FLAGID", "")

    waits: dict[tuple[Any, str, str, str], list[dict[str, Any]]] = {}
    for w in sorted(_flag_spans(events, "WAIT_FLAG"), key=lambda w: w["begin"]):
        waits.setdefault(key(w), []).append(w)
    arrows, skipped = [], 0
    for flag in sorted(_flag_spans(events, "SET_FLAG"), key=lambda s: s["begin"]):
        pid, producer, consumer, flag_id = key(flag)
        pending = waits.get(key(flag))
        if not pending:
            skipped += 1
            continue
        wait = pending.pop(0)
        before = [s for s in lanes.get((pid, producer), []) if s.get("ts", 0.0) <= flag["begin"]]
        after = [s for s in lanes.get((pid, consumer), []) if s.get("ts", 0.0) >= wait["end"]]
        if not before or not after:
            skipped += 1
            continue
        src, dst = before[-1], after[0]
        label = f"{flag['fields'].get('PIPE', '?')}->{flag['fields'].get('TRIGGERPIPE', '?')} flag{flag_id or '?'}"
        n = len(arrows) // 2 + 1
        arrows.append({"ph": "s", "id": n, "cat": "sync", "name": label, "pid": pid, "tid": src["lane"],
                       "ts": src.get("ts", 0.0)})
        arrows.append({"ph": "f", "id": n, "cat": "sync", "bp": "e", "name": label, "pid": pid, "tid": dst["lane"],
                       "ts": dst.get("ts", 0.0)})
    return arrows, skipped


def clean_trace(raw: dict[str, Any], keep_scalar: bool = False) -> tuple[dict[str, Any], int]:
    """(cleaned Chrome trace, number of sync flags that could not be anchored) of a TRACE block."""
    events = raw.get("traceEvents", [])
    if not isinstance(events, list):
        raise DumpError("TRACE block has no traceEvents list")
    keep = {lane for lane in LANES if keep_scalar or lane != "SCALAR"}
    slices = [{**e, "pipe": e.get("tid", "")} for e in events
              if e.get("ph") == "X" and e.get("name") not in SYNC_OPS and e.get("tid", "") not in DROPPED_LANES
              and (e.get("tid", "") in keep or e.get("tid", "") not in LANES)]
    split_sublanes(slices)
    rank = {lane: i for i, lane in enumerate(LANES)}
    out: list[dict[str, Any]] = []
    for order, pid in enumerate(sorted({s.get("pid", "") for s in slices}, key=str)):
        out += [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": pid}},
                {"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": order}}]
        seen = {s["lane"]: (s["pipe"], s["sub"]) for s in slices if s.get("pid", "") == pid}
        for lane, (pipe, sub) in sorted(seen.items(), key=lambda kv: (rank.get(kv[1][0], 99), kv[1][1])):
            title = LANE_TITLES.get(pipe, pipe) + (f" #{sub}" if sub else "")
            out += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": lane, "args": {"name": title}},
                    {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": lane,
                     "args": {"sort_index": rank.get(pipe, 99) * 100 + sub}}]
    for s in slices:
        x = {"name": s.get("name", ""), "ph": "X", "pid": s.get("pid", ""), "tid": s["lane"], "ts": s.get("ts", 0.0),
             "cname": LANE_COLORS.get(s["pipe"], "grey")}
        x.update({k: s[k] for k in ("dur", "args") if k in s})
        out.append(x)
    arrows, skipped = sync_arrows(slices, events)
    return {"displayTimeUnit": "ns", "profilingType": raw.get("profilingType", "op"),
            "schemaVersion": raw.get("schemaVersion", 1), "traceEvents": out + arrows}, skipped


def instr_metrics(block: dict[str, Any]) -> dict[str, Any]:
    """API_INSTR's per-metric arrays (one value per core) as per-core instruction records."""
    cores = list(block.get("Cores", []))
    rows: dict[str, list[dict[str, Any]]] = {c: [] for c in cores}
    for record in block.get("Instructions", []):
        for i, core in enumerate(cores):
            rows[core].append({k.lower().replace(" ", "_"): (v[i] if isinstance(v, list) and len(v) == len(cores)
                                                             else v) for k, v in record.items()})
    return {"cores": cores, "instructions": rows, "column_types": block.get("Instructions Dtype", {})}


def find_dump(path: Path) -> Path:
    for candidate in (path, path / "visualize_data.bin", path / "simulator" / "visualize_data.bin"):
        if candidate.is_file():
            return candidate
    raise DumpError(f"no visualize_data.bin at {path} (give the file or an OPPROF_* directory)")


def copy_raw(dump: Path, out: Path) -> Path | None:
    """Copy the simulator directory's files into ``<out>/raw_simulator/`` (the source stays as it is)."""
    src = dump.parent
    if out.resolve() == src.resolve():
        return None
    dest = out / "raw_simulator"
    dest.mkdir(parents=True, exist_ok=True)
    for item in sorted(src.iterdir()):
        if item.resolve() == dest.resolve() or dest.resolve().is_relative_to(item.resolve()):
            continue
        if item.is_dir():
            shutil.copytree(item, dest / item.name, dirs_exist_ok=True)
        else:
            shutil.copy2(item, dest / item.name)
    return dest


def run(args: argparse.Namespace) -> list[str]:
    dump = find_dump(args.path)
    found: dict[int, bytes] = {}
    for kind, payload in blocks(dump.read_bytes()):
        found.setdefault(kind, payload)
    if TRACE not in found:
        raise DumpError(f"{dump}: no TRACE block")
    out = args.output_dir or dump.parent
    out.mkdir(parents=True, exist_ok=True)
    try:
        trace, skipped = clean_trace(json.loads(found[TRACE]), args.keep_scalar)
    except json.JSONDecodeError as e:
        raise DumpError(f"{dump}: TRACE block is not JSON ({e})") from None
    (out / "trace.clean.json").write_text(json.dumps(trace))
    notes = [f"wrote {out / 'trace.clean.json'}"]
    if skipped:
        notes.append(f"note: {skipped} sync flag(s) had no instruction to anchor to and were left out")
    if API_INSTR in found:
        metrics = out / "instr_metrics.json"
        if args.raw_metrics:
            metrics.write_bytes(found[API_INSTR])
        else:
            metrics.write_text(json.dumps(instr_metrics(json.loads(found[API_INSTR]))))
        notes.append(f"wrote {metrics}")
    else:
        notes.append("warning: no API_INSTR block: instr_metrics.json not written")
    if args.output_dir is not None and args.copy_raw:
        raw = copy_raw(dump, out)
        if raw is not None:
            notes.append(f"copied the raw simulator files to {raw}")
    return notes


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pypto.tools.clean_sim_trace", description=__doc__.split("\n\n")[0])
    p.add_argument("path", type=Path, help="visualize_data.bin or an OPPROF_* directory")
    p.add_argument("-o", "--output-dir", type=Path, help="where to write (default: next to the input)")
    p.add_argument("--keep-scalar", action="store_true", help="keep the SCALAR lane (dropped by default)")
    p.add_argument("--raw-metrics", action="store_true", help="write the API_INSTR block verbatim")
    p.add_argument("--copy-raw", action=argparse.BooleanOptionalAction, default=True,
                   help="with -o, copy the raw simulator files into <DIR>/raw_simulator/ (default on)")
    args = p.parse_args(argv)
    try:
        notes = run(args)
    except (DumpError, OSError, json.JSONDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for line in notes:
        print(line, file=sys.stderr if line.startswith("warning") else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
