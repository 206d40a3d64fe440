"""Run a hand-written ``.pto`` kernel on a simulation platform, without the DSL.

:func:`prepare_pto` assembles the file with the pinned ptoas and writes a one-task artifact
directory (kernel wrapper, orchestration, ``kernel_config.py``, ``compiled_meta.json``) into
``<sim cache>/pto/<func>-<hash>``, keyed by the file content and every option, so a second run
invokes neither ptoas nor g++. :func:`run_pto` runs it through the normal ChipWorker path.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pypto.artifact import (
    KERNEL_CONFIG,
    ArtifactMeta,
    FuncId,
    ParamInfo,
    commit,
    is_complete,
    kernel_source,
    orchestration_source,
    ptoas_file,
    render_kernel_config,
)
from pypto.errors import ToolchainError, UserError
from pypto.flows.pto_file import PtoArg, PtoSignature, cpp_param_types, parse_pto, single_function_text
from pypto.ir.dtypes import from_meta
from pypto.ir.options import backend_for_platform
from pypto.runtime import build, dtypes
from pypto.runtime.dispatch import DeviceTensor

FORMAT_VERSION = "1"
DIRECTIONS = {"in": "In", "out": "Out", "inout": "InOut"}
_ADD = {"In": "add_input", "Out": "add_output", "InOut": "add_inout"}


@dataclass(frozen=True, slots=True)
class PreparedPto:
    """A ``.pto`` kernel ready to run: its signature, tensor directions and artifact directory."""

    signature: PtoSignature
    directions: tuple[str, ...]
    artifact: Path
    platform: str

    @property
    def output_positions(self) -> tuple[int, ...]:
        """Positions (among the user arguments) of tensors the kernel writes."""
        dirs = iter(self.directions)
        return tuple(i for i, a in enumerate(self.signature.user_args) if a.kind == "tensor" and next(dirs) != "In")


def load_signature(path: str | os.PathLike[str], func: str | None = None, core: str | None = None) -> PtoSignature:
    """Parse the kernel signature of ``path`` (UserError if the file is missing or unreadable)."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"PTO file '{p}' does not exist", hint="pass the path of a .pto file (PTO dialect 0.1.1)")
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read PTO file '{p}': {exc}") from exc
    return parse_pto(text, p, func, core)


def normalize_directions(sig: PtoSignature, directions: Sequence[str] | Mapping[str, str] | None) -> tuple[str, ...]:
    """One of ``In``/``Out``/``InOut`` per tensor argument (default: all ``InOut``)."""
    names = [a.name for a in sig.tensors]
    if directions is None:
        return ("InOut",) * len(names)
    if isinstance(directions, Mapping):
        unknown = sorted(set(directions) - set(names))
        if unknown:
            raise UserError(f"directions name {', '.join(unknown)}, which are not tensor arguments of "
                            f"{sig.render()}", hint=f"tensor arguments: {', '.join(names)}")
        raw = [directions.get(n, "inout") for n in names]
    else:
        raw = list(directions)
        if len(raw) != len(names):
            raise UserError(f"{len(raw)} direction(s) given for {len(names)} tensor argument(s) of {sig.render()}",
                            hint="give one of in/out/inout per tensor argument, or a dict by name")
    out = []
    for name, d in zip(names, raw, strict=True):
        key = str(d).lower()
        if key not in DIRECTIONS:
            raise UserError(f"direction {d!r} of tensor '{name}' is not one of in, out, inout")
        out.append(DIRECTIONS[key])
    return tuple(out)


def prepare_pto(path: str | os.PathLike[str], *, platform: str = "a2a3sim", func: str | None = None,
                directions: Sequence[str] | Mapping[str, str] | None = None, core: str | None = None,
                insert_sync: bool = True, runtime: str = "tensormap_and_ringbuffer",
                ptoas: Path | None = None) -> PreparedPto:
    """Assemble ``path`` (cached) into a runnable artifact directory for ``platform``."""
    build.check_platform(platform)
    sig = load_signature(path, func, core)
    dirs = normalize_directions(sig, directions)
    text = single_function_text(Path(path).read_text(), sig.func)
    exe = ptoas or _require_ptoas()
    key = _digest(FORMAT_VERSION, text, sig.func, sig.core, ",".join(dirs), str(insert_sync), platform, runtime,
                  str(exe), build.header_hash())
    root = build.cache_root() / "pto" / f"{sig.func}-{key}"
    if not is_complete(root):
        _write_artifact(root, text, sig, dirs, exe, insert_sync=insert_sync, platform=platform, runtime=runtime)
    return PreparedPto(sig, dirs, root, platform)


def _require_ptoas() -> Path:
    from pypto.toolchain.ptoas import require_ptoas
    from pypto.toolchain.settings import Settings

    settings = Settings()
    return require_ptoas(settings.ptoas_root, Path(settings.cache_dir))


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() + b"\0")
    return h.hexdigest()[:20]


