"""Run-time diagnostics (RunConfig DFX flags -> dfx_outputs/) on compiled DSL programs."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from rt_marks import needs_gxx

import pypto.language as pl
from pypto.artifact import load_artifact
from pypto.runtime import ChipWorker, RunConfig
from pypto.runtime.dfx import records as rec

pytestmark = [needs_gxx, pytest.mark.sim]


@pl.jit
def diamond(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    left = pl.create_tensor([64, 64], dtype=pl.FP32)
    right = pl.create_tensor([64, 64], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="left"):
        left[:] = pl.mul(a, 3.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="right"):
        right[:] = pl.add(b, 0.5)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="join"):
        out[:] = pl.add(left, right)
    return out


@pl.jit
def declared(a: pl.Tensor, out1: pl.Out[pl.Tensor], out2: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="first") as t_first:
        out1[:] = pl.mul(a, 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="second", deps=[t_first]):
        out2[:] = pl.add(a, 1.0)
    return out1, out2


@pl.jit
def tagged(a: pl.Tensor, b: pl.Tensor, out1: pl.Out[pl.Tensor], out2: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([64, 64], dtype=pl.FP32)
    pl.dump_tag(tmp)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
        tmp[:] = pl.mul(a, 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="combine"):
        out1[:] = pl.add(tmp, b)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="offset", dumps=[b]):
        out2[:] = pl.add(b, 1.0)
    return out1, out2


def _inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    a = rng.random((64, 64), dtype=np.float32)
    b = rng.random((64, 64), dtype=np.float32)
    return a, b, np.zeros_like(a)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    d = tmp_path_factory.mktemp("dfx")
    mp.chdir(d)  # build_output/ goes here
    yield d
    mp.undo()


@pytest.fixture(scope="module")
def compiled(workdir: Path):
    a, b, out = _inputs()
    return diamond.compile(a, b, out, config=RunConfig())


def _run(compiled, cfg: RunConfig) -> tuple[Path, np.ndarray]:
    a, b, out = _inputs()
    with ChipWorker(cfg) as w:
        w.run(compiled, a, b, out, config=cfg)
    np.testing.assert_allclose(out, a * 3.0 + b + 0.5, rtol=1e-6, atol=0)
    return Path(compiled.output_dir) / "dfx_outputs", out


@pytest.fixture(scope="module")
def full(compiled, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot of the diamond's dfx_outputs/ (later runs of the same artifact replace the original)."""
    d, _ = _run(compiled, RunConfig(enable_chip_swimlane=4, enable_dep_gen=True))
    snap = tmp_path_factory.mktemp("full") / "dfx_outputs"
    shutil.copytree(d, snap)
    return snap


def _load(d: Path, name: str):
    return json.loads((d / name).read_text())


def _trace(d: Path) -> dict:
    (path,) = d.glob("merged_swimlane_*.json")
    return json.loads(path.read_text())


def _task_ids(d: Path) -> dict[str, int]:
    """kernel name -> task id, from deps.json and the name map."""
    names = next(iter(d.glob("name_map_*.json")))
    by_fid = {int(k): v for k, v in json.loads(names.read_text())["callable_id_to_name"].items()}
    out = {}
    for t in _load(d, "deps.json")["tasks"]:
        active = [k for k in t["kernel_ids"] if k >= 0]
        out[by_fid[active[0]] if active else "alloc"] = int(t["task_id"])
    return out


def test_diamond_leaves_every_file(full: Path, compiled) -> None:
    names = sorted(p.name for p in full.iterdir())
    assert "chip_swimlane_records.json" in names and "deps.json" in names
    map_name = f"name_map_{Path(compiled.output_dir).name}.json"
    assert map_name in names
    assert len([n for n in names if n.startswith("merged_swimlane_")]) == 1
    name_map = _load(full, map_name)
    assert name_map["level"] == 2 and name_map["orchestrator_name"] is None
    assert sorted(name_map["callable_id_to_name"].values()) == ["join", "left", "right"]


