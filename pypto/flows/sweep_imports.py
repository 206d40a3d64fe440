"""The local modules a kernel file imports, transitively: what a sweep job's content key must cover.

The file's directory is where Python looks first when pypto loads the file (the loader puts it at the
front of ``sys.path``), so an import there of ``helpers`` finds ``helpers.py`` or the package
``helpers/`` beside the file. :func:`local_closure` reads each file's syntax tree (nothing is run) and
follows ``import a.b``, ``from a.b import c`` (``c`` may be a submodule), relative imports inside
packages and ``importlib.import_module("x")`` / ``__import__("x")`` with a constant name, resolving each
name the way Python's path finder would under that directory: a package directory (with or without
``__init__.py``), an extension module, a ``.py`` file. Names that resolve nowhere under it (numpy,
pypto, the standard library) are not followed: site-packages never enter a key.

An import whose name is computed at run time (``importlib.import_module(name)``) cannot be read from
the tree; then every ``*.py`` file under the directory counts (hidden directories, ``__pycache__`` and
virtual environments left out), so the key errs towards a rerun, never towards a stale result.
"""

from __future__ import annotations

import ast
import importlib.machinery
from pathlib import Path

_DYNAMIC_IMPORTERS = {("importlib", "import_module"), ("import_module",), ("__import__",)}
_SKIP_DIRS = {"__pycache__", "site-packages", "dist-packages", "node_modules"}


def _module_files(root: Path, dotted: str) -> list[Path]:
    """The files that module ``dotted`` resolves to under ``root`` (each package on the way included)."""
    found: list[Path] = []
    here = root
    parts = dotted.split(".")
    for part in parts:
        if not part.isidentifier():
            return found
        package = here / part
        init = package / "__init__.py"
        if init.is_file():
            found.append(init)
            here = package
            continue
        files = [here / f"{part}{suffix}" for suffix in importlib.machinery.all_suffixes()]
        files = [f for f in files if f.is_file()]
        if files:
            return found + files  # a module (not a package) has no submodules to follow
        if package.is_dir():  # a namespace package
            here = package
            continue
        return found
    return found


def _package_of(file: Path, root: Path) -> list[str] | None:
    """The dotted package a file belongs to under ``root`` (``helpers/sub.py`` -> ["helpers"]);
    None for the kernel file's own directory (it is loaded as a top-level module)."""
    rel = file.relative_to(root).parent.parts
    return list(rel) if rel else None


def _resolve_relative(node: ast.ImportFrom, file: Path, root: Path) -> str | None:
    """``from ..x import y`` in ``a/b/m.py`` -> ``a.x`` (level 1 is the file's own package, for a module
    and for an ``__init__.py`` alike); None when it climbs out of the top package."""
    package = _package_of(file, root)
    if package is None or node.level - 1 >= len(package):
        return None
    base = package[:len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _const_name(call: ast.Call) -> str | None | bool:
    """The module a dynamic import names: a string, or True when the name is computed (unknowable)."""
    func = call.func
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    if tuple(reversed(parts)) not in _DYNAMIC_IMPORTERS or not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return True


def _imports(file: Path, root: Path) -> tuple[set[str], bool]:
    """The dotted names a file may import (absolute, relative made absolute) and whether it imports by a
    computed name."""
    try:
        tree = ast.parse(file.read_bytes(), str(file))
    except (OSError, SyntaxError, ValueError):
        return set(), False  # its bytes are in the key; the job itself reports the error
    names: set[str] = set()
    dynamic = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module if node.level == 0 else _resolve_relative(node, file, root)
            if module is None:
                continue
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call):
            name = _const_name(node)
            if name is True:
                dynamic = True
            elif isinstance(name, str):
                names.add(name)
    return names, dynamic


def _all_sources(root: Path) -> set[Path]:
    out: set[Path] = set()
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).parts[:-1]
        if any(p.startswith(".") or p in _SKIP_DIRS for p in rel):
            continue
        if any((root.joinpath(*rel[:i + 1]) / "pyvenv.cfg").exists() for i in range(len(rel))):
            continue
        if path.is_file():
            out.add(path)
    return out


def local_closure(file: Path) -> set[Path]:
    """The kernel file and every file under its directory that it imports, transitively."""
    file = file.resolve()
    root = file.parent
    seen: set[Path] = {file}
    todo = [file]
    while todo:
        current = todo.pop()
        if current.suffix != ".py":
            continue  # an extension module: its bytes count, its imports cannot be read
        names, dynamic = _imports(current, root)
        if dynamic:
            return seen | _all_sources(root)
        for name in sorted(names):
            for found in _module_files(root, name):  # paths under root (a symlinked module counts by its content)
                if found not in seen:
                    seen.add(found)
                    todo.append(found)
    return seen
