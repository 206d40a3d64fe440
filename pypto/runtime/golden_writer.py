"""Upstream's ``pypto.runtime.golden_writer``: :func:`write_golden` writes an artifact's ``golden.py``.

The tensors of ``tensor_specs`` are made once and saved as ``data/in/<name>.pt`` (inputs, and the
initial value of outputs that have one), ``golden_fn(tensors, params)`` fills the outputs, which are
saved as ``data/out/<name>.pt``. The written ``golden.py`` has ``generate_inputs(params)`` (the
inputs in parameter order, zeroed pure outputs, then the scalars as ctypes values),
``compute_golden(tensors, params)`` (fills each output from ``data/out``), ``__outputs__``, ``RTOL``
and ``ATOL``; :func:`pypto.runtime.debug.replay` and ``python -m pypto.runtime.execute_artifact``
read it. An existing ``data_dir`` holding every file is reused as it is.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec

_CTYPES = {"int64": "c_int64", "int32": "c_int32", "uint64": "c_uint64", "uint32": "c_uint32", "float": "c_float",
           "double": "c_double"}


def _needed(specs: list[TensorSpec]) -> list[str]:
    files = [f"in/{s.name}.pt" for s in specs if not s.is_output or s.init_value is not None]
    return files + [f"out/{s.name}.pt" for s in specs if s.is_output]


def _materialize(specs: list[TensorSpec], data: Path, golden_fn: Callable[..., Any]) -> None:
    import torch

    tensors = {s.name: s.create_tensor() for s in specs}
    (data / "in").mkdir(parents=True, exist_ok=True)
    for s in specs:
        if not s.is_output or s.init_value is not None:
            torch.save(tensors[s.name].clone(), data / "in" / f"{s.name}.pt")
    golden_fn(tensors, None)
    (data / "out").mkdir(parents=True, exist_ok=True)
    for s in specs:
        if s.is_output:
            torch.save(tensors[s.name], data / "out" / f"{s.name}.pt")


def generate_golden_source(tensor_specs: list[TensorSpec], rtol: float, atol: float, *,
                           scalar_specs: list[ScalarSpec] | None = None, data_dir: str | None = None) -> str:
    """The text of ``golden.py`` (``data_dir`` None: the ``data/`` directory beside it)."""
    where = repr(data_dir) if data_dir is not None else 'Path(__file__).resolve().parent / "data"'
    lines = [f"    {s.name} = torch.load(_DATA / 'in' / '{s.name}.pt', weights_only=True)"
             if not s.is_output or s.init_value is not None
             else f"    {s.name} = torch.zeros({list(s.shape)!r}, dtype={s.dtype})" for s in tensor_specs]
    lines += [f"    {s.name} = ctypes.{_CTYPES[s.ctype]}({s.value!r})" for s in scalar_specs or []]
    names = [s.name for s in tensor_specs] + [s.name for s in scalar_specs or []]
    outs = [s.name for s in tensor_specs if s.is_output]
    body = "\n".join(lines) or "    pass"
    pairs = ", ".join(f"({n!r}, {n})" for n in names)
    return f'''"""Inputs and expected outputs of this artifact (written by pypto.runtime.golden_writer)."""

import ctypes
from pathlib import Path

import torch

_DATA = Path({where})

__outputs__ = {outs!r}
RTOL = {rtol!r}
ATOL = {atol!r}


def generate_inputs(params):
{body}
    return [{pairs}]


def compute_golden(tensors, params):
    for name in __outputs__:
        tensors[name][...] = torch.load(_DATA / "out" / f"{{name}}.pt", weights_only=True)
'''


def write_golden(tensor_specs: list[TensorSpec], golden_fn: Callable[..., Any], output_path: str | os.PathLike[str],
                 rtol: float = 1e-5, atol: float = 1e-5, scalar_specs: list[ScalarSpec] | None = None,
                 data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Write ``golden.py`` at ``output_path`` (data under ``data_dir``, default ``data/`` beside it); returns its path."""
    out = Path(output_path)
    data = Path(data_dir).resolve() if data_dir is not None else (out.parent / "data").resolve()
    if not all((data / f).is_file() for f in _needed(tensor_specs)):
        _materialize(tensor_specs, data, golden_fn)
    out.write_text(generate_golden_source(tensor_specs, rtol, atol, scalar_specs=scalar_specs,
                                          data_dir=str(data) if data_dir is not None else None))
    return out


__all__ = ["generate_golden_source", "write_golden"]