def test_records_follow_the_simpler_schema(full: Path) -> None:
    r = _load(full, "chip_swimlane_records.json")
    meta = r["metadata"]
    assert r["chip_swimlane_level"] == 4
    assert meta["num_cores"] == len(meta["core_types"]) == 24 and meta["clock_freq_hz"] == 1_000_000_000
    assert meta["core_types"][:8] == ["aic"] * 8 and meta["core_types"][8:] == ["aiv"] * 16
    assert len(r["aicore_tasks"]) == 3 and len(r["aicpu_tasks"]) == 3
    cpu = {(c, seq): (d, f) for c, seq, d, f in r["aicpu_tasks"]}
    for core, _tid, seq, start, end in r["aicore_tasks"]:
        dispatch, finish = cpu[(core, seq)]  # joinable on (core_id, reg_task_id)
        assert dispatch <= start <= end <= finish
    (orch,) = r["aicpu_orchestrator_phases"]
    assert [o["phase"] for o in orch] == ["alloc_tensors", "submit_task", "submit_task", "submit_task"]
    assert r["aicpu_scheduler_phases"] == []  # no scheduler loop to measure: never synthesized


def test_join_starts_after_both_producers_and_cores_never_overlap(full: Path) -> None:
    events = _trace(full)["traceEvents"]
    slices = [e for e in events if e["ph"] == "X" and e["pid"] == 4]
    assert sorted(e["name"].split("(")[0] for e in slices) == ["join", "left", "right"]
    by = {e["name"].split("(")[0]: e for e in slices}
    join_start = by["join"]["ts"]
    for producer in ("left", "right"):
        assert join_start >= by[producer]["ts"] + by[producer]["dur"]
    per_core: dict[int, list[tuple[float, float]]] = {}
    for e in slices:
        per_core.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in per_core.values():
        spans.sort()
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
    threads = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == 4}
    assert threads and all(t.startswith(("AIC_", "AIV_")) for t in threads)
    starts = [e for e in events if e["ph"] == "s"]
    ends = [e for e in events if e["ph"] == "f"]
    assert len(starts) == len(ends) >= 2 and all(e["bp"] == "e" for e in ends)
    assert {e["pid"] for e in events if e["ph"] == "X"} == {1, 3, 4}


def test_deps_json_has_exactly_the_program_edges(full: Path) -> None:
    deps = _load(full, "deps.json")
    ids = _task_ids(full)
    assert len(deps["tasks"]) == 4
    alloc = next(t for t in deps["tasks"] if int(t["task_id"]) == ids["alloc"])
    assert alloc["kernel_ids"] == [-1, -1, -1]
    kernel_tasks = {ids["left"], ids["right"], ids["join"]}
    kernel_edges = {(int(e["pred"]), int(e["succ"]), e["source"]) for e in deps["edges"]
                    if int(e["pred"]) in kernel_tasks}
    assert kernel_edges == {(ids["left"], ids["join"], "tensormap"), (ids["right"], ids["join"], "tensormap")}
    creators = {(int(e["pred"]), int(e["succ"])) for e in deps["edges"] if e["source"] == "creator"}
    assert creators == {(ids["alloc"], ids["left"]), (ids["alloc"], ids["right"]), (ids["alloc"], ids["join"])}
    tensor_ids = {t["tensor_id"] for t in deps["tensors"]}
    for e in deps["edges"]:
        assert isinstance(e["pred"], str) and isinstance(e["succ"], str)
        assert e["tensor_id"] in tensor_ids
        if e["source"] == "tensormap":
            assert e["overlap"] == "covered" and e["flags"] == ["wait"]
    for t in deps["tasks"]:
        assert all(a["tensor_id"] in tensor_ids for a in t["args"])


def test_declared_dependency_is_an_explicit_edge(workdir: Path) -> None:
    a = np.ones((64, 64), np.float32)
    o1, o2 = np.zeros_like(a), np.zeros_like(a)
    cfg = RunConfig(enable_dep_gen=True)
    declared(a, o1, o2, config=cfg)
    np.testing.assert_array_equal(o2, a + 1.0)
    out_dirs = sorted(Path("build_output").glob("_jit_declared_*/dfx_outputs"))
    deps = json.loads((out_dirs[-1] / "deps.json").read_text())
    explicit = [e for e in deps["edges"] if e["source"] == "explicit"]
    assert len(explicit) == 1 and explicit[0]["arg"] == -1
    assert not (out_dirs[-1] / "chip_swimlane_records.json").exists()  # dep_gen alone writes no swimlane


def test_level_1_has_no_scheduler_stamps(compiled) -> None:
    d, _ = _run(compiled, RunConfig(enable_chip_swimlane=1))
    r = _load(d, "chip_swimlane_records.json")
    assert r["chip_swimlane_level"] == 1 and r["aicpu_tasks"] == [] and len(r["aicore_tasks"]) == 3
    assert {e["pid"] for e in _trace(d)["traceEvents"] if e["ph"] == "X"} == {4}
    assert not (d / "deps.json").exists()


