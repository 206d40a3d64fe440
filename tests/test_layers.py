"""The import layering of ``pypto``: every import runs down the floors, and circles stay few and local.

An ``ast`` walk reads every import in ``pypto/`` (module level, inside functions, under
``TYPE_CHECKING``). Each top-level room of the package has a floor in :data:`FLOORS`; an import may
point at a lower floor or stay inside its own room. The one way up is a package face
(``__init__.py``) re-exporting a name it lists in its ``_LAZY`` table: declared, loaded on first use.
Circles are counted as strongly connected components over modules; they must stay few and each must
sit inside one folder. Run this file directly (``python tests/test_layers.py``) for the full picture.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "pypto"

# The floors, ground first. An import may point at a lower floor or within its own room only.
FLOORS: dict[str, int] = {
    "pypto": 0,  # the package face: a version string
    "lazy": 0,  # a face's __getattr__ over its _LAZY table
    "span": 1,
    "diagnostics": 2,
    "errors": 3,
    "toolchain": 4,  # settings, manifests, platforms, launcher: read by all, imports none of them
    "ir": 5,
    "testing": 5,  # upstream's pypto.testing: error-raising helpers (errors, span)
    "arith": 6,  # integer analysis of IR expressions
    "artifact": 6,  # the one owner of the artifact directory: codegen, backend, runtime meet here
    "language": 7,
    "passes": 8,  # passes/instruments parses the printed IR back (round-trip check)
    "codegen": 9,
    "backend": 9,
    "runtime": 9,
    "compile_profiling": 9,  # upstream's CompileProfiler (report formats from passes); the driver records into it
    "simpler_fallback": 10,  # the finder of last resort for ``import simpler`` (its Worker is in runtime)
    "debug": 10,  # torch_codegen / validate_ir: run programs and pass dumps in torch
    "compiled": 11,  # the artifact handle; calling it runs the runtime
    "driver": 12,  # ir.compile
    "jit": 13,
    "flows": 14,  # compile-and-run flows: run/benchmark, user files, run_pto
    "tools": 14,
    "pypto_core": 14,  # upstream's binding names, a face over ir, passes, arith, toolchain  # swimlane, memory map, IR trace: read artifact dirs and dumps offline
    "cli": 15,
    "__main__": 16,
}

# Pairs that may not meet even downward: the compiler and the runtime only share artifact directories.
FORBIDDEN = {("driver", "runtime")}
MAX_CIRCLES = 10


@dataclass(frozen=True)
class Import:
    file: str  # path relative to the repository root
    line: int
    source: str  # importing module, dotted
    target: str  # imported module, dotted
    names: tuple[str, ...]  # names taken by ``from target import ...`` (empty for ``import target``)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.source} -> {self.target}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(base: str, names: tuple[str, ...], modules: dict[str, Path]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """``from base import a, b``: submodules are their own targets, other names belong to ``base``."""
    plain = tuple(n for n in names if f"{base}.{n}" not in modules)
    for n in names:
        if f"{base}.{n}" in modules:
            yield f"{base}.{n}", ()
    if plain or not names:
        yield base, plain


def imports_of(path: Path, modules: dict[str, Path], text: str | None = None) -> Iterator[Import]:
    """Every ``pypto`` import in the file, wherever it sits (module level, functions, ``TYPE_CHECKING``)."""
    source = module_name(path)
    is_package = path.name == "__init__.py"
    rel = str(path.relative_to(ROOT.parent))
    for node in ast.walk(ast.parse(path.read_text() if text is None else text, str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "pypto":
                    yield Import(rel, node.lineno, source, alias.name, ())
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = source.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            if base.split(".")[0] != "pypto":
                continue
            for target, names in _resolve(base, tuple(a.name for a in node.names), modules):
                yield Import(rel, node.lineno, source, target, names)


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "pypto"


def folder(module: str, modules: dict[str, Path]) -> str:
    path = modules[module]
    return str(path.parent.relative_to(ROOT.parent))


def lazy_table(path: Path) -> dict[str, str]:
    """A face's ``_LAZY`` table as name -> module (both spellings used in pypto's faces)."""
    for node in ast.parse(path.read_text()).body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id == "_LAZY" and isinstance(node.value, ast.Dict):
            table = ast.literal_eval(node.value)
            return {k: (v[0] if isinstance(v, tuple) else v) for k, v in table.items()}
    return {}


def _is_up(imp: Import) -> bool:
    """Up, sideways (another room on the same floor) or a forbidden pair."""
    a, b = room(imp.source), room(imp.target)
    return a != b and (FLOORS[b] >= FLOORS[a] or (a, b) in FORBIDDEN)


def _declared(imp: Import, modules: dict[str, Path]) -> bool:
    """An upward import in a face, taking only names that face re-exports through ``_LAZY``."""
    path = modules.get(imp.source)
    if path is None or not imp.names:  # a package face, or a module standing for an upstream import path
        return False
    table = lazy_table(path)
    prefix = imp.source + "."
    return all(n in table and imp.target in (table[n], prefix + table[n]) for n in imp.names)


def scan() -> tuple[dict[str, Path], list[Import]]:
    modules = all_modules()
    found = [imp for p in modules.values() for imp in imports_of(p, modules)]
    return modules, [imp for imp in found if imp.target in modules]


def lazy_arrows(modules: dict[str, Path]) -> list[tuple[str, str]]:
    """The upward re-exports faces declare in ``_LAZY`` (face -> target module)."""
    arrows = []
    for name, path in modules.items():
        for target in sorted(set(lazy_table(path).values())):
            full = target if target.startswith("pypto") else f"{name}.{target}"
            if room(full) != room(name) and FLOORS[room(full)] >= FLOORS[room(name)]:
                arrows.append((name, full))
    return arrows


def circles(edges: list[Import]) -> list[list[str]]:
    """Strongly connected components with more than one module (modules that reach each other)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
    reach = {node: _reachable(graph, node) for node in graph}
    found: set[tuple[str, ...]] = set()
    for node, seen in reach.items():
        comp = tuple(sorted(m for m in seen if node in reach.get(m, ())))
        if len(comp) > 1:
            found.add(comp)
    return sorted(list(c) for c in found)


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_every_room_has_a_floor():
    modules = all_modules()
    missing = sorted({room(m) for m in modules} - set(FLOORS))
    assert not missing, f"rooms without a floor in FLOORS (tests/test_layers.py): {missing}"


