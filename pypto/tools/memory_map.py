"""On-chip memory map of a pass dump: buffers over time (IR lines) and address, per memory space, as HTML.

    python -m pypto.tools.memory_map <dump.py | passes_dump/ | artifact dir> [-o OUT] [-p PASS] [-b BACKEND]

The input is an EXPLICIT (or CONCISE) pass dump after ``AllocateMemoryAddr``: every tile carries
``pl.MemRef(base, offset, size)`` and ``pl.Mem.<Space>``. A directory picks the highest
``NN_after_<PASS>.py`` (PASS default ``AllocateMemoryAddr``). The page is self-contained (no URL).

Caveat: ptoas 0.1.1 plans tile memory itself when it assembles the kernel, so this is pypto's planner's
layout, not necessarily the addresses in the built kernel; ``memory_planner=PTOAS`` leaves nothing to draw.
"""

from __future__ import annotations

import argparse
import ast
import html
import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_PASS = "AllocateMemoryAddr"
KERNEL_TYPES = ("AIC", "AIV", "InCore")
CAVEAT = ("ptoas 0.1.1 plans tile memory itself when it assembles a kernel: this map is pypto's "
          "AllocateMemoryAddr layout, not necessarily the addresses inside the built kernel")
_DUMP_NAME = re.compile(r"^(\d+)_after_(\w+)\.py$")
_DEVICE_SPEC = re.compile(r'"pto\.device-spec"\s*=\s*"([^"]+)"')


class MemoryMapError(Exception):
    """Bad input: the CLI prints ``error: <message>`` and exits 1."""


@dataclass
class Tile:
    name: str
    space: str
    base: str
    offset: int
    size: int
    shape: list[int]
    dtype: str
    op: str
    start: int  # first / last dump line naming the tile (lexical live range)
    end: int


@dataclass
class Box(Tile):
    aliases: list[str] = field(default_factory=list)
    view: bool = False
    conflict: bool = False


@dataclass
class FunctionMap:
    name: str
    ftype: str
    src_start: int
    src_end: int
    source: str
    tiles: list[Tile]


@dataclass
class BackendChoice:
    name: str
    arch: str
    detected: bool


# -- parsing ----------------------------------------------------------------------------------------
def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _int(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Call) and _dotted(node.func).endswith(".const") and node.args:
        return _int(node.args[0])
    return None


def _tile_parts(ann: ast.AST) -> tuple[list[int], str, tuple[str, int, int] | None, str | None] | None:
    """(shape, dtype, memref, space) of a ``pl.Tile[...]`` annotation, else None."""
    if not (isinstance(ann, ast.Subscript) and _dotted(ann.value).endswith(".Tile")):
        return None
    elems = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    shape = [v for e in elems[0].elts if (v := _int(e)) is not None] if elems and isinstance(elems[0], ast.List) else []
    dtype = _dotted(elems[1]).rsplit(".", 1)[-1] if len(elems) > 1 else "?"
    memref = space = None
    for e in elems[2:]:
        if isinstance(e, ast.Call) and _dotted(e.func).endswith(".MemRef") and len(e.args) == 3:
            base = e.args[0]
            base_name = base.id if isinstance(base, ast.Name) else base.value if isinstance(base, ast.Constant) else "?"
            memref = (str(base_name), _int(e.args[1]) or 0, _int(e.args[2]) or 0)
        elif _dotted(e).rsplit(".", 2)[-2:-1] == ["Mem"]:
            space = _dotted(e).rsplit(".", 1)[-1]
    return shape, dtype, memref, space


def _ftype(func: ast.FunctionDef) -> str:
    for d in func.decorator_list:
        if isinstance(d, ast.Call):
            for kw in d.keywords:
                if kw.arg == "type":
                    return _dotted(kw.value).rsplit(".", 1)[-1]
    return "Opaque"


def _lines_naming(func: ast.FunctionDef) -> dict[str, tuple[int, int]]:
    spans: dict[str, tuple[int, int]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name):
            lo, hi = spans.get(node.id, (node.lineno, node.lineno))
            spans[node.id] = (min(lo, node.lineno), max(hi, node.lineno))
    return spans