def test_flags_off_write_nothing(compiled) -> None:
    target = Path(compiled.output_dir) / "dfx_outputs"
    shutil.rmtree(target, ignore_errors=True)
    a, b, out = _inputs()
    with ChipWorker(RunConfig()) as w:
        w.run(compiled, a, b, out)
        compiled(a, b, out)
        w.register(compiled)(a, b, out)
        assert w.last_dfx_dir is None
    assert not target.exists()


def test_registered_dispatch_cost_with_flags_off(compiled) -> None:
    a, b, out = _inputs()
    with ChipWorker(RunConfig()) as w:
        handle = w.register(compiled)
        for _ in range(20):
            handle(a, b, out)
        samples = []
        for _ in range(200):
            t0 = time.perf_counter()
            handle(a, b, out)
            samples.append(time.perf_counter() - t0)
    # A loose bound on a shared machine; the flags-off path adds one attribute test per call.
    assert float(np.median(samples)) < 5e-3


def test_args_dump_level_2(compiled) -> None:
    d, out = _run(compiled, RunConfig(enable_dump_args=2))
    manifest = _load(d / "args_dump", "args_dump.json")
    blob = (d / "args_dump" / "args.bin").read_bytes()
    assert manifest["bin_file"] == "args.bin" and manifest["dump_args_level"] == 2
    assert manifest["bin_format"] == {"type": "logical_contiguous", "byte_order": "little_endian"}
    tensors = [x for x in manifest["args"] if x["kind"] == "tensor"]
    assert all(x["bin_offset"] + x["bin_size"] <= len(blob) for x in tensors)
    assert {x["stage"] for x in tensors if x["role"] == "input"} == {"before_dispatch"}
    assert {x["stage"] for x in tensors if x["role"] == "output"} == {"after_completion"}
    assert manifest["before_dispatch"] == 4 and manifest["after_completion"] == 3
    # the last output written is join's: the caller's `out`, byte for byte
    last = max((x for x in tensors if x["role"] == "output"), key=lambda x: int(x["task_id"], 16))
    got = np.frombuffer(blob[last["bin_offset"]:last["bin_offset"] + last["bin_size"]], np.float32)
    np.testing.assert_array_equal(got.reshape(64, 64), out)


def test_dump_args_level_1_without_marks_warns(compiled) -> None:
    from pypto.runtime import dfx

    dfx._WARNED.discard("dump_args_1")
    with pytest.warns(RuntimeWarning, match="pl.dump_tag"):
        d, _ = _run(compiled, RunConfig(enable_dump_args=1))
    assert not (d / "args_dump").exists()


