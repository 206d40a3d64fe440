"""python -m pypto.tools.swimlane on hand-made records: trace events, summary, HTML page in Chromium."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from browser import load, needs_chromium

from pypto.runtime.dfx import records, trace

RING = 1 << 32


def _raw() -> dict:
    """Four tasks on ring 1: alloc (t0), two producers (t1 on core 8, t2 on core 9), a join (t3 on core 8)."""
    def task(i: int, kernels: list[int], dummy: int = 0) -> dict:
        return {"index": i, "id": RING | i, "ring": 1, "kernels": kernels, "dummy": dummy, "alloc": dummy,
                "block_num": 1, "manual": 0, "args": [], "scalars": []}
    return {
        "num_cores": 24, "tasks": [task(0, [-1, -1, -1], 1), task(1, [-1, 0, -1]), task(2, [-1, 1, -1]),
                                   task(3, [-1, 2, -1])],
        # core, task, block, slot, seq, dispatch, start, end, finish (ns)
        "units": [[8, 1, 0, 1, 0, 1000, 3000, 40000, 41000], [9, 2, 0, 1, 0, 1500, 5000, 60000, 61000],
                  [8, 3, 0, 1, 1, 62000, 64000, 90000, 91000]],
        "orch": [["alloc_tensors", 0, 100, 300], ["submit_task", 1, 400, 900], ["submit_task", 2, 950, 1400],
                 ["submit_task", 3, 1450, 1900]],
        "edges": [{"pred": 0, "succ": 1, "arg": 1, "source": 1, "overlap": 0, "producer": None},
                  {"pred": 1, "succ": 3, "arg": 0, "source": 2, "overlap": 1, "producer": None},
                  {"pred": 2, "succ": 3, "arg": 1, "source": 2, "overlap": 1, "producer": None}],
    }


def _write(tmp: Path) -> Path:
    d = tmp / "dfx_outputs"
    d.mkdir()
    (d / "chip_swimlane_records.json").write_text(json.dumps(records.swimlane_records(_raw(), 4)))
    (d / "name_map_art.json").write_text(json.dumps(records.name_map({0: "left", 1: "right", 2: "join"})))
    return d


def test_timeline_trace_and_summary(tmp_path: Path) -> None:
    d = _write(tmp_path)
    tl = trace.timeline(json.loads((d / "chip_swimlane_records.json").read_text()), None,
                        json.loads((d / "name_map_art.json").read_text()))
    ev = trace.chrome_trace(tl)["traceEvents"]
    names = sorted(e["name"] for e in ev if e["ph"] == "X" and e["pid"] == 4)
    assert names == ["join(r1t3)", "left(r1t1)", "right(r1t2)"]
    assert sorted(e["name"] for e in ev if e["ph"] == "X" and e["pid"] == 1)[0] == "alloc_tensors(r1t0)"
    assert len([e for e in ev if e["ph"] == "s"]) == 2  # the alloc task runs no unit: no arrow from it
    assert [t for t, _s, _e in trace.critical_path(tl)] == [RING | 2, RING | 3]
    text = trace.summary(tl)
    assert "AIV_0" in text and "AIV_1" in text and "right(r1t2)" in text


@needs_chromium
def test_html_swimlane_renders(tmp_path: Path) -> None:
    d = _write(tmp_path)
    page = tmp_path / "swim.html"
    p = subprocess.run([sys.executable, "-m", "pypto.tools.swimlane", str(d), "--html", str(page)],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert "http://" not in page.read_text() and "https://" not in page.read_text()
    dom, console = load(page, tmp_path / "swim.png", size=(1100, 400))
    assert console == [], console
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-rendered="1"' in body and "data-js-error" not in body
    assert dom.count('class="unit"') == 3 and dom.count("<path") == 2 and "join(r1t3)" in dom