def _write_artifact(root: Path, text: str, sig: PtoSignature, dirs: tuple[str, ...], exe: Path, *,
                    insert_sync: bool, platform: str, runtime: str) -> None:
    """Stage everything in a temporary sibling, then rename it into place (the meta file marks completion)."""
    root.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
    try:
        cpp = _assemble(stage, text, sig, exe, insert_sync)
        _write_files(stage, cpp, sig, dirs, platform=platform, runtime=runtime)
        try:
            stage.rename(root)
        except OSError:  # another process finished first; its copy is identical
            shutil.rmtree(stage, ignore_errors=True)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def _assemble(stage: Path, text: str, sig: PtoSignature, exe: Path, insert_sync: bool) -> str:
    from pypto.backend import bf16_standin
    from pypto.backend.ptoas_stage import run_ptoas
    from pypto.toolchain.settings import tool_timeout

    (stage / "ptoas").mkdir()
    (stage / ptoas_file(sig.func, "pto")).write_text(text)
    res = run_ptoas(exe, stage, sig.func, timeout=tool_timeout("ptoas_timeout_s"), insert_sync=insert_sync)
    (stage / ptoas_file(sig.func, "log")).write_text(res.log)
    if res.ok:
        return (stage / ptoas_file(sig.func, "cpp")).read_text()
    kept = stage.parent / f"{sig.func}.failed"
    shutil.rmtree(kept, ignore_errors=True)
    shutil.copytree(stage / "ptoas", kept)
    fed = kept / f"{sig.func}.{bf16_standin.SUFFIX}"  # what ptoas was fed for a bf16 kernel
    argv = [str(exe), str(fed if fed.is_file() else kept / f"{sig.func}.pto"), "-o", str(kept / f"{sig.func}.cpp")]
    stderr = res.error.replace(f'"{ptoas_file(sig.func, "pto")}"', f'"{sig.path}"')
    raise ToolchainError(f"ptoas failed on {sig.path} (function @{sig.func})", stderr=stderr,
                         repro=shlex.join(argv + (["--enable-insert-sync"] if insert_sync else [])),
                         hint=f"full ptoas output: {kept / (sig.func + '.log')}")


def _kernel_params(sig: PtoSignature, cpp: str) -> list[Any]:
    from pypto.backend.kernel_wrapper import KernelParam

    ctypes_ = cpp_param_types(cpp, sig.func)
    if ctypes_ is None or len(ctypes_) != len(sig.args):
        ctypes_ = [a.ctype for a in sig.args]
    params = []
    for i, (a, ctype) in enumerate(zip(sig.args, ctypes_, strict=True)):
        name = f"p{i}_{''.join(c if c.isalnum() else '_' for c in a.name)}"
        if a.kind == "dyn_dim":
            assert a.dim_of is not None
            params.append(KernelParam(name, "dyn_dim", ctype, index=a.dim_of[0], axis=a.dim_of[1]))
        else:
            params.append(KernelParam(name, a.kind, ctype, label=a.name))
    return params


def _write_files(stage: Path, cpp: str, sig: PtoSignature, dirs: tuple[str, ...], *, platform: str,
                 runtime: str) -> None:
    from pypto.backend.kernel_wrapper import wrap_kernel

    try:
        source = wrap_kernel(cpp, sig.func, _kernel_params(sig, cpp))
    except ValueError as exc:
        raise UserError(f"{sig.path}: cannot wrap @{sig.func} as a kernel: {exc}") from exc
    kernel = stage / kernel_source(sig.core, sig.func)
    kernel.parent.mkdir(parents=True)
    kernel.write_text(source)
    orch = stage / orchestration_source(f"run_{sig.func}")
    orch.parent.mkdir()
    orch.write_text(orchestration_cpp(sig, dirs))
    (stage / KERNEL_CONFIG).write_text(render_kernel_config(
        f"run_{sig.func}", [FuncId(0, sig.func, sig.core, dirs)], runtime=runtime, orch_signature=dirs))
    commit(stage, _meta(sig, dirs, platform, runtime))


def _meta(sig: PtoSignature, dirs: tuple[str, ...], platform: str, runtime: str) -> ArtifactMeta:
    it = iter(dirs)
    params = tuple(ParamInfo(a.name, next(it) if a.kind == "tensor" else "In",
                             tuple(a.shape) if a.kind == "tensor" and a.shape is not None else None,
                             from_meta(a.dtype) if a.dtype else None)
                   for a in sig.user_args)
    return ArtifactMeta(params, 0, platform, backend_for_platform(platform).value, runtime, None,
                        extra={"source": str(sig.path.resolve()), "func": sig.func})


