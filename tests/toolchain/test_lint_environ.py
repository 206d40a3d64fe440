"""Only pypto/toolchain/settings.py (and settings_sources.py, the reading it shares) reads the environment."""

from __future__ import annotations

import ast
from pathlib import Path

import pypto

PACKAGE = Path(pypto.__file__).resolve().parent
ALLOWED = {PACKAGE / "toolchain" / "settings.py", PACKAGE / "toolchain" / "settings_sources.py"}
_READERS = {"environ", "getenv", "environb", "getenvb", "putenv", "unsetenv"}


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _READERS:
            found.append(f"{path}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"{path}:{node.lineno}: from os import {a.name}" for a in node.names if a.name in _READERS]
    return found


def test_no_environment_reads_outside_settings() -> None:
    bad = [v for path in sorted(PACKAGE.rglob("*.py")) if path not in ALLOWED for v in _violations(path)]
    assert not bad, (
        "read settings from pypto.toolchain.settings (resolve_settings) and build child environments with "
        "settings.subprocess_env():\n" + "\n".join(bad))


def test_the_checker_sees_reads(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("import os\nfrom os import getenv\nx = os.environ.get('A')\ny = os.getenv('B')\n")
    assert len(_violations(sample)) == 3