def _collect(func: ast.FunctionDef) -> list[Tile]:
    spans = _lines_naming(func)
    tiles: dict[tuple[str, str, int, int], Tile] = {}
    for node in ast.walk(func):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        parts = _tile_parts(node.annotation)
        if parts is None or parts[2] is None or parts[3] in (None, "DDR"):
            continue
        shape, dtype, (base, offset, size), space = parts
        name = node.target.id
        op = _dotted(node.value.func).split(".", 1)[-1] if isinstance(node.value, ast.Call) else ""
        start, end = spans.get(name, (node.lineno, node.lineno))
        key = (name, base, offset, size)
        if key in tiles:
            continue
        tiles[key] = Tile(name, space or "?", base, offset, size, shape, dtype, op, start, end)
    return sorted(tiles.values(), key=lambda t: (t.start, t.name))


def parse_dump(path: Path) -> list[FunctionMap]:
    """The kernel functions (AIC / AIV / InCore) of a dump with their on-chip tiles."""
    text = Path(path).read_text()
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as e:
        raise MemoryMapError(f"{path} is not a pass dump (line {e.lineno}: {e.msg})") from None
    lines = text.splitlines()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and _ftype(node) in KERNEL_TYPES:
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            end = node.end_lineno or node.lineno
            out.append(FunctionMap(node.name, _ftype(node), start, end, "\n".join(lines[start - 1:end]),
                                   _collect(node)))
    return out


# -- boxes ------------------------------------------------------------------------------------------
def build_boxes(tiles: list[Tile]) -> list[Box]:
    """Merge aliases (same space/base/offset/size, touching lifetimes); mark views and conflicts."""
    groups: dict[tuple[str, str, int, int], list[Tile]] = {}
    for t in tiles:
        groups.setdefault((t.space, t.base, t.offset, t.size), []).append(t)
    boxes: list[Box] = []
    for run in groups.values():
        run.sort(key=lambda t: t.start)
        current: list[Tile] = [run[0]]
        for t in run[1:]:
            if t.start <= max(x.end for x in current) + 1:
                current.append(t)
            else:
                boxes.append(_merge(current))
                current = [t]
        boxes.append(_merge(current))
    _classify(boxes)
    return sorted(boxes, key=lambda b: (b.space, b.offset, b.start))


def _merge(run: list[Tile]) -> Box:
    first = run[0]
    box = Box(**{**asdict(first), "start": min(t.start for t in run), "end": max(t.end for t in run)})
    box.aliases = sorted({t.name for t in run[1:] if t.name != first.name})
    return box


def _overlap(a0: int, a1: int, b0: int, b1: int) -> bool:
    return a0 < b1 and b0 < a1


def _classify(boxes: list[Box]) -> None:
    for a in boxes:
        for b in boxes:
            if a is b or a.space != b.space:
                continue
            if a.base == b.base:
                if a.size < b.size and b.offset <= a.offset and a.offset + a.size <= b.offset + b.size:
                    a.view = True
            elif (_overlap(a.offset, a.offset + a.size, b.offset, b.offset + b.size)
                  and _overlap(a.start, a.end + 1, b.start, b.end + 1)):
                a.conflict = b.conflict = True


def is_unallocated(function: FunctionMap) -> bool:
    """True when two different bases of one space both sit at offset 0 (no addresses assigned yet)."""
    at_zero: dict[str, set[str]] = {}
    for t in function.tiles:
        if t.offset == 0:
            at_zero.setdefault(t.space, set()).add(t.base)
    return any(len(bases) > 1 for bases in at_zero.values())


# -- backend ----------------------------------------------------------------------------------------
def backend_limits(backend_name: str) -> dict[str, int]:
    """Capacity in bytes per memory space (the limits pypto's AllocateMemoryAddr enforces)."""
    from pypto.ir.options import BackendType
    from pypto.passes.allocate_memory_addr import CAPACITY

    try:
        backend = BackendType(backend_name)
    except ValueError:
        raise MemoryMapError(f"unknown backend '{backend_name}' (use one of "
                             f"{', '.join(b.value for b in BackendType)})") from None
    return {space.value: size for space, size in CAPACITY[backend].items()}


def _artifact_of(dump: Path) -> Path:
    return dump.parent.parent if dump.parent.name == "passes_dump" else dump.parent


