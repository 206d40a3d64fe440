"""Upstream's harness entries of ``pypto.runtime.runner``: run a prepared artifact against its
``golden.py`` (:func:`execute_on_device_with_golden`, upstream's ``_execute_on_device``) and check
outputs a run persisted earlier (:func:`validate_persisted_outputs`).

The callable comes from :func:`pypto.runtime.device_runner.compile_and_assemble`; the inputs from
``golden.py``'s ``generate_inputs``; the expected outputs from its ``compute_golden`` (for a live
run) or from ``data/out/<name>.pt`` (for persisted outputs, saved by the run under
``data/actual/``), compared with the file's ``RTOL``/``ATOL`` or the tolerances given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pypto.flows.execute_artifact import _module


def execute_on_device_with_golden(work_dir: Path, golden_path: Path, chip_callable: Any, runtime_name: str,
                                  platform: str, device_id: int, dfx: Any = None, validate: bool = True,
                                  actual_out_dir: Path | None = None, enable_sdma: bool = False) -> None:
    """Inputs from ``golden_path``, one run of ``chip_callable``, outputs saved to ``actual_out_dir``
    (``<name>.pt`` per output) when given, then checked against ``compute_golden`` when ``validate``.

    ``work_dir`` is where diagnostics go (``dfx_outputs/``); ``enable_sdma`` selects an SDMA-capable
    worker on hardware and changes nothing on a simulator, whose copies need no DMA engine.
    """
    from pypto.flows.replay import _validate
    from pypto.runtime.device_runner import execute_on_device
    from pypto.runtime.runner import _DfxOpts

    dfx = dfx or _DfxOpts()
    golden = _module(Path(golden_path), "_device_run_golden")
    named = list(golden.generate_inputs({"name": "Default"}))
    execute_on_device(chip_callable, [v for _, v in named], platform, runtime_name, device_id,
                      enable_sdma=enable_sdma, output_prefix=str(Path(work_dir)),
                      enable_chip_swimlane=dfx.enable_chip_swimlane, enable_dump_args=dfx.enable_dump_args,
                      enable_pmu=dfx.enable_pmu, enable_dep_gen=dfx.enable_dep_gen,
                      enable_scope_stats=dfx.enable_scope_stats)
    if actual_out_dir is not None:
        _save(Path(actual_out_dir), {n: v for n, v in named if n in set(getattr(golden, "__outputs__", []))})
    if validate:
        _validate(golden, named)


def _save(folder: Path, tensors: dict[str, Any]) -> None:
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    for name, value in tensors.items():
        torch.save(torch.as_tensor(value), folder / f"{name}.pt")


def _load(folder: Path, names: list[str]) -> dict[str, Any] | None:
    import torch

    if not names or not all((folder / f"{n}.pt").is_file() for n in names):
        return None
    return {n: torch.load(folder / f"{n}.pt", weights_only=True) for n in names}


def validate_persisted_outputs(work_dir: Path, rtol: float, atol: float) -> None:
    """Compare ``data/actual/<name>.pt`` with ``data/out/<name>.pt`` for every output of ``golden.py``.

    Raises AssertionError naming the output on a mismatch, or saying which side is missing.
    """
    import torch

    root = Path(work_dir)
    outputs = list(getattr(_module(root / "golden.py", "_persisted_golden"), "__outputs__", []))
    actual, expected = _load(root / "data" / "actual", outputs), _load(root / "data" / "out", outputs)
    if actual is None or expected is None:
        raise AssertionError(f"validate_persisted_outputs: missing actual/expected outputs under {root / 'data'} "
                             f"(actual={'ok' if actual else 'missing'}, expected={'ok' if expected else 'missing'})")
    for name in outputs:
        try:
            torch.testing.assert_close(actual[name], expected[name], rtol=rtol, atol=atol)
        except AssertionError as exc:
            raise AssertionError(f"Output '{name}' does not match golden (rtol={rtol}, atol={atol}):\n{exc}") from None


_execute_on_device = execute_on_device_with_golden  # upstream's name (pypto.runtime.runner._execute_on_device)

__all__ = ["execute_on_device_with_golden", "validate_persisted_outputs"]
