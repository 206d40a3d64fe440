"""Our dfx_outputs/ formats read by simpler's own tools (opt-in: PYPTO_SIMPLER_ROOT = a simpler checkout).

simpler (the runtime upstream pypto pins) defines the on-disk DFX formats; this feeds its swimlane
converter, deps viewer and scope-stats plot a hand-made sample written by our writers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_swimlane_page import _raw

from pypto.runtime.dfx import extras, records

ROOT = os.environ.get("PYPTO_SIMPLER_ROOT")
pytestmark = pytest.mark.skipif(not ROOT or not Path(ROOT, "simpler_setup", "tools").is_dir(),
                                reason="set PYPTO_SIMPLER_ROOT to a simpler checkout to check interop")


def _tool(module: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", f"simpler_setup.tools.{module}", *args], capture_output=True,
                          text=True, check=False, env=env, timeout=120)


def _sample(tmp: Path) -> Path:
    raw = _raw()
    for task in raw["tasks"]:
        task["args"] = [{"kind": kind, "tensor": {"addr": addr, "size": 256, "version": 0, "dtype": 0,
                                                  "start_offset": 0, "contiguous": 1, "shape": [8, 8],
                                                  "strides": [8, 1]}}
                        for kind, addr in ((0, 4096), (3, 8192))]
    raw.update(scopes=[], failed=0, ring_task_window=16)
    d = tmp / "dfx_outputs"
    d.mkdir()
    (d / "chip_swimlane_records.json").write_text(json.dumps(records.swimlane_records(raw, 4)))
    (d / "deps.json").write_text(json.dumps(records.deps_json(raw)))
    (d / "name_map_art.json").write_text(json.dumps(records.name_map({0: "left", 1: "right", 2: "join"})))
    (d / "scope_stats").mkdir()
    (d / "scope_stats" / "scope_stats.jsonl").write_text("\n".join(extras.scope_stats_lines(raw)) + "\n")
    return d


def test_read_perf_data_and_converter(tmp_path: Path) -> None:
    d = _sample(tmp_path)
    code = ("import json, sys; from simpler_setup.tools.swimlane_converter import read_perf_data; "
            "t = read_perf_data(sys.argv[1])['tasks']; print(json.dumps({k: type(v).__name__ for k, v in t[0].items()}))")
    p = subprocess.run([sys.executable, "-c", code, str(d / "chip_swimlane_records.json")], capture_output=True,
                       text=True, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    types = json.loads(p.stdout)
    for key, kind in (("task_id", "int"), ("func_id", "int"), ("core_id", "int"), ("core_type", "str"),
                      ("ring_id", "int"), ("start_time_us", "float"), ("end_time_us", "float"),
                      ("duration_us", "float"), ("dispatch_time_us", "float"), ("finish_time_us", "float")):
        assert types[key] == kind, (key, types)
    out = tmp_path / "merged.json"
    conv = _tool("swimlane_converter", str(d / "chip_swimlane_records.json"), "--deps-json", str(d / "deps.json"),
                 "--func-names", str(d / "name_map_art.json"), "-o", str(out))
    assert conv.returncode == 0, conv.stdout + conv.stderr
    names = {e["name"] for e in json.loads(out.read_text())["traceEvents"] if e.get("ph") == "X"}
    assert {"left(r1t1)", "right(r1t2)", "join(r1t3)"} <= names


def test_deps_viewer_and_scope_stats_plot(tmp_path: Path) -> None:
    d = _sample(tmp_path)
    p = _tool("deps_viewer", str(d / "deps.json"), "-o", str(tmp_path / "deps.txt"))
    assert p.returncode == 0, p.stdout + p.stderr
    p = _tool("scope_stats_plot", str(d / "scope_stats" / "scope_stats.jsonl"))
    assert p.returncode == 0, p.stdout + p.stderr