def resolve_backend(dump: Path, requested: str | None = None) -> BackendChoice:
    """``-b``, else ``compiled_meta.json``'s ``backend_type``, else the ``.pto`` device spec, else Ascend910B."""
    arch = {"Ascend910B": "a2a3", "Ascend950": "a5"}
    if requested:
        backend_limits(requested)
        return BackendChoice(requested, arch.get(requested, "?"), True)
    art = _artifact_of(Path(dump))
    meta = art / "compiled_meta.json"
    if meta.is_file():
        name = json.loads(meta.read_text()).get("backend_type")
        if name in arch:
            return BackendChoice(name, arch[name], True)
    for pto in sorted((art / "ptoas").glob("*.pto")) if (art / "ptoas").is_dir() else []:
        m = _DEVICE_SPEC.search(pto.read_text(errors="replace"))
        if m:
            name = "Ascend950" if "9599" in m.group(1) or "950" in m.group(1) else "Ascend910B"
            return BackendChoice(name, arch[name], True)
    return BackendChoice("Ascend910B", "a2a3", False)


# -- rendering --------------------------------------------------------------------------------------
def pass_name_of(dump: Path) -> str:
    m = _DUMP_NAME.match(Path(dump).name)
    return m.group(2) if m else Path(dump).stem


def _spaces(boxes: list[Box], limits: dict[str, int]) -> list[dict[str, Any]]:
    names = sorted({b.space for b in boxes} | set(limits), key=lambda s: (s not in limits, list(limits).index(s)
                                                                         if s in limits else 0, s))
    out = []
    for s in names:
        mine = [b for b in boxes if b.space == s]
        out.append({"space": s, "hwm": max((b.offset + b.size for b in mine), default=0), "limit": limits.get(s, 0),
                    "tiles": len(mine), "bases": len({b.base for b in mine})})
    return out


def payload(dump: Path, backend_name: str | None = None) -> dict[str, Any]:
    """The data the page draws (also what tests read back)."""
    dump = Path(dump)
    functions = parse_dump(dump)
    for f in functions:
        if is_unallocated(f):
            raise MemoryMapError(f"{dump.name}: function '{f.name}' has no addresses yet (several buffers of one "
                                 f"memory space at offset 0); use the dump after {DEFAULT_PASS}")
    backend = resolve_backend(dump, backend_name)
    limits = backend_limits(backend.name)
    funcs = []
    for f in functions:
        boxes = build_boxes(f.tiles)
        funcs.append({"name": f.name, "ftype": f.ftype, "src_start": f.src_start, "src_end": f.src_end,
                      "source": f.source, "spaces": _spaces(boxes, limits), "boxes": [asdict(b) for b in boxes]})
    return {"dump": dump.name, "pass_name": pass_name_of(dump), "backend": asdict(backend), "caveat": CAVEAT,
            "functions": funcs}


def render(dump: Path, backend_name: str | None = None) -> str:
    """Self-contained HTML of the dump's memory map."""
    from pypto.tools._memory_map_page import PAGE

    data = payload(dump, backend_name)
    blob = json.dumps(data).replace("</", "<\\/")
    return PAGE.replace("__TITLE__", html.escape(f"memory map: {data['dump']}")).replace("__PAYLOAD__", blob)


def resolve_dump(path: Path, pass_name: str = DEFAULT_PASS) -> Path:
    """A dump file itself, or the highest-numbered ``NN_after_<pass_name>.py`` of a dump / artifact dir."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise MemoryMapError(f"{path} does not exist")
    d = path / "passes_dump" if (path / "passes_dump").is_dir() else path
    hits = [p for p in d.iterdir() if (m := _DUMP_NAME.match(p.name)) and m.group(2) == pass_name]
    if not hits:
        raise MemoryMapError(f"no *_after_{pass_name}.py in {d} (compile with "
                             "RunConfig(dump_passes=PassDumpLevel.EXPLICIT); with memory_planner=PTOAS there is "
                             "no AllocateMemoryAddr dump to draw)")
    return max(hits, key=lambda p: int(_DUMP_NAME.match(p.name).group(1)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pypto.tools.memory_map", description=__doc__.split("\n\n")[0])
    p.add_argument("path", type=Path, help="pass dump .py, passes_dump/ or artifact directory")
    p.add_argument("-o", "--output", type=Path, help="HTML to write (default: <dump>.memory_map.html)")
    p.add_argument("-p", "--pass", dest="pass_name", default=DEFAULT_PASS, help="pass whose dump a directory picks")
    p.add_argument("-b", "--backend", help="Ascend910B or Ascend950 (default: from the artifact)")
    args = p.parse_args(argv)
    try:
        dump = resolve_dump(args.path, args.pass_name)
        page = render(dump, args.backend)
        out = args.output or dump.with_suffix(".memory_map.html")
        out.write_text(page)
    except (MemoryMapError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"memory map: {out}")
    print(f"note: {CAVEAT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
