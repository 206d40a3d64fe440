"""python -m pypto.tools.memory_map: parsing EXPLICIT dumps, boxes, backend limits, CLI, and the page itself."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser import load, needs_chromium, png_colors

from pypto.passes.allocate_memory_addr import CAPACITY
from pypto.tools import memory_map as mm


def _payload(html_path: Path) -> dict:
    text = html_path.read_text()
    m = re.search(r'<script type="application/json" id="payload">(.*?)</script>', text, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pypto.tools.memory_map", *args], capture_output=True, text=True,
                          check=False)


def test_cli_on_artifact_dir(matmul_art: Path) -> None:
    p = _cli(str(matmul_art))
    assert p.returncode == 0, p.stderr
    assert "plans tile memory itself" in p.stdout
    (page,) = (matmul_art / "passes_dump").glob("*_after_AllocateMemoryAddr.memory_map.html")
    text = page.read_text()
    assert "http://" not in text and "https://" not in text
    data = _payload(page)
    assert data["pass_name"] == "AllocateMemoryAddr"
    assert data["backend"] == {"name": "Ascend910B", "arch": "a2a3", "detected": True}
    (fn,) = data["functions"]
    limits = {s["space"]: s["limit"] for s in fn["spaces"]}
    for space in ("Mat", "Left", "Right", "Acc"):
        assert limits[space] == CAPACITY[mm_backend("Ascend910B")][mm_space(space)]
    spaces = {b["space"] for b in fn["boxes"]}
    assert spaces == {"Mat", "Left", "Right", "Acc"}
    mats = sorted((b["offset"], b["size"]) for b in fn["boxes"] if b["space"] == "Mat")
    assert mats[0][0] + mats[0][1] <= mats[1][0]  # the two Mat tiles do not overlap
    assert not any(b["conflict"] for b in fn["boxes"])


def mm_backend(name: str):
    from pypto.ir.options import BackendType

    return BackendType(name)


def mm_space(name: str):
    from pypto.ir.enums import MemorySpace

    return MemorySpace(name)


def test_a5_limits(matmul_art_a5: Path, tmp_path: Path) -> None:
    out = tmp_path / "a5.html"
    assert _cli(str(matmul_art_a5), "-o", str(out)).returncode == 0
    data = _payload(out)
    assert data["backend"]["name"] == "Ascend950" and data["backend"]["arch"] == "a5"
    limits = {s["space"]: s["limit"] for s in data["functions"][0]["spaces"]}
    assert limits["Acc"] == CAPACITY[mm_backend("Ascend950")][mm_space("Acc")]


def test_unallocated_dump_is_refused(matmul_art: Path) -> None:
    (early,) = (matmul_art / "passes_dump").glob("*_after_InitMemRef.py")
    p = _cli(str(early))
    assert p.returncode == 1 and p.stderr.startswith("error: ") and "AllocateMemoryAddr" in p.stderr
    missing = _cli(str(matmul_art / "nope"))
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    wrong_pass = _cli(str(matmul_art), "-p", "NoSuchPass")
    assert wrong_pass.returncode == 1 and "NoSuchPass" in wrong_pass.stderr


def test_backend_resolution(tmp_path: Path) -> None:
    dump = tmp_path / "01_after_AllocateMemoryAddr.py"
    dump.write_text("x = 1\n")
    assert mm.resolve_backend(dump) == mm.BackendChoice("Ascend910B", "a2a3", False)  # assumed
    (tmp_path / "ptoas").mkdir()
    (tmp_path / "ptoas" / "k.pto").write_text('module attributes {"pto.device-spec" = "Ascend910_9599"} {}')
    assert mm.resolve_backend(dump).name == "Ascend950"
    assert mm.resolve_backend(dump, "Ascend910B").detected
    with pytest.raises(mm.MemoryMapError, match="unknown backend"):
        mm.backend_limits("Ascend000")


def _tile(name: str, base: str, offset: int, size: int, start: int, end: int, space: str = "Vec") -> mm.Tile:
    return mm.Tile(name, space, base, offset, size, [8, 8], "FP32", "tile.add", start, end)


def test_boxes_merge_aliases_mark_views_and_conflicts() -> None:
    boxes = mm.build_boxes([
        _tile("a", "m0", 0, 1024, 1, 3), _tile("a2", "m0", 0, 1024, 3, 5),  # alias, touching: one box
        _tile("v", "m0", 256, 256, 4, 4),                                    # sub-range of m0: a view
        _tile("b", "m1", 512, 1024, 2, 6),                                   # other base, overlapping: conflict
        _tile("c", "m2", 4096, 512, 1, 9),
    ])
    by = {b.name: b for b in boxes}
    assert by["a"].aliases == ["a2"] and (by["a"].start, by["a"].end) == (1, 5)
    assert by["v"].view and not by["a"].view
    assert by["b"].conflict and by["a"].conflict and not by["c"].conflict
    fn = mm.FunctionMap("k", "AIV", 1, 9, "", [_tile("x", "m0", 0, 64, 1, 2), _tile("y", "m1", 0, 64, 1, 2)])
    assert mm.is_unallocated(fn)


@needs_chromium
def test_page_renders_in_chromium(matmul_art: Path, tmp_path: Path) -> None:
    page = tmp_path / "map.html"
    assert _cli(str(matmul_art), "-o", str(page)).returncode == 0
    shot = tmp_path / "map.png"
    dom, console = load(page, shot)
    assert console == [], console
    body = re.search(r"<body[^>]*>", dom).group(0)
    assert 'data-rendered="1"' in body and "data-js-error" not in body
    assert dom.count('class="box') == 5 and "matmul_incore_0" in dom
    colors = png_colors(shot)
    # the boxes are drawn in saturated hues; the page background is white / light grey
    assert sum(n for (r, g, b), n in colors.items() if max(r, g, b) - min(r, g, b) > 60) > 50