def test_every_face_states_its_floor():
    """A package face's docstring says what it may import (like tinygrad's helpers.py first lines)."""
    missing = [str(p.relative_to(ROOT.parent)) for p in sorted(ROOT.rglob("__init__.py"))
               if "Floor:" not in (ast.get_docstring(ast.parse(p.read_text())) or "")]
    assert not missing, f"package faces whose docstring has no 'Floor:' line: {missing}"


def test_no_import_runs_back_up():
    modules, edges = scan()
    bad = [e for e in edges if _is_up(e) and not _declared(e, modules)]
    report = "\n".join(
        f"  {e}  ({room(e.source)} floor {FLOORS[room(e.source)]} -> {room(e.target)} floor "
        f"{FLOORS[room(e.target)]})" for e in bad)
    assert not bad, (f"{len(bad)} import(s) run back up the layers (floors in tests/test_layers.py; "
                     f"a face may re-export upward only through its _LAZY table):\n{report}")


def test_circles_are_few_and_local():
    modules, edges = scan()
    found = circles(edges)
    wide = [c for c in found if len({folder(m, modules) for m in c}) > 1]
    listing = "\n".join("  " + " <-> ".join(c) for c in found)
    assert len(found) <= MAX_CIRCLES, f"{len(found)} import circles (at most {MAX_CIRCLES}):\n{listing}"
    assert not wide, "import circles spanning two folders:\n" + "\n".join("  " + " <-> ".join(c) for c in wide)


def test_scanner_sees_function_level_and_type_checking_imports():
    """The walk must not miss the imports that hide circles, nor relative ones."""
    text = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pypto.ir import Span\n"
            "def f():\n    from pypto.errors import UserError\n    import pypto.span\n"
            "    from . import dtypes\n")
    modules = all_modules()
    found = {(i.target, i.line) for i in imports_of(ROOT / "ir" / "probe.py", modules, text)}
    assert found == {("pypto.ir", 3), ("pypto.errors", 5), ("pypto.span", 6), ("pypto.ir.dtypes", 7)}


def test_an_upward_import_is_reported_with_its_place():
    modules = all_modules()
    [imp] = imports_of(ROOT / "ir" / "probe.py", modules, "def f():\n    from pypto.driver import compile\n")
    assert _is_up(imp) and not _declared(imp, modules)
    assert str(imp) == "pypto/ir/probe.py:2: pypto.ir.probe -> pypto.driver"


def main() -> int:
    modules, edges = scan()
    up = [e for e in edges if _is_up(e)]
    declared = [e for e in up if _declared(e, modules)]
    found = circles(edges)
    print(f"{len(modules)} modules, {len(edges)} own-package imports")
    print(f"imports running back up: {len(up)} ({len(declared)} declared by a face's _LAZY table)")
    for e in up:
        print(f"  {e}{'  [declared]' if e in declared else ''}")
    print(f"re-exports declared in _LAZY tables pointing up: {len(lazy_arrows(modules))}")
    for a, b in lazy_arrows(modules):
        print(f"  {a} -> {b}")
    rooms: dict[str, set[str]] = {}
    for e in edges:
        if room(e.source) != room(e.target):
            rooms.setdefault(room(e.source), set()).add(room(e.target))
    print("rooms (floor: room -> rooms it imports):")
    for name in sorted(rooms, key=lambda r: (FLOORS[r], r)):
        print(f"  {FLOORS[name]:2d}: {name} -> {', '.join(sorted(rooms[name], key=lambda r: (FLOORS[r], r)))}")
    wide = [c for c in found if len({folder(m, modules) for m in c}) > 1]
    print(f"circles: {len(found)} ({len(wide)} spanning two folders)")
    for c in found:
        print("  " + " <-> ".join(c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
