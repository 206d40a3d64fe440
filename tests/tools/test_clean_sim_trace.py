"""python -m pypto.tools.clean_sim_trace on synthetic visualize_data.bin blobs."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from pypto.tools import clean_sim_trace as cst


def _block(kind: int, payload: bytes, path: bytes = b"") -> bytes:
    body = (path.ljust(cst.SOURCE_PATH_BYTES, b"\0") if kind == cst.SOURCE else b"") + payload
    pad = (-len(body)) % 4
    return struct.pack("<QBBBB", len(body) + pad, kind, pad, 0, cst.MAGIC) + body + b"\0" * pad


def _trace() -> dict:
    def x(tid: str, name: str, ts: float, dur: float) -> dict:
        return {"ph": "X", "pid": "core0", "tid": tid, "name": name, "ts": ts, "dur": dur}

    def flag(tid: str, name: str, ph: str, ts: float, detail: str = "") -> dict:
        return {"ph": ph, "pid": "core0", "tid": tid, "name": name, "ts": ts, "args": {"detail": detail}}

    detail = "PIPE:MTE2,TRIGGERPIPE:VEC,FLAGID:0"
    return {"schemaVersion": 1, "traceEvents": [
        x("MTE2", "TLOAD", 0, 10), x("MTE2", "TLOAD", 5, 10),        # partially overlapping: two sub-lanes
        x("VECTOR", "TADD", 20, 5), x("MTE3", "TSTORE", 26, 4),
        x("SCALAR", "ADDI", 1, 1), x("CACHEMISS", "MISS", 2, 1), x("MTE2", "SET_FLAG", 16, 1),
        flag("MTE2", "SET_FLAG", "B", 16, detail), flag("MTE2", "SET_FLAG", "E", 17),
        flag("VECTOR", "WAIT_FLAG", "B", 17, "FLAGID:0,TRIGGERPIPE:VEC,PIPE:MTE2"),
        flag("VECTOR", "WAIT_FLAG", "E", 19),
        flag("MTE3", "SET_FLAG", "B", 31, "PIPE:MTE3,TRIGGERPIPE:MTE2,FLAGID:3"), flag("MTE3", "SET_FLAG", "E", 32),
    ]}


def _dump(tmp: Path, with_metrics: bool = True) -> Path:
    sim = tmp / "OPPROF_1" / "simulator"
    sim.mkdir(parents=True)
    metrics = {"Cores": ["core0", "core1"], "Instructions": [{"Address": ["0x10", "0x10"], "Pipe": "VECTOR",
                                                               "Cycles": [5, 6]}],
               "Instructions Dtype": {"Cycles": "int"}}
    blob = _block(cst.SOURCE, b"{}", b"/src/k.cpp") + _block(cst.TRACE, json.dumps(_trace()).encode())
    if with_metrics:
        blob += _block(cst.API_INSTR, json.dumps(metrics).encode())
    (sim / "visualize_data.bin").write_bytes(blob)
    (sim / "trace.json").write_text("{}")
    return tmp / "OPPROF_1"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pypto.tools.clean_sim_trace", *args], capture_output=True,
                          text=True, check=False)


def test_clean_trace_and_metrics(tmp_path: Path) -> None:
    out = tmp_path / "out"
    p = _run(str(_dump(tmp_path)), "-o", str(out))
    assert p.returncode == 0, p.stderr
    trace = json.loads((out / "trace.clean.json").read_text())
    ev = trace["traceEvents"]
    slices = [e for e in ev if e["ph"] == "X"]
    assert sorted(e["name"] for e in slices) == ["TADD", "TLOAD", "TLOAD", "TSTORE"]  # no sync, scalar, cachemiss
    assert {e["tid"] for e in slices if e["name"] == "TLOAD"} == {"MTE2", "MTE2#1"}
    lanes = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"]
    assert lanes[0].startswith("MTE2") and lanes[-1].startswith("MTE3")  # dataflow order
    flows = [e for e in ev if e["ph"] in ("s", "f")]
    assert [e["ph"] for e in flows] == ["s", "f"]  # the MTE3 flag has no wait: skipped
    assert flows[0]["tid"] == "MTE2#1" and flows[1]["tid"] == "VECTOR" and flows[1]["ts"] == 20
    assert "1 sync flag(s)" in p.stdout
    metrics = json.loads((out / "instr_metrics.json").read_text())
    assert metrics["instructions"]["core1"] == [{"address": "0x10", "pipe": "VECTOR", "cycles": 6}]
    assert (out / "raw_simulator" / "visualize_data.bin").is_file()


def test_keep_scalar_raw_metrics_and_no_copy(tmp_path: Path) -> None:
    dump = _dump(tmp_path)
    out = tmp_path / "o2"
    assert _run(str(dump / "simulator" / "visualize_data.bin"), "-o", str(out), "--keep-scalar", "--raw-metrics",
                "--no-copy-raw").returncode == 0
    names = {e["tid"] for e in json.loads((out / "trace.clean.json").read_text())["traceEvents"] if e["ph"] == "X"}
    assert "SCALAR" in names
    assert json.loads((out / "instr_metrics.json").read_text())["Cores"] == ["core0", "core1"]
    assert not (out / "raw_simulator").exists()


def test_errors(tmp_path: Path) -> None:
    assert _run(str(tmp_path / "missing")).returncode == 1
    sim = tmp_path / "sim"
    sim.mkdir()
    (sim / "visualize_data.bin").write_bytes(_block(cst.API_INSTR, b"{}"))
    p = _run(str(sim))
    assert p.returncode == 1 and "no TRACE block" in p.stderr
    (sim / "visualize_data.bin").write_bytes(struct.pack("<QBBBB", 4, 2, 0, 0, 0x11) + b"{}  ")
    p = _run(str(sim))
    assert p.returncode == 1 and "corrupt block header" in p.stderr
    with pytest.raises(cst.DumpError, match="shorter than"):
        list(cst.blocks(struct.pack("<QBBBB", 8, cst.SOURCE, 0, 0, cst.MAGIC) + b"x" * 8))
