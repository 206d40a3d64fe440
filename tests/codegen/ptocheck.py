"""Run the shared dialect checker (``pto_verify.py --ptoas --strict``) on generated ``.pto`` files.

The checker needs a Python 3.12 venv with the pinned ptoas wheel. It is created once with the
shared setup script into ``<cache>/pto-verify-venv`` (``PTO_VERIFY_VENV`` overrides the location);
tests skip with the reason when the shared tools or Python 3.12 are unavailable.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
TOOL = SHARED / "tools" / "pto_verify.py"
SETUP = SHARED / "tools" / "setup_pto_verify.sh"


def _cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "pypto"


@cache
def checker() -> tuple[Path | None, str]:
    """(venv python, "") when the checker is usable, else (None, reason)."""
    if not TOOL.is_file():
        return None, f"dialect checker not found at {TOOL} (shared tools absent)"
    venv = Path(os.environ.get("PTO_VERIFY_VENV") or _cache_dir() / "pto-verify-venv")
    py = venv / "bin" / "python"
    if not (venv / "ptoas-shim" / "ptoas").exists():
        venv.parent.mkdir(parents=True, exist_ok=True)
        with open(venv.parent / ".pto-verify.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (venv / "ptoas-shim" / "ptoas").exists():
                proc = subprocess.run(["bash", str(SETUP), str(venv)], capture_output=True, text=True,
                                      timeout=900, check=False)
                if proc.returncode != 0:
                    return None, f"checker venv setup failed: {proc.stderr.strip()[-300:]}"
    return py, ""


def _as_fed(paths: tuple[Path, ...], tmp: Path) -> list[Path]:
    """Each file as ptoas 0.1.1 is fed it: a bf16 module's f16 stand-in (pypto.backend.bf16_standin)."""
    from pypto.backend import bf16_standin

    out = []
    for i, p in enumerate(paths):
        text = p.read_text()
        if bf16_standin.uses(text)[0]:
            p = tmp / f"{i}_{p.stem}.{bf16_standin.SUFFIX}"
            p.write_text(bf16_standin.to_standin(text, p.name))
        out.append(p)
    return out


def verify(*paths: Path) -> None:
    """Assert every file, as ptoas is fed it, passes ``pto_verify.py --ptoas --strict`` (skip when the
    checker is unavailable)."""
    py, reason = checker()
    if py is None:
        pytest.skip(reason)
    with tempfile.TemporaryDirectory() as td:
        argv = [str(py), str(TOOL), "--ptoas", "--strict", *map(str, _as_fed(paths, Path(td)))]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, f"{' '.join(argv)}\n{proc.stdout}\n{proc.stderr}"


def verify_text(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.pto"
    path.write_text(text)
    verify(path)
    return path
