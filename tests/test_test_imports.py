"""The test suite imports only what the README and the documentation pages tell a user to install.

The README's second command installs ``pypto[test]`` and runs the suite. This walks every ``.py``
file under ``tests/`` and fails when one imports a third-party package that no extra named in the
README or the English pages of ``docs/`` installs, or when a module imports, at module level, a
package that ``[test]`` does not bring (torch is such a package) without first calling
``pytest.importorskip`` on it: that module would fail at collection on a fresh machine, which is how
the README's test command once broke.

``python tests/test_test_imports.py`` prints each third-party import and the extra that installs it.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"


@dataclass(frozen=True)
class Use:
    """One import of a top-level package by a test file."""

    path: Path
    line: int
    package: str
    module_level: bool
    unguarded_in_test: bool = False
    """Inside a ``test_*`` function that neither takes a fixture of that name nor importorskips it."""


def _name(requirement: str) -> str:
    return re.split(r"[\s;<>=!~\[(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def declared() -> dict[str, list[str]]:
    """pyproject's requirement names per extra; the core dependencies under ``""``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = {"": [_name(r) for r in project["dependencies"]]}
    extras.update({k: [_name(r) for r in v] for k, v in project.get("optional-dependencies", {}).items()})
    return extras


def user_docs() -> str:
    """What a user reads: the README and the English pages of the documentation site (``docs/*.md``)."""
    pages = sorted(p for p in (ROOT / "docs").glob("*.md") if not p.name.endswith(".zh.md"))
    return "\n".join(p.read_text() for p in [ROOT / "README.md", *pages])


def readme_extras(text: str) -> set[str]:
    """The extras the README tells a user to install (``.[test]``, ``'pypto[torch]'``, ...)."""
    return {e.strip() for group in re.findall(r"(?:\.|pypto)\[([a-z0-9_,\s-]+)\]", text) for e in group.split(",")}


def closure(names: list[str]) -> set[str]:
    """These distributions and, for those installed, everything they require (extras' own deps aside)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        todo.extend(_name(r) for r in requires if "extra ==" not in r.replace('"', "'").replace("extra==", "extra =="))
    return seen


def _local_names() -> set[str]:
    """Modules the tests import from their own folders (conftest puts them on sys.path), and the
    repository's own benchmark modules and packages (a test puts ``benchmarks/`` or a folder in it there)."""
    bench = TESTS.parent / "benchmarks"
    return ({p.stem for p in TESTS.rglob("*.py")} | {p.name for p in TESTS.rglob("*") if p.is_dir()}
            | {p.stem for p in bench.rglob("*.py")} | {p.name for p in bench.rglob("*") if p.is_dir()}
            | {"pypto", "tests"})


def _guarded(tree: ast.Module) -> set[str]:
    """Packages a module skips itself over with a module-level ``pytest.importorskip("pkg")``."""
    names = set()
    for node in tree.body:
        for call in ast.walk(node):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "importorskip"
                    and call.args and isinstance(call.args[0], ast.Constant)):
                names.add(str(call.args[0].value).split(".")[0])
    return names


def _type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _test_guards(tree: ast.Module) -> dict[int, set[str]]:
    """Import node id -> the packages its enclosing ``test_*`` function guards (fixture argument or importorskip)."""
    guards: dict[int, set[str]] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.name.startswith("test_"):
            names = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
            names |= {str(c.args[0].value).split(".")[0] for c in ast.walk(fn) if isinstance(c, ast.Call)
                      and isinstance(c.func, ast.Attribute) and c.func.attr == "importorskip"
                      and c.args and isinstance(c.args[0], ast.Constant)}
            guards.update({id(n): names for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom)})
    return guards