def test_pmu_rows_are_zero_and_warn_once(compiled) -> None:
    from pypto.runtime import dfx

    dfx._WARNED.discard("pmu")
    with pytest.warns(RuntimeWarning, match="not modelled by a functional simulator"):
        d, _ = _run(compiled, RunConfig(enable_pmu=3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _run(compiled, RunConfig(enable_pmu=2))  # a second run stays quiet
    rows = list(csv.reader((d / "pmu.csv").read_text().splitlines()))
    assert rows[0][:6] == ["thread_id", "core_id", "task_id", "func_id", "core_type", "pmu_total_cycles"]
    assert rows[0][6:] == ["vec_busy_cycles", "cube_busy_cycles", "scalar_busy_cycles", "mte1_busy_cycles",
                           "mte2_busy_cycles", "mte3_busy_cycles", "icache_miss", "icache_req", "event_type"]
    assert len(rows) == 4
    for row in rows[1:]:
        assert row[2].startswith("0x") and row[5:-1] == ["0"] * 9 and row[-1] == "2"


def test_scope_stats(compiled) -> None:
    d, _ = _run(compiled, RunConfig(enable_scope_stats=True, ring_task_window=64))
    lines = [json.loads(x) for x in (d / "scope_stats" / "scope_stats.jsonl").read_text().splitlines()]
    head, body = lines[0], lines[1:]
    assert head["version"] == 6 and head["task_window_max"] == [64] * 4 and head["total"] == len(body)
    assert [(x["depth"], x["phase"]) for x in body] == [(0, "begin"), (1, "begin"), (1, "end"), (0, "end")]
    inner_begin, inner_end = body[1], body[2]
    assert inner_begin["site"] == inner_end["site"] and inner_begin["site"].split(":")[0].endswith(".cpp")
    assert inner_end["task_window_end"] - inner_begin["task_window_end"] == 4  # alloc + 3 kernels
    assert inner_end["heap_end"] == 2 * 64 * 64 * 4  # the two intermediates


def test_swimlane_tool_rerenders_offline(full: Path, tmp_path: Path) -> None:
    out = tmp_path / "again.json"
    p = subprocess.run([sys.executable, "-m", "pypto.tools.swimlane", str(full), "-o", str(out)],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert "critical path" in p.stdout and "AIV_" in p.stdout and "join(" in p.stdout
    again = json.loads(out.read_text())["traceEvents"]
    first = _trace(full)["traceEvents"]
    assert [e for e in again if e["ph"] == "X"] == [e for e in first if e["ph"] == "X"]
    missing = subprocess.run([sys.executable, "-m", "pypto.tools.swimlane", str(tmp_path)], capture_output=True,
                             text=True, check=False)
    assert missing.returncode == 1 and "does not exist" in missing.stderr


def test_tensor_id_is_fnv1a_of_address_and_version() -> None:
    assert rec.tensor_id(0, 0) != rec.tensor_id(0, 1)
    assert rec.tensor_id(0x1000, 0) == rec.tensor_id(0x1000, 0)
    assert rec.task_label((2 << 32) | 5) == "r2t5" and rec.task_label(7) == "t7"


def test_benchmark_does_not_collect_and_says_so(compiled) -> None:
    from pypto.runtime import benchmark, dfx

    dfx._WARNED.discard("benchmark")
    target = Path(compiled.output_dir) / "dfx_outputs"
    shutil.rmtree(target, ignore_errors=True)
    a, b, out = _inputs()
    with pytest.warns(RuntimeWarning, match="does not collect"):
        result = benchmark(compiled, a, b, out, warmup=1, rounds=3, config=RunConfig(enable_chip_swimlane=4))
    assert result.rounds == 3 and not target.exists()


def test_dump_args_level_1_dumps_only_marked_tensors(workdir: Path) -> None:
    a, b, _ = _inputs()
    o1, o2 = np.zeros_like(a), np.zeros_like(a)
    cfg = RunConfig(enable_dump_args=1)
    compiled = tagged.compile(a, b, o1, o2, config=cfg)
    orch = next((Path(compiled.output_dir) / "orchestration").glob("*.cpp")).read_text()
    assert orch.count(".dump(") == 3
    with ChipWorker(cfg) as w:
        w.run(compiled, a, b, o1, o2, config=cfg)
    d = Path(compiled.output_dir) / "dfx_outputs" / "args_dump"
    manifest = _load(d, "args_dump.json")
    blob = (d / "args.bin").read_bytes()
    names = {k.func_id: k.name for k in load_artifact(Path(compiled.output_dir)).kernels}
    tensors = [x for x in manifest["args"] if x["kind"] == "tensor"]
    assert manifest["dump_args_level"] == 1
    by_kernel = {names[x["func_id"][0]]: x for x in tensors}
    assert len(tensors) == 3 and set(by_kernel) == {"scale", "combine", "offset"}
    assert (by_kernel["scale"]["role"], by_kernel["scale"]["stage"]) == ("output", "after_completion")
    assert (by_kernel["combine"]["role"], by_kernel["combine"]["stage"]) == ("input", "before_dispatch")

    def value(x: dict) -> np.ndarray:
        return np.frombuffer(blob[x["bin_offset"]:x["bin_offset"] + x["bin_size"]], np.float32).reshape(64, 64)

    np.testing.assert_array_equal(value(by_kernel["scale"]), a * 2.0)  # tmp as scale wrote it
    np.testing.assert_array_equal(value(by_kernel["combine"]), a * 2.0)  # tmp as combine read it
    np.testing.assert_array_equal(value(by_kernel["offset"]), b)  # dumps=[b]


def test_dump_tag_errors() -> None:
    from pypto.errors import ParserError

    with pytest.raises(ParserError, match="not followed by any pl.at"):
        @pl.jit
        def late(a: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                out[:] = pl.add(a, 1.0)
            pl.dump_tag(out)
            return out

        late.lower(np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32))
