"""Helpers of the reliability tests: run the pypto CLI or a Python script in a fresh process with an
isolated cache, and classify how it ended."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

KERNEL_SCRIPT = '''\
import numpy as np
import pypto.language as pl


@pl.jit
def addmul(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 64])
        tb = pl.load(b, [0, 0], [64, 64])
        pl.store(pl.mul(pl.add(ta, tb), tb), [0, 0], out)
    return out


SHAPES = {"addmul": {"a": "64x64:f32", "b": "64x64:f32", "out": "64x64:f32"}}


def golden_addmul(a, b, out):
    return (a + b) * b


if __name__ == "__main__":
    a = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32)
    out = np.zeros_like(a)
    addmul(a, b, out)
    np.testing.assert_allclose(out, (a + b) * b, rtol=1e-5, atol=1e-5)
    print("RESULT OK")
'''


@dataclass
class Outcome:
    code: int  # negative: killed by that signal; None-free (a hang raises TimeoutExpired in run())
    stdout: str
    stderr: str

    @property
    def signal(self) -> str | None:
        return signal.Signals(-self.code).name if self.code < 0 else None

    def describe(self) -> str:
        return f"exit {self.code}{' (' + self.signal + ')' if self.signal else ''}\n--stdout--\n{self.stdout[-3000:]}" \
               f"\n--stderr--\n{self.stderr[-3000:]}"


def env_for(cache: Path, build: Path, **extra: str) -> dict[str, str]:
    """This checkout first on sys.path, a private cache and build dir, JSON logs, no inherited PYPTO_*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update(PYPTO_CACHE_DIR=str(cache), PYPTO_PROG_BUILD_DIR=str(build), PYPTO_LOG_FORMAT="json")
    env.update(extra)
    return env


def run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 240) -> Outcome:
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, errors="replace",
                          timeout=timeout, check=False)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def cli(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 240) -> Outcome:
    return run([sys.executable, "-m", "pypto", *args], env, cwd, timeout)


def script(path: Path, env: dict[str, str], timeout: float = 240) -> Outcome:
    return run([sys.executable, str(path)], env, path.parent, timeout)
