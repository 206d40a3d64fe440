"""Re-render a run's swimlane offline and summarise it as text.

    python -m pypto.tools.swimlane <dfx_outputs dir> [-o merged.json] [--no-summary]

Reads ``chip_swimlane_records.json`` (plus ``deps.json`` and ``name_map_*.json`` when present), writes the
Chrome / Perfetto trace-event JSON (open it in ui.perfetto.dev or chrome://tracing) and prints per-core
utilisation and the observed critical path. Exit 1 on a missing or malformed input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pypto.runtime.dfx import trace

RECORDS = "chip_swimlane_records.json"


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"pypto.tools.swimlane: error: cannot read {path}: {e}") from None


def load_dir(d: Path) -> trace.Timeline:
    """The timeline of a ``dfx_outputs/`` directory (or of a records file and its siblings)."""
    records_path = d if d.is_file() else d / RECORDS
    if not records_path.is_file():
        raise SystemExit(f"pypto.tools.swimlane: error: {records_path} does not exist (run with "
                         "RunConfig(enable_chip_swimlane=4) or `pypto run ... --swimlane`)")
    base = records_path.parent
    deps = _load(base / "deps.json") if (base / "deps.json").is_file() else None
    maps = sorted(base.glob("name_map_*.json"))
    names = _load(maps[0]) if maps else None
    return trace.timeline(_load(records_path), deps, names)


def html_page(tl: trace.Timeline, source: str) -> str:
    """A self-contained HTML swimlane (one lane per simulated core, dependency arrows, text summary)."""
    import html

    from pypto.runtime.dfx.records import core_track
    from pypto.tools._swimlane_page import PAGE

    t0 = min([u.dispatch for u in tl.units if u.dispatch is not None] + [u.start for u in tl.units] or [0.0])
    rel = lambda v: None if v is None else round(v - t0, 3)  # noqa: E731
    units = [{"core": u.core, "task": u.task, "name": tl.task_name(u.task),
              "kernel": tl.task_name(u.task).split("(")[0], "start": rel(u.start), "end": rel(u.end),
              "dispatch": rel(u.dispatch), "finish": rel(u.finish)} for u in tl.units]
    makespan = max([u["end"] for u in units] + [u["finish"] or 0.0 for u in units] + [1.0])
    cores = [{"id": c, "track": core_track(c, tl.num_cores)} for c in sorted({u.core for u in tl.units})]
    data = {"source": source, "level": tl.level, "makespan": makespan, "cores": cores, "units": units,
            "edges": tl.edges, "summary": trace.summary(tl), "caveat": trace.CAVEAT}
    blob = json.dumps(data).replace("</", "<\\/")
    return PAGE.replace("__TITLE__", html.escape(f"swimlane: {source}")).replace("__PAYLOAD__", blob)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pypto.tools.swimlane", description=__doc__.split("\n\n")[0])
    p.add_argument("path", type=Path, help="dfx_outputs directory or chip_swimlane_records.json")
    p.add_argument("-o", "--output", type=Path, help="trace JSON to write (default: <dir>/merged_swimlane.json)")
    p.add_argument("--no-summary", action="store_true", help="do not print the text summary")
    p.add_argument("--html", type=Path, help="also write a self-contained HTML swimlane to this path")
    args = p.parse_args(argv)
    try:
        tl = load_dir(args.path)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 1
    out = args.output or (args.path if args.path.is_dir() else args.path.parent) / "merged_swimlane.json"
    out.write_text(json.dumps(trace.chrome_trace(tl), indent=1))
    if args.html:
        args.html.write_text(html_page(tl, str(args.path)))
        print(f"html: {args.html}")
    if not args.no_summary:
        print(trace.summary(tl))
    print(f"trace: {out} (open in https://ui.perfetto.dev or chrome://tracing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
