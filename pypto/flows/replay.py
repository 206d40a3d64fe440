"""Re-running an artifact directory after hand edits: ``.pto`` -> kernel ``.cpp`` rebuild, replay, its CLI.

The implementations behind :mod:`pypto.runtime.debug` (``pto_rebuild``, ``replay``) and every
artifact's ``debug/run.py``. A ``ptoas/<unit>.pto`` newer than its ``ptoas/<unit>.cpp`` is assembled
again with the pinned ptoas and the new body is spliced between :data:`PTOAS_BODY_BEGIN` and
:data:`PTOAS_BODY_END` of every ``kernels/<core>/<func>.cpp`` it defines; the run that follows builds
whatever source changed (the build cache is keyed by content).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pypto.artifact.directory import PTOAS_BODY_BEGIN, PTOAS_BODY_END, kernel_source
from pypto.errors import ToolchainError

_FUNC = re.compile(r"\bvoid\s+(\w+)\s*\(")


def _splice(target: Path, body: str) -> None:
    text = target.read_text()
    begin, end = text.find(PTOAS_BODY_BEGIN), text.find(PTOAS_BODY_END)
    if begin < 0 or end < begin:
        raise ToolchainError(f"{target}: no '{PTOAS_BODY_BEGIN}' ... '{PTOAS_BODY_END}' section to replace",
                             hint="the kernel source was not written by pypto's assembler, or its markers were edited")
    target.write_text(text[: begin + len(PTOAS_BODY_BEGIN)] + "\n" + body + text[end:])


def rebuild_kernel_cpp_from_pto(work_dir: str | os.PathLike[str]) -> list[str]:
    """Re-assemble every ``ptoas/*.pto`` newer than its ``.cpp`` and splice it into the kernel sources.

    Returns the kernel sources rewritten (relative paths). ``PYPTO_REBUILD_FROM_PTO=0`` turns it off.
    A ptoas failure raises :class:`~pypto.errors.ToolchainError` with ptoas' message and a repro command.
    """
    root = Path(work_dir)
    from pypto.toolchain.settings import upstream_env

    if (upstream_env("PYPTO_REBUILD_FROM_PTO") or "").strip().lower() in ("0", "false", "no"):
        print("[pto->cpp] skipped (PYPTO_REBUILD_FROM_PTO=0)")
        return []
    stale = [p for p in sorted((root / "ptoas").glob("*.pto")) if ".bf16-as-f16" not in p.name
             and (not p.with_suffix(".cpp").is_file() or p.with_suffix(".cpp").stat().st_mtime < p.stat().st_mtime)]
    if not stale:
        print("[pto->cpp] no .pto edits since the last assembly")
        return []
    from pypto.backend.kernel_wrapper import preprocess_ptoas
    from pypto.backend.ptoas_stage import run_ptoas
    from pypto.toolchain.ptoas import require_ptoas
    from pypto.toolchain.settings import tool_timeout

    exe, rewritten, deadline = require_ptoas(), [], tool_timeout("ptoas_timeout_s")
    for pto in stale:
        result = run_ptoas(exe, root, pto.stem, timeout=deadline)
        if not result.ok:
            raise ToolchainError(f"ptoas failed on edited {pto.name}: {result.error}", stderr=result.log,
                                 repro=result.repro.replace("<artifact dir>", str(root.resolve())))
        cpp = pto.with_suffix(".cpp").read_text()
        body = preprocess_ptoas(cpp)
        for func in dict.fromkeys(_FUNC.findall(cpp)):
            for core in ("aiv", "aic"):
                target = root / kernel_source(core, func)
                if target.is_file():
                    _splice(target, body)
                    rewritten.append(kernel_source(core, func))
    print(f"[pto->cpp] re-assembled {len(stale)} .pto file(s); rewrote {len(rewritten)} kernel source(s)")
    return rewritten


def _golden_module(root: Path) -> Any:
    path = root / "golden.py"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; cannot validate without a golden.py (generate_inputs, "
                                "compute_golden, __outputs__)")
    spec = importlib.util.spec_from_file_location("_replay_golden", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _validate(module: Any, named: list[tuple[str, Any]]) -> None:
    import torch

    outs = set(getattr(module, "__outputs__", []))
    actual = {n: v for n, v in named if n in outs}
    expected = {n: v.clone() for n, v in actual.items()}
    module.compute_golden({**{n: v for n, v in named if n not in outs}, **expected}, {})
    rtol, atol = getattr(module, "RTOL", 1e-5), getattr(module, "ATOL", 1e-5)
    for name, value in actual.items():
        try:
            torch.testing.assert_close(value, expected[name], rtol=rtol, atol=atol)
        except AssertionError as exc:
            raise AssertionError(f"Output '{name}' does not match golden (rtol={rtol}, atol={atol}):\n{exc}") from exc


def replay(work_dir: str | os.PathLike[str], *tensors: Any, config: Any = None, recompile: bool = True,
           rebuild_from_pto: bool = True, validate: bool = False) -> None:
    """Run an existing artifact directory again with ``tensors`` (outputs written in place).

    ``rebuild_from_pto`` first re-assembles edited ``.pto`` files; ``recompile`` drops the artifact's
    built copies (:func:`pypto.runtime.debug.invalidate_binary_cache`); ``validate`` compares the
    outputs with the directory's ``golden.py`` (FileNotFoundError without one). A distributed artifact
    (``distributed_meta.json``) runs through :func:`pypto.runtime.execute_distributed_compiled`.
    """
    from pypto.artifact.directory import invalidate_binary_cache
    from pypto.runtime.config import RunConfig

    root, config = Path(work_dir), config or RunConfig()
    distributed = (root / "distributed_meta.json").is_file()
    if not distributed and not (root / "kernel_config.py").is_file():
        raise FileNotFoundError(f"replay(): {root} is not an artifact directory (no kernel_config.py and no "
                                "distributed_meta.json)")
    golden = _golden_module(root) if validate else None
    if golden is not None:
        names = [n for n, _ in golden.generate_inputs({"name": "Default"})]
        if len(names) != len(tensors):
            raise ValueError(f"replay(validate=True): expected {len(names)} tensors (golden.py), got {len(tensors)}")
    if rebuild_from_pto:
        rebuild_kernel_cpp_from_pto(root)
    if recompile:
        invalidate_binary_cache(root)
    if distributed:
        from pypto.jit.distributed.program import DistributedCompiledProgram

        DistributedCompiledProgram.from_dir(root)(*tensors, config=config)
    else:
        from pypto.runtime.worker import call_compiled

        call_compiled(root, tensors, config)
    if golden is not None:
        _validate(golden, list(zip(names, tensors, strict=True)))


def _parser(default_platform: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Run a compiled artifact directory again on a simulation platform.")
    p.add_argument("work_dir")
    p.add_argument("--platform", default=default_platform)
    p.add_argument("--device-id", type=int, default=0)
    p.add_argument("--pmu", type=int, default=0, help="PMU event type (0: off)")
    p.add_argument("--swimlane", action="store_true", help="chip swimlane at the full level (4)")
    p.add_argument("--swimlane-level", type=int, default=None, help="chip swimlane level 1-4")
    p.add_argument("--dump-args", nargs="?", type=int, const=1, default=0, help="argument dump (1 tagged, 2 full)")
    p.add_argument("--dep-gen", action="store_true")
    p.add_argument("--no-recompile", action="store_true")
    p.add_argument("--no-rebuild-from-pto", action="store_true")
    p.add_argument("--log-level", default=None, help="runtime log level: debug/info/timing/warn/error/null")
    p.add_argument("--log-sync-pypto", action="store_true")
    p.add_argument("--validate", dest="validate", action="store_true", default=None)
    p.add_argument("--no-validate", dest="validate", action="store_false")
    return p


def _main(argv: list[str] | None = None, *, inline_inputs: Callable[[], list[Any]] | None = None,
          user_compare: Callable[..., None] | None = None, default_platform: str = "a2a3sim") -> int:
    """The command line of ``debug/run.py``: inputs from ``golden.py`` if present, else ``inline_inputs``."""
    from pypto.runtime.config import RunConfig
    from pypto.runtime.log_config import configure_log

    a = _parser(default_platform).parse_args(argv)
    if a.log_level:
        configure_log(a.log_level, sync_pypto=a.log_sync_pypto)
    root = Path(a.work_dir)
    has_golden = (root / "golden.py").is_file()
    validate = has_golden if a.validate is None else a.validate
    if has_golden:
        inputs = [v for _, v in _golden_module(root).generate_inputs({"name": "Default"})]
    elif inline_inputs is not None:
        inputs = list(inline_inputs())
    else:
        raise SystemExit(f"{root}: no golden.py and no inline inputs to run with")
    swim = 4 if a.swimlane else (a.swimlane_level or 0)
    config = RunConfig(platform=a.platform, device_id=a.device_id, enable_pmu=a.pmu, enable_chip_swimlane=swim,
                       enable_dump_args=a.dump_args, enable_dep_gen=a.dep_gen)
    replay(root, *inputs, config=config, recompile=not a.no_recompile, rebuild_from_pto=not a.no_rebuild_from_pto,
           validate=validate)
    if not validate and user_compare is not None:
        user_compare(*inputs)
    print(f"[replay] {root.name}: ran on {a.platform}")
    return 0
