"""Run-time diagnostics (DFX): ``RunConfig`` flags -> ``<artifact dir>/dfx_outputs/``.

Floor: inside ``runtime``; imports ``artifact``, ``toolchain`` and ``errors`` only.

The simulator records (only while a flag is on) per-unit dispatch / start / end / finish times on the
simulated core that ran it, the orchestrator's submit spans, every dependency edge with its source, argument
bytes and scope counters; :func:`write_outputs` turns one run's records into simpler's file formats:

- ``chip_swimlane_records.json`` + ``merged_swimlane_<YYYYmmdd_HHMMSS>.json`` (``enable_chip_swimlane``)
- ``name_map_<artifact dir name>.json`` (swimlane or dep_gen)
- ``deps.json`` (``enable_dep_gen``)
- ``args_dump/{args_dump.json,args.bin}`` (``enable_dump_args=2``: every tensor argument; ``1``: the
  arguments marked with ``pl.dump_tag(t)`` / ``pl.at(..., dumps=[t])``)
- ``pmu.csv`` (``enable_pmu``; counters are 0: a functional simulator has none)
- ``scope_stats/scope_stats.jsonl`` (``enable_scope_stats``)
"""

from __future__ import annotations

import json
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

from pypto.runtime import native

OUTPUT_DIR = "dfx_outputs"
_WARNED: set[str] = set()
_HINTED: set[str] = set()


def warn_once(key: str, message: str) -> None:
    """A RuntimeWarning, once per process and key."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def flags_of(cfg: Any) -> int:
    """The ``PtoSimRunConfig.dfx`` bits for a RunConfig (0 when every flag is off)."""
    flags = int(cfg.enable_chip_swimlane) & native.DFX_SWIMLANE_MASK
    if cfg.enable_dep_gen or cfg.enable_chip_swimlane:
        flags |= native.DFX_DEPS  # the merged trace draws its arrows from the recorded edges
    if cfg.enable_dump_args == 2:
        flags |= native.DFX_ARGS
    elif cfg.enable_dump_args:
        flags |= native.DFX_ARGS_TAGGED
    if cfg.enable_pmu:
        flags |= native.DFX_TASKS
    if cfg.enable_scope_stats:
        flags |= native.DFX_SCOPES
    return flags


def _dump(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def write_outputs(root: Path, kernel_names: dict[int, str], platform: str, cfg: Any, text: bytes,
                  blob: bytes, subdir: str | None = None) -> Path | None:
    """Write ``<root>/dfx_outputs/`` (``/<subdir>``: a rank's) from one run's records; returns the directory.

    None: nothing recorded.
    """
    from pypto.runtime.dfx import extras, records, trace

    out = Path(root) / OUTPUT_DIR / subdir if subdir else Path(root) / OUTPUT_DIR
    if out.is_dir():  # one run's diagnostics: no stale file of an earlier run's flags beside them
        shutil.rmtree(out)
    if not text:
        return None
    raw = json.loads(text)
    out.mkdir(parents=True)
    level = int(cfg.enable_chip_swimlane)
    names = records.name_map(kernel_names)
    if level or cfg.enable_dep_gen:
        _dump(out / f"name_map_{Path(root).name}.json", names)
    deps = records.deps_json(raw) if cfg.enable_dep_gen else None
    if deps is not None:
        _dump(out / "deps.json", deps)
    if level:
        rec = records.swimlane_records(raw, level)
        _dump(out / "chip_swimlane_records.json", rec)
        merged = trace.chrome_trace(trace.timeline(rec, deps, names))
        _dump(out / f"merged_swimlane_{time.strftime('%Y%m%d_%H%M%S')}.json", merged)
    if cfg.enable_dump_args == 2 or (cfg.enable_dump_args and raw["dumps"]):
        extras.write_args(out, raw, blob, int(cfg.enable_dump_args))
    elif cfg.enable_dump_args:
        warn_once("dump_args_1", "enable_dump_args=1 dumps only the tensors marked with pl.dump_tag(t) or "
                                 "pl.at(..., dumps=[t]), and this program marks none: nothing was dumped (use "
                                 "enable_dump_args=2 for every argument)")
    if cfg.enable_pmu:
        text_csv, _event = extras.pmu_csv(raw, platform, int(cfg.enable_pmu))
        (out / "pmu.csv").write_text(text_csv)
        warn_once("pmu", "enable_pmu: PMU counters are not modelled by a functional simulator; pmu.csv has one "
                         "row per executed task with every counter (and pmu_total_cycles) 0")
    if cfg.enable_scope_stats:
        (out / "scope_stats").mkdir(exist_ok=True)
        (out / "scope_stats" / "scope_stats.jsonl").write_text("\n".join(extras.scope_stats_lines(raw)) + "\n")
    if not any(out.iterdir()):
        out.rmdir()
        return None
    _hint(out, level)
    return out


def _hint(out: Path, level: int) -> None:
    """One log line per output directory and process: where the files are and what reads them."""
    if str(out) in _HINTED:
        return
    _HINTED.add(str(out))
    from pypto.toolchain.logging import get_logger

    viewers = (f"python -m pypto.tools.swimlane {out} [--html swimlane.html] (pypto); the merged_swimlane_*.json "
               "opens in ui.perfetto.dev or chrome://tracing") if level else "JSON / CSV files (simpler's formats)"
    get_logger("pypto.runtime.dfx").info("run-time diagnostics written", dfx_outputs=str(out), view=viewers)
