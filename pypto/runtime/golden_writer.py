"""Upstream's ``pypto.runtime.golden_writer``: ``golden.py`` for an artifact, and its data files.

:func:`write_golden` makes the tensors of ``tensor_specs`` once and saves them as
``data/in/<name>.pt`` (inputs, and the initial value of outputs that have one); ``golden_fn(tensors,
params)`` fills the outputs, saved as ``data/out/<name>.pt``. An existing data dir holding every file
is reused as it is. The written ``golden.py`` (:func:`generate_golden_source`) has
``generate_inputs(params)`` (the tensors in parameter order, then the scalars as ctypes values),
``compute_golden(tensors, params)`` (the golden function's own source, see
:mod:`pypto.runtime.golden_source`), ``__outputs__``, ``RTOL`` and ``ATOL``;
:func:`pypto.runtime.debug.replay`, ``python -m pypto.runtime.execute_artifact`` and
:func:`pypto.runtime.runner._execute_on_device` read it. Where a golden function has no source to
copy (a lambda, a REPL definition), :func:`write_golden` writes a ``compute_golden`` that loads the
outputs it saved under ``data/out`` instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pypto.runtime.golden_source import compute_golden_source, imports_for, init_expression
from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec

_CTYPES = {"int64": "c_int64", "int32": "c_int32", "uint64": "c_uint64", "uint32": "c_uint32", "float": "c_float",
           "double": "c_double"}
_FROM_DATA_OUT = '''def compute_golden(tensors, params):
    for name in __outputs__:
        tensors[name][...] = torch.load(_DATA_DIR / "out" / f"{name}.pt", weights_only=True)
'''


def _extract_compute_golden(golden_fn: Callable[..., Any]) -> str:
    """Upstream's name: ``golden_fn``'s source as ``def compute_golden(tensors, params)``."""
    return compute_golden_source(golden_fn)


def _data_dir_has_files(data_dir: Path, tensor_specs: list[TensorSpec]) -> bool:
    """Whether ``data_dir`` holds every ``in/`` and ``out/`` file these specs need."""
    data_dir = Path(data_dir)
    for spec in tensor_specs:
        needed = [f"in/{spec.name}.pt"] if not spec.is_output or spec.init_value is not None else []
        needed += [f"out/{spec.name}.pt"] if spec.is_output else []
        if not all((data_dir / rel).is_file() for rel in needed):
            return False
    return True


def _materialize_tensors(tensor_specs: list[TensorSpec]) -> dict[str, Any]:
    """Each spec's tensor, made once, by name."""
    return {spec.name: spec.create_tensor() for spec in tensor_specs}


def _save_data_files(data_files: dict[str, Any], data_dir: Path) -> None:
    """``data_dir/<name>.pt`` for each tensor (nothing, not even the dir, for none)."""
    import torch

    if not data_files:
        return
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    for name, tensor in data_files.items():
        torch.save(tensor, Path(data_dir) / f"{name}.pt")


def _header(imports: list[str], data_line: str | None, outputs: list[str], rtol: float, atol: float) -> list[str]:
    lines = ['"""Inputs and expected outputs of this artifact (written by pypto.runtime.golden_writer)."""', "",
             *imports]
    if data_line:
        lines += ["", data_line]
    return lines + ["", f"__outputs__ = {outputs!r}", f"RTOL = {rtol!r}", f"ATOL = {atol!r}"]


def generate_golden_source(tensor_specs: list[TensorSpec], golden_fn: Callable[..., Any] | None, rtol: float,
                           atol: float, *, compute_golden_src: str | None = None,
                           scalar_specs: list[ScalarSpec] | None = None, data_dir: Path | str | None = None,
                           use_data_files: bool = False) -> str:
    """The text of ``golden.py``.

    ``compute_golden_src`` (already ``def compute_golden``) wins over ``golden_fn``, whose source is
    extracted otherwise; one of them is required. With ``use_data_files`` (or a ``data_dir``) inputs
    load from ``<data>/in/<name>.pt``, the data dir being ``data_dir`` or ``data/`` beside golden.py;
    without, each input is written as an expression from its ``init_value``.
    """
    if compute_golden_src is None:
        if golden_fn is None:
            raise ValueError("Either golden_fn or compute_golden_src must be provided")
        compute_golden_src = compute_golden_source(golden_fn)
    scalars = scalar_specs or []
    files = use_data_files or data_dir is not None
    preambles: dict[str, str] = {}
    exprs = [init_expression(spec, preambles, files) for spec in tensor_specs]
    imports = [line for line in imports_for(compute_golden_src + "".join(preambles.values()))
               if line != "import torch"]
    imports += ["import ctypes"] * bool(scalars) + ["from pathlib import Path"] * files + ["import torch"]
    data_line = None
    if files:
        data_line = (f"_DATA_DIR = Path({str(Path(data_dir))!r})" if data_dir is not None
                     else '_DATA_DIR = Path(__file__).resolve().parent / "data"')
    lines = _header(imports, data_line, [s.name for s in tensor_specs if s.is_output], rtol, atol)
    for preamble in preambles.values():
        lines += ["", "", *preamble.splitlines()]
    lines += ["", "", "def generate_inputs(params):", '    """The arguments in order, as (name, value) pairs."""']
    lines += [f"    {spec.name} = {expr}" for spec, expr in zip(tensor_specs, exprs, strict=True)]
    lines += [f"    {s.name} = ctypes.{_CTYPES[s.ctype]}({s.value!r})" for s in scalars]
    lines += ["    return [", *[f"        ({n!r}, {n})," for n in [s.name for s in tensor_specs] + [s.name for s in scalars]],
              "    ]", "", "", *compute_golden_src.rstrip().splitlines(), ""]
    return "\n".join(lines)


def write_golden(tensor_specs: list[TensorSpec], golden_fn: Callable[..., Any], output_path: str | os.PathLike[str],
                 rtol: float = 1e-5, atol: float = 1e-5, scalar_specs: list[ScalarSpec] | None = None,
                 data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Write ``golden.py`` at ``output_path`` (data under ``data_dir``, default ``data/`` beside it); returns its path."""
    out = Path(output_path)
    data = Path(data_dir).resolve() if data_dir is not None else (out.parent / "data").resolve()
    if not _data_dir_has_files(data, tensor_specs):
        tensors = _materialize_tensors(tensor_specs)
        _save_data_files({s.name: tensors[s.name].clone() for s in tensor_specs
                          if not s.is_output or s.init_value is not None}, data / "in")
        golden_fn(tensors, None)
        _save_data_files({s.name: tensors[s.name] for s in tensor_specs if s.is_output}, data / "out")
    try:
        source = compute_golden_source(golden_fn)
    except RuntimeError:  # no source to copy (a lambda, a REPL): compute_golden loads the saved outputs
        source = _FROM_DATA_OUT
    out.write_text(generate_golden_source(tensor_specs, None, rtol, atol, compute_golden_src=source,
                                          scalar_specs=scalar_specs, data_dir=data if data_dir is not None else None,
                                          use_data_files=True))
    return out


__all__ = ["generate_golden_source", "write_golden"]