def uses(path: Path, local: set[str]) -> tuple[list[Use], set[str]]:
    """Third-party imports of one file, and the packages it importorskips at module level."""
    tree = ast.parse(path.read_text(), str(path))
    skip = {id(n) for top in tree.body if _type_checking(top) for n in ast.walk(top)}
    top_level = {id(n) for n in tree.body}
    in_tests = _test_guards(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            package = name.split(".")[0]
            if package in sys.stdlib_module_names or package in local or package == "__future__":
                continue
            unguarded = id(node) in in_tests and package not in in_tests[id(node)]
            found.append(Use(path, node.lineno, package, id(node) in top_level, unguarded))
    return found, _guarded(tree)


def _dist_of() -> dict[str, str]:
    return {imp: dists[0].lower().replace("_", "-") for imp, dists in md.packages_distributions().items()}


def _imported_locals(files: list[Path], local: set[str]) -> set[str]:
    """Local helper modules some test imports by name (a file loaded by path, like a script, is not)."""
    names = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names & local


def _collected(path: Path, imported: set[str]) -> bool:
    """Whether pytest imports this file while collecting: a test module, a conftest, or a helper one imports."""
    return path.name.startswith("test_") or path.name == "conftest.py" or path.stem in imported


def problems(files: list[Path], readme: str) -> list[str]:
    """What a fresh ``pip install -e '.[test]'`` would trip over, one line per import.

    The module-level rule holds for files pytest imports while collecting; a script a test runs by
    path (``tests/api/quickstart_torch.py``) is loaded only inside a test that already holds torch.
    """
    extras = declared()
    named = readme_extras(readme)
    everything = closure([d for e in ("", *sorted(named & set(extras))) for d in extras[e]])
    test_env = closure(extras[""] + extras.get("test", []))
    dist_of = _dist_of()
    local = _local_names()
    imported = _imported_locals(files, local)
    out = []
    for path in files:
        found, guarded = uses(path, local)
        collected = _collected(path, imported)
        for use in found:
            dist = dist_of.get(use.package, use.package.lower().replace("_", "-"))
            where = f"{use.path.relative_to(ROOT) if use.path.is_relative_to(ROOT) else use.path}:{use.line}"
            if dist not in everything:
                out.append(f"{where}: imports {use.package!r} ({dist}), which no extra named in the README or docs/ installs "
                           f"(they name: {', '.join(sorted(named))}); add it to [test] in pyproject.toml")
            elif dist not in test_env and use.module_level and collected and use.package not in guarded:
                out.append(f"{where}: imports {use.package!r} at module level, but [test] does not install {dist}: "
                           f"use the '{use.package}' fixture or pytest.importorskip({use.package!r}) first")
            elif dist not in test_env and use.unguarded_in_test and use.package not in guarded:
                out.append(f"{where}: a test imports {use.package!r}, which [test] does not install: take the "
                           f"'{use.package}' fixture (or call pytest.importorskip({use.package!r})) instead")
    return out


def test_every_test_import_is_installed_by_an_extra_the_readme_names() -> None:
    files = sorted(TESTS.rglob("*.py"))
    assert problems(files, user_docs()) == []


def test_the_docs_pages_name_the_optional_extras() -> None:
    """The extras beyond [test] that the suite's optional tests need are named where a user reads."""
    assert {"test", "torch", "sweep", "docs", "dev"} <= readme_extras(user_docs())


def test_the_check_catches_an_unlisted_package_and_an_unguarded_optional_one(tmp_path: Path) -> None:
    bad = tmp_path / "test_bad.py"
    bad.write_text("import numpy\nimport torch\nimport notapackage_xyz.sub\n\ndef test_x():\n    import torch\n")
    inner = tmp_path / "test_inner.py"
    inner.write_text("def test_a():\n    import torch\n\ndef test_b(torch):\n    import torch\n\n"
                     "def helper():\n    import torch\n")
    guarded = tmp_path / "test_ok.py"
    guarded.write_text("import pytest\n\ntorch = pytest.importorskip('torch')\nfrom torch import nn\n")
    script = tmp_path / "script_run_by_path.py"
    script.write_text("import torch\n")
    readme = "python -m pip install -e '.[test]'\npip install 'pypto[torch]'\n"
    found = problems([bad, guarded, script], readme)
    assert len(found) == 3, found
    assert "test_bad.py:2: imports 'torch' at module level" in found[0] and "importorskip('torch')" in found[0]
    assert "test_bad.py:3: imports 'notapackage_xyz'" in found[1] and "no extra named in the README" in found[1]
    assert "test_bad.py:6: a test imports 'torch'" in found[2] and "fixture" in found[2]
    assert [p.split(": ")[0].rsplit("/", 1)[-1] for p in problems([inner], readme)] == ["test_inner.py:2"]
    assert any("no extra named" in p for p in problems([bad], "python -m pip install -e '.[test]'\n"))


def test_the_readme_names_the_test_extra() -> None:
    assert "test" in readme_extras((ROOT / "README.md").read_text())


if __name__ == "__main__":
    extras = declared()
    for f in sorted(TESTS.rglob("*.py")):
        for u in uses(f, _local_names())[0]:
            dist = _dist_of().get(u.package, u.package)
            owner = next((e or "core" for e, ds in extras.items() if dist in closure(ds)), "none")
            print(f"{u.path.relative_to(ROOT)}:{u.line}: {u.package} ({dist}) <- {owner}")
