"""`pypto run ... --swimlane --deps` end to end: the run leaves dfx_outputs/ and says where."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pypto.toolchain.ptoas import find_ptoas

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.sim
@pytest.mark.skipif(shutil.which("g++") is None or find_ptoas() is None, reason="needs g++ and the pinned ptoas")
def test_run_with_swimlane_and_deps(tmp_path: Path) -> None:
    out = tmp_path / "art"
    cmd = [sys.executable, "-m", "pypto", "--log-level", "error", "run",
           str(REPO / "examples" / "intermediate" / "07_task_graph.py"), "--swimlane", "--deps", "-o", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    dfx = out / "dfx_outputs"
    assert f"diagnostics: {dfx}" in p.stdout
    names = {f.name for f in dfx.iterdir()}
    assert {"chip_swimlane_records.json", "deps.json", f"name_map_{out.name}.json"} <= names
    assert any(n.startswith("merged_swimlane_") for n in names)
    records = json.loads((dfx / "chip_swimlane_records.json").read_text())
    assert records["chip_swimlane_level"] == 4 and len(records["aicore_tasks"]) == 3
    edges = json.loads((dfx / "deps.json").read_text())["edges"]
    assert sorted(e["source"] for e in edges if e["source"] != "creator") == ["explicit", "tensormap"]


def test_run_flags_reach_the_run_config(tmp_path: Path) -> None:
    from click.testing import CliRunner

    import pypto.flows.loader
    from pypto.cli.main import cli

    seen = {}

    def run_file(path, name, settings, request):  # noqa: ANN001, ANN202
        seen.update(request.extra["run_config"])
        raise SystemExit(0)

    kernel = tmp_path / "k.py"
    kernel.write_text("")
    mp = pytest.MonkeyPatch()
    mp.setattr(pypto.flows.loader, "run_file", run_file, raising=False)
    try:
        CliRunner().invoke(cli, ["run", str(kernel), "--swimlane", "2", "--dump-args", "--pmu", "--scope-stats"])
    finally:
        mp.undo()
    assert seen == {"enable_chip_swimlane": 2, "enable_dep_gen": False, "enable_dump_args": 1, "enable_pmu": 2,
                    "enable_scope_stats": True}
    seen.clear()
    mp.setattr(pypto.flows.loader, "run_file", run_file, raising=False)
    try:  # upstream's pytest spellings
        CliRunner().invoke(cli, ["run", str(kernel), "--enable-chip-swimlane", "--enable-dep-gen", "--enable-pmu", "4"])
    finally:
        mp.undo()
    assert seen["enable_chip_swimlane"] == 4 and seen["enable_dep_gen"] and seen["enable_pmu"] == 4
