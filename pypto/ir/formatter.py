"""Upstream's ``pypto.ir.formatter``: format printed IR text with ``ruff format`` when ruff is installed."""

from __future__ import annotations

import shutil
import subprocess


def ruff_format(code: str) -> str:
    """``code`` formatted by ``ruff format -`` (line length 120); unchanged when ruff is absent or fails."""
    ruff = shutil.which("ruff")
    if ruff is None:
        return code
    proc = subprocess.run([ruff, "format", "--line-length", "120", "-"], input=code, capture_output=True,
                          text=True, check=False)
    return proc.stdout if proc.returncode == 0 else code
