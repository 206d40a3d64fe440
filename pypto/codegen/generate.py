"""``generate``: post-pipeline IR -> :class:`Artifact` (PTO units, orchestration C++, metadata)."""

from __future__ import annotations

import json
from typing import Any

from pypto.codegen.artifact import Artifact, FuncId, KernelUnit
from pypto.codegen.emitter import base_name
from pypto.codegen.orchestration_cpp import FuncIds, OrchCodegen
from pypto.codegen.pto_mlir import emit_module
from pypto.errors import UserError
from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.ir.options import BackendType, RuntimeKind
from pypto.ir.types import ScalarType, TensorType
from pypto.toolchain.prefix_map import PrefixMap


def kernel_units(program: Program) -> list[tuple[str, list[Function]]]:
    """Codegen units: each Group with its member kernels, then every ungrouped AIC/AIV/InCore function."""
    units: list[tuple[str, list[Function]]] = []
    grouped: set[str] = set()
    finder = OrchCodegen(program.functions[0], program, FuncIds()) if program.functions else None
    for f in program.functions:
        if f.func_type is FunctionType.Group and finder is not None:
            members = [m for m in finder.group_members(f) if m.is_incore]
            grouped |= {m.name for m in members}
            units.append((f.name, members))
    for f in program.functions:
        if f.is_incore and f.name not in grouped:
            units.append((f.name, [f]))
    return units


def _tensor_dirs(f: Function) -> tuple[str, ...]:
    return tuple(d.value for p, d in zip(f.params, f.param_directions, strict=True) if isinstance(p.type, TensorType))


def param_meta(f: Function) -> list[dict[str, Any]]:
    """``compiled_meta.json`` ``params`` entries of an orchestration function."""
    out = []
    for p, d in zip(f.params, f.param_directions, strict=True):
        t = p.type
        shape = [x if isinstance(x, int) else None for x in t.shape] if isinstance(t, TensorType) else None
        dtype = t.dtype.meta if isinstance(t, TensorType | ScalarType) else None
        out.append({"name": base_name(p.name), "direction": d.value, "shape": shape, "dtype": dtype})
    return out


def generate(program: Program, *, backend_type: BackendType | str = BackendType.Ascend910B,
             platform: str | None = None, runtime: RuntimeKind | str = RuntimeKind.TENSORMAP_AND_RINGBUFFER,
             emit_source_loc: bool = True, toolchain_meta: dict[str, Any] | None = None,
             skip_ptoas: bool = False, file_prefix_map: PrefixMap = ()) -> Artifact:
    """Generate every text artifact of ``program`` (a post-pipeline Program).

    ``files`` gets ``orchestration/<orch>.cpp`` and ``compiled_meta.json``; with ``skip_ptoas`` also
    ``kernels/<aiv|aic>/<func>.pto`` (``kernels/<group>.pto`` for groups). The assembler stage
    (:func:`pypto.backend.assemble`) adds ``ptoas/``, kernel wrappers and ``kernel_config.py``.
    ``file_prefix_map`` rewrites the source paths of ``loc(...)`` (see :mod:`pypto.toolchain.prefix_map`).
    """
    backend = backend_type.value if isinstance(backend_type, BackendType) else str(backend_type)
    rt = RuntimeKind.from_name(runtime).value
    files: dict[str, str] = {}
    units = []
    for name, funcs in kernel_units(program):
        text, models = emit_module(funcs, backend_type=backend, emit_loc=emit_source_loc, file_map=file_prefix_map)
        units.append(KernelUnit(name, text, tuple(models)))
    orchs = program.orchestrations()
    ids = FuncIds()
    for f in orchs:
        files[f"orchestration/{f.name}.cpp"] = OrchCodegen(f, program, ids).emit()
    func_ids = [FuncId(i, n, ids.cores[n], _tensor_dirs(program[n])) for n, i in ids.ids.items()]
    meta = _meta(orchs, backend, platform, rt, toolchain_meta)
    if meta is not None:
        files["compiled_meta.json"] = json.dumps(meta, indent=2)
    if skip_ptoas:
        files.update(skip_ptoas_files(units))
    return Artifact(files=files, units=units, orchestration_names=sorted(f.name for f in orchs),
                    meta=meta or {}, func_ids=func_ids,
                    orch_signatures={f.name: _tensor_dirs(f) for f in orchs}, runtime=rt, backend_type=backend)


def skip_ptoas_files(units: list[KernelUnit]) -> dict[str, str]:
    """Raw MLIR per unit: ``kernels/<core>/<func>.pto`` (one-function units) or ``kernels/<group>.pto``."""
    out = {}
    for u in units:
        path = f"kernels/{u.core}/{u.name}.pto" if len(u.funcs) == 1 else f"kernels/{u.name}.pto"
        out[path] = u.pto
    return out


def _meta(orchs: list[Function], backend: str, platform: str | None, runtime: str,
          toolchain: dict[str, Any] | None) -> dict[str, Any] | None:
    if not orchs:
        return None
    main = orchs[0]
    if len(orchs) > 1:
        raise UserError(f"program has {len(orchs)} orchestration functions "
                        f"({', '.join(f.name for f in orchs)}); multi-orchestration artifacts are not "
                        "supported yet", main.span, hint="compile each orchestration as its own program")
    from pypto.ir.options import default_sim_platform

    meta: dict[str, Any] = {
        "schema": 1,
        "params": param_meta(main),
        "num_return_types": len(main.return_types),
        "platform": platform or default_sim_platform(BackendType(backend)),
        "backend_type": backend,
        "runtime": runtime,
    }
    if toolchain:
        meta["toolchain"] = toolchain
    return meta


