"""Regenerate the README pictures: a swimlane of a fan-out / fan-in program and a memory map.

    python docs/assets/make_pictures.py        # needs g++, the pinned ptoas and Debian's chromium

Writes docs/assets/swimlane.png and docs/assets/memory_map.png (headless Chromium screenshots of the pages
``python -m pypto.tools.swimlane --html`` and ``python -m pypto.tools.memory_map`` write).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import pypto.language as pl
from pypto.ir import PassDumpLevel
from pypto.runtime import ChipWorker, RunConfig

HERE = Path(__file__).resolve().parent
ROWS, COLS, PARTS = 256, 128, 4


@pl.jit
def fan_out_in(x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[64, COLS], pl.FP32]]):
    parts = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
    for i in pl.range(PARTS):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_part"):
            t = pl.load(x, [i * 64, 0], [64, COLS])
            e = pl.exp(pl.row_expand_sub(t, pl.row_max(t)))
            pl.store(pl.row_expand_div(e, pl.row_sum(e)), [i * 64, 0], parts)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="sum_parts"):
        acc = pl.load(parts, [0, 0], [64, COLS])
        for i in pl.range(1, PARTS):
            acc = pl.add(acc, pl.load(parts, [i * 64, 0], [64, COLS]))
        pl.store(acc, [0, 0], out)
    return out


def _shot(page: Path, png: Path, size: str) -> None:
    exe = shutil.which("chromium")
    if exe is None:
        sys.exit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={size}",
                        f"--screenshot={png}", page.resolve().as_uri()], check=True, capture_output=True)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="pypto-pictures-"))
    x = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)
    out = np.zeros((64, COLS), np.float32)
    cfg = RunConfig(enable_chip_swimlane=4, enable_dep_gen=True, save_kernels_dir=str(work / "fan"),
                    dump_passes=PassDumpLevel.EXPLICIT)
    compiled = fan_out_in.compile(x, out, config=cfg)
    with ChipWorker(cfg) as worker:
        worker.run(compiled, x, out, config=RunConfig())  # warm-up: first-touch costs stay out of the picture
        worker.run(compiled, x, out, config=cfg)
    dfx = Path(compiled.output_dir) / "dfx_outputs"
    subprocess.run([sys.executable, "-m", "pypto.tools.swimlane", str(dfx.relative_to(work)), "--html", "swim.html",
                    "--no-summary"], check=True, cwd=work)
    _shot(work / "swim.html", HERE / "swimlane.png", "1100,250")
    subprocess.run([sys.executable, "-m", "pypto.tools.memory_map", "fan", "-o", "map.html"], check=True, cwd=work)
    _shot(work / "map.html", HERE / "memory_map.png", "1100,720")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
