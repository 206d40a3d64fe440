"""Small kernel files for sweep tests, and a private result store (the g++ build cache stays shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

_KERNEL = '''
import numpy as np

import pypto.language as pl


@pl.jit
def {name}(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.{op}(a, b)
    return out


SHAPES = {{"{name}": {{"a": "32x32:f32", "b": "32x32:f32", "out": "32x32:f32"}}}}


def golden_{name}(a, b, out):
    return {expr}
'''
OPS = (("sweep_add", "add", "a + b"), ("sweep_sub", "sub", "a - b"), ("sweep_mul", "mul", "a * b"))


def write_kernels(root: Path, ops=OPS) -> list[Path]:
    """One small @pl.jit kernel (with its golden) per file."""
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, op, expr in ops:
        path = root / f"{name}.py"
        path.write_text(_KERNEL.format(name=name, op=op, expr=expr))
        paths.append(path)
    return paths


@pytest.fixture
def kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``<tmp>/kernels`` with three one-kernel files; the working directory is ``<tmp>``."""
    monkeypatch.chdir(tmp_path)
    write_kernels(tmp_path / "kernels")
    return tmp_path / "kernels"
