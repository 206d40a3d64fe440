"""Upstream PyPTO's public Python API against ours: which of its module paths and names resolve here.

Read from a git snapshot (or checkout) of hw-native-sys/pypto: every module under ``python/pypto``
(no part starting with ``_``; a ``.pyi`` beside its ``.py`` is not read twice). A module's public
names are its literal ``__all__``; a ``.pyi`` stub without one lists its top-level functions, classes
and assignments (not ``_``-prefixed); a ``.py`` without ``__all__`` counts as a module path only. Each
module is imported here under the same dotted path; where it does not import, its names are looked
up on the face a user reaches them by (``pl.tile`` for ``language.op.tile_ops``, ...). The binding
stubs (``pypto.pypto_core``) are a tier of their own.

    python benchmarks/upstream_compat.py --api [SNAPSHOT]   (SNAPSHOT defaults to $UPSTREAM_SNAPSHOT)

Prints one line per module with something missing (all with ``--verbose``) and, per tier,
``api TIER: FOUND/NAMES names (modules IMPORTED/MODULES)``.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# upstream module -> "our module[:attribute]" its names are reached through when the path is absent
FACES = {
    "pypto.language.op.tile_ops": "pypto.language:tile", "pypto.language.op.tensor_ops": "pypto.language:tensor",
    "pypto.language.op.system_ops": "pypto.language:system", "pypto.language.op.array_ops": "pypto.language:array",
    "pypto.language.op.prefetch_ops": "pypto.language:prefetch", "pypto.language.op.unified_ops": "pypto.language",
    "pypto.language.distributed.op.tile_ops": "pypto.language.distributed:tile",
    "pypto.language.distributed.op.tensor_ops": "pypto.language.distributed:tensor",
    "pypto.language.distributed.op.system_ops": "pypto.language.distributed:system",
    "pypto.language.distributed.op.unified_ops": "pypto.language.distributed",
}
FACE_PREFIXES = (("pypto.language.typing", "pypto.language"), ("pypto.language.parser", "pypto.language"))


@dataclass
class ModuleReport:
    name: str
    names: list[str]
    imported: bool
    missing: list[str] = field(default_factory=list)
    via_face: bool = False


def _git(snapshot: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(snapshot), *args], capture_output=True, text=True, check=True).stdout


def _public(src: str, stub: bool) -> list[str] | None:
    tree = ast.parse(src)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return [n for n in ast.literal_eval(node.value) if isinstance(n, str)]
            except ValueError:
                pass
    if not stub:
        return None
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(node.name)
        elif isinstance(node, ast.Assign):
            found += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.append(node.target.id)
    return [n for n in dict.fromkeys(found) if not n.startswith("_") and n != "annotations"]


def upstream_modules(snapshot: Path) -> dict[str, list[str] | None]:
    """Dotted module path -> its public names (None: a module path without ``__all__``)."""
    files = [p for p in _git(snapshot, "ls-tree", "-r", "--name-only", "HEAD", "python/pypto").split()
             if p.endswith((".py", ".pyi"))]
    present = {p.removeprefix("python/") for p in files}
    out: dict[str, list[str] | None] = {}
    for path in files:
        rel = path.removeprefix("python/")
        parts = rel.rsplit(".", 1)[0].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        if any(p.startswith("_") for p in parts):
            continue
        if rel.endswith(".pyi") and rel[:-1] in present:
            continue
        try:
            names = _public(_git(snapshot, "show", f"HEAD:{path}"), rel.endswith(".pyi"))
        except SyntaxError:
            continue
        out[".".join(parts)] = None if names is None else sorted(set(names))
    return out


def _face(module: str) -> Any:
    target = FACES.get(module) or next((f for p, f in FACE_PREFIXES if module.startswith(p)), None)
    if target is None:
        return None
    mod, _, attr = target.partition(":")
    try:
        obj = importlib.import_module(mod)
        return getattr(obj, attr) if attr else obj
    except Exception:  # noqa: BLE001 - a face that fails to load finds nothing
        return None


def _has(obj: Any, name: str) -> bool:
    try:
        return hasattr(obj, name)
    except Exception:  # noqa: BLE001 - an attribute that raises on lookup is not there
        return False


def check_module(name: str, names: list[str] | None) -> ModuleReport:
    try:
        obj, imported = importlib.import_module(name), True
    except Exception:  # noqa: BLE001 - any import failure means the path is missing
        obj, imported = _face(name), False
    report = ModuleReport(name, names or [], imported, via_face=not imported and obj is not None)
    report.missing = [n for n in report.names if obj is None or not _has(obj, n)]
    return report


def survey(snapshot: Path) -> dict[str, list[ModuleReport]]:
    """Per tier ("public", "pypto_core"): one report per upstream module, in name order."""
    tiers: dict[str, list[ModuleReport]] = {"public": [], "pypto_core": []}
    for name, names in sorted(upstream_modules(snapshot).items()):
        tiers["pypto_core" if name.startswith("pypto.pypto_core") else "public"].append(check_module(name, names))
    return tiers


def render(tiers: dict[str, list[ModuleReport]], verbose: bool = False) -> list[str]:
    lines = []
    for tier, reports in tiers.items():
        for r in reports:
            if verbose or r.missing:
                head = "" if r.imported else ("no module path (names checked on its face); " if r.via_face
                                              else "no module path; ")
                lines.append(f"{tier:10} {r.name}: {head}missing {len(r.missing)}/{len(r.names)}: "
                             + " ".join(r.missing[:40]))
        found = sum(len(r.names) - len(r.missing) for r in reports)
        total = sum(len(r.names) for r in reports)
        lines.append(f"api {tier}: {found}/{total} names (modules {sum(r.imported for r in reports)}/{len(reports)})")
    return lines
