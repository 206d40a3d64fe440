"""Run an already compiled artifact directory once, with a machine-readable verdict (``PYPTO_EXEC_RESULT``).

The implementation of ``python -m pypto.runtime.execute_artifact DIR``. Inputs come from the directory's
``golden.py`` (``generate_inputs``; then ``compute_golden`` checks the outputs) or, without one, from
its ``debug/run.py`` (``_inline_inputs``: random inputs, no check). Outputs are saved to
``data/actual/<name>.pt`` (``<name>.npy`` where torch is not installed). Verdict lines on stdout: ``PYPTO_EXEC_RESULT=PASS device=<N>`` (exit 0),
``=FAIL`` (the run or the check failed, exit 1) or ``=INFRA`` (the directory could not be built or
read: :class:`ArtifactSetupError`, exit 1).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import traceback
from pathlib import Path
from typing import Any

from pypto.artifact.directory import DEBUG_RUN_SCRIPT, load_artifact

RESULT_PREFIX = "PYPTO_EXEC_RESULT"


class ArtifactSetupError(Exception):
    """The artifact directory could not be read or built (not a failure of the program)."""


def _module(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _prepare(work_dir: Path, platform: str) -> Any:
    from pypto.runtime.device_runner import compile_and_assemble

    try:
        return compile_and_assemble(work_dir, platform)[0]
    except Exception as exc:  # noqa: BLE001 - any build/read failure is an infrastructure verdict
        raise ArtifactSetupError(f"cannot rebuild the artifact in {work_dir} for {platform}: {exc}") from exc


def _inputs(work_dir: Path) -> tuple[list[str], list[Any], Any]:
    golden = work_dir / "golden.py"
    if golden.is_file():
        mod = _module(golden, "_exec_golden")
        named = list(mod.generate_inputs({"name": "Default"}))
        return [n for n, _ in named], [v for _, v in named], mod
    script = work_dir / DEBUG_RUN_SCRIPT
    if not script.is_file():
        raise ArtifactSetupError(f"{work_dir}: neither golden.py nor {DEBUG_RUN_SCRIPT} to take inputs from")
    names = [p.name for p in load_artifact(work_dir).params]
    return names, list(_module(script, "_exec_run_script")._inline_inputs()), None


def _save_actual(work_dir: Path, names: list[str], values: list[Any]) -> None:
    """Each tensor argument after the run: ``<name>.pt`` (torch), or ``<name>.npy`` where torch is absent."""
    import numpy as np

    try:
        import torch
    except ModuleNotFoundError:  # torch is an extra; inputs from debug/run.py are numpy arrays then
        torch = None
    out = work_dir / "data" / "actual"
    out.mkdir(parents=True, exist_ok=True)
    for name, value in zip(names, values, strict=True):
        if torch is not None and isinstance(value, torch.Tensor | np.ndarray):
            torch.save(torch.as_tensor(value), out / f"{name}.pt")
        elif isinstance(value, np.ndarray):
            np.save(out / f"{name}.npy", value)


def _run(work_dir: Path, platform: str, device_id: int, callable_: Any, dfx: Any, validate: bool) -> None:
    from pypto.flows.replay import _validate
    from pypto.runtime.device_runner import execute_on_device

    try:
        names, values, golden = _inputs(work_dir)
    except ArtifactSetupError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise ArtifactSetupError(f"{work_dir}: cannot make the inputs: {exc}") from exc
    execute_on_device(callable_, values, platform, callable_.info.runtime, device_id,
                      enable_chip_swimlane=dfx.enable_chip_swimlane, enable_dump_args=dfx.enable_dump_args,
                      enable_pmu=dfx.enable_pmu, enable_dep_gen=dfx.enable_dep_gen,
                      enable_scope_stats=dfx.enable_scope_stats)
    _save_actual(work_dir, names, values)
    if validate and golden is not None:
        _validate(golden, list(zip(names, values, strict=True)))


def execute_artifact_dir(work_dir: str | Path, platform: str, device_id: int, *, dfx: Any = None,
                         validate: bool = True) -> None:
    """Build (cached) and run ``work_dir`` once; check against ``golden.py`` when ``validate`` and present.

    Raises :class:`ArtifactSetupError` when the directory cannot be built or read; a failing run or
    check raises its own error.
    """
    from pypto.runtime.runner import _DfxOpts

    root = Path(work_dir)
    _run(root, platform, device_id, _prepare(root, platform), dfx or _DfxOpts(), validate)


def execute_batch_manifest(manifest_path: str | Path, device_id: int, *, dfx: Any = None,
                           validate: bool = False) -> bool:
    """Run every ``{"work_dir", "platform"}`` entry of a JSON manifest, one verdict line each; True if all passed."""
    entries = json.loads(Path(manifest_path).read_text(encoding="utf-8"))
    ok = True
    for entry in entries:
        work_dir = Path(entry["work_dir"])
        try:
            execute_artifact_dir(work_dir, str(entry["platform"]), device_id, dfx=dfx, validate=validate)
            print(f"{RESULT_PREFIX}=PASS work_dir={work_dir} device={device_id}", flush=True)
        except ArtifactSetupError:
            print(traceback.format_exc(), flush=True)
            print(f"{RESULT_PREFIX}=INFRA work_dir={work_dir}", flush=True)
            ok = False
        except Exception:  # noqa: BLE001 - each entry gets its own verdict
            print(traceback.format_exc(), flush=True)
            print(f"{RESULT_PREFIX}=FAIL work_dir={work_dir}", flush=True)
            ok = False
    return ok


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pypto.runtime.execute_artifact",
                                description="Run a compiled artifact directory once and print PYPTO_EXEC_RESULT.")
    p.add_argument("dir", nargs="?", help="the artifact directory (or --work-dir)")
    p.add_argument("--work-dir", dest="work_dir")
    p.add_argument("--batch-manifest", help="JSON list of {work_dir, platform} to run in one process")
    p.add_argument("--platform", default=None, help="default: the platform the artifact was compiled for")
    p.add_argument("--device-id", type=int, default=0)
    p.add_argument("--no-validate", action="store_true", help="do not check against golden.py")
    p.add_argument("--enable-chip-swimlane", type=int, nargs="?", const=4, default=0)
    p.add_argument("--enable-dump-args", type=int, nargs="?", const=1, default=0)
    p.add_argument("--enable-pmu", type=int, default=0)
    p.add_argument("--enable-dep-gen", action="store_true")
    p.add_argument("--enable-scope-stats", action="store_true")
    return p


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (0 pass, 1 fail or infrastructure, 2 usage)."""
    from pypto.runtime.runner import _DfxOpts

    parser = _parser()
    a = parser.parse_args(argv)
    dfx = _DfxOpts(a.enable_chip_swimlane, a.enable_dump_args, a.enable_pmu, a.enable_dep_gen, a.enable_scope_stats)
    if a.batch_manifest:
        return 0 if execute_batch_manifest(a.batch_manifest, a.device_id, dfx=dfx, validate=not a.no_validate) else 1
    work_dir = a.work_dir or a.dir
    if not work_dir:
        parser.error("give the artifact directory (DIR or --work-dir)")
    try:
        platform = a.platform or _recorded_platform(Path(work_dir))
        execute_artifact_dir(work_dir, platform, a.device_id, dfx=dfx, validate=not a.no_validate)
    except ArtifactSetupError:
        traceback.print_exc()
        print(f"{RESULT_PREFIX}=INFRA", flush=True)
        return 1
    except Exception:  # noqa: BLE001 - the verdict line is the contract
        traceback.print_exc()
        print(f"{RESULT_PREFIX}=FAIL", flush=True)
        return 1
    print(f"{RESULT_PREFIX}=PASS device={a.device_id}", flush=True)
    return 0


def _recorded_platform(work_dir: Path) -> str:
    try:
        return load_artifact(work_dir).platform or "a2a3sim"
    except Exception as exc:  # noqa: BLE001
        raise ArtifactSetupError(f"cannot read the artifact in {work_dir}: {exc}") from exc