def orchestration_cpp(sig: PtoSignature, dirs: tuple[str, ...]) -> str:
    """An orchestration submitting the kernel once: tensors in order, then the scalars."""
    tensors = sig.tensors
    scalars = [a for a in sig.user_args if a.kind == "scalar"]
    lines = [f"// Orchestration Function: run_{sig.func} (one task running @{sig.func} of {sig.path.name})",
             "// Generated by pypto.runtime.run_pto", "", "#include <stddef.h>", "#include <stdint.h>", "",
             '#include "pto_orchestration_api.h"', "", 'extern "C" {', "",
             '__attribute__((visibility("default")))',
             "PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {",
             "    (void)orch_args;", "    return PTO2OrchestrationConfig{",
             f"        .expected_arg_count = {len(sig.user_args)},", "    };", "}", "",
             '__attribute__((visibility("default")))',
             "void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {"]
    lines += [f"    const ChipTensor& ext_{i} = orch_args.tensor({i}).ref();  // %{a.name}"
              for i, a in enumerate(tensors)]
    lines += ["    PTO2_SCOPE() {", "        CoreTaskArgs params_t0;"]
    lines += [f"        params_t0.{_ADD[d]}(ext_{i});" for i, d in enumerate(dirs)]
    lines += [f"        params_t0.add_scalar(orch_args.scalar({j}));  // %{a.name}" for j, a in enumerate(scalars)]
    lines += [f"        rt_submit_{sig.core}_task(0, params_t0);", "    }", "}", "", '}  // extern "C"', ""]
    return "\n".join(lines)


def _is_array(x: Any) -> bool:
    return isinstance(x, np.ndarray | DeviceTensor) or (type(x).__module__.startswith("torch")
                                                        and hasattr(x, "data_ptr"))


def check_args(sig: PtoSignature, args: Sequence[Any]) -> None:
    """UserError unless ``args`` fit the kernel's user arguments (count, kind, dtype, static shape)."""
    want = sig.user_args
    if len(args) != len(want):
        raise UserError(f"{sig.render()} takes {len(want)} argument(s) "
                        f"({', '.join('%' + a.name for a in want)}), got {len(args)}",
                        hint="dynamic dimensions (index arguments used as view extents) are taken from the "
                             "tensors' shapes and are not passed")
    for i, (a, x) in enumerate(zip(want, args, strict=True)):
        if a.kind == "tensor":
            _check_tensor(sig, i, a, x)
        elif _is_array(x):
            raise UserError(f"argument {i} of {sig.render()} is the scalar %{a.name}: {a.mlir_type}, "
                            f"got an array; pass a Python number")


def _check_tensor(sig: PtoSignature, i: int, a: PtoArg, x: Any) -> None:
    if not _is_array(x):
        raise UserError(f"argument {i} of {sig.render()} is the tensor %{a.name}: {a.mlir_type}, "
                        f"got {type(x).__name__}; pass a numpy array or a torch CPU tensor")
    dt = x.dtype if isinstance(x.dtype, dtypes.RtDType) else dtypes.coerce(x.dtype)
    if dt.meta != a.dtype:
        raise UserError(f"argument {i} (%{a.name}: {a.mlir_type}) needs element type {a.dtype}, got {dt.meta}")
    shape = tuple(x.shape)
    if a.shape is not None and (len(shape) != len(a.shape)
                                or any(s is not None and s != d for s, d in zip(a.shape, shape, strict=True))):
        want = "x".join("?" if s is None else str(s) for s in a.shape)
        raise UserError(f"argument {i} (%{a.name}) has shape {'x'.join(map(str, shape))}, but the kernel's "
                        f"tensor view of it is {want}")


def run_pto(path: str | os.PathLike[str], *arrays: Any, platform: str = "a2a3sim", func: str | None = None,
            directions: Sequence[str] | Mapping[str, str] | None = None, core: str | None = None,
            insert_sync: bool = True, runtime: str = "tensormap_and_ringbuffer", config: Any = None) -> Any:
    """Run the kernel of a ``.pto`` file once on ``platform`` with ``arrays`` (tensors and scalars, in order).

    Tensors are updated in place; returns the written ones (``out``/``inout``): one array or a tuple.
    ``index`` arguments that are extents of a tensor view are read from that tensor's shape.

    Raises:
        UserError: missing file, bad signature or arguments that do not fit it.
        ToolchainError: ptoas or g++ failed (with stderr and a repro command).
    """
    check_args(load_signature(path, func, core), arrays)
    prepared = prepare_pto(path, platform=platform, func=func, directions=directions, core=core,
                           insert_sync=insert_sync, runtime=runtime)
    return execute(prepared, arrays, config=config)


def execute(prepared: PreparedPto, arrays: Sequence[Any], *, config: Any = None) -> Any:
    """Run a prepared kernel on the active (or the implicit) ChipWorker of its platform."""
    from pypto.runtime.worker import ChipWorker, implicit_worker

    check_args(prepared.signature, arrays)
    runtime = ArtifactMeta.read(prepared.artifact).runtime
    worker = ChipWorker.current(platform=prepared.platform, runtime=runtime) \
        or implicit_worker(prepared.platform, runtime)
    worker.run(prepared.artifact, *arrays, config=config)
    outs = tuple(arrays[i] for i in prepared.output_positions)
    return outs[0] if len(outs) == 1 else outs
