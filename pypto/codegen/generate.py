"""``generate``: post-pipeline IR -> :class:`Artifact` (PTO units, orchestration C++).

``compiled_meta.json`` is not codegen's: the driver records it once (``pypto.artifact.ArtifactMeta``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re

from pypto.artifact import Artifact, FuncId, KernelUnit, kernel_source, orchestration_source, skip_ptoas_files
from pypto.codegen.emitter import base_name
from pypto.codegen.orchestration_cpp import FuncIds, OrchCodegen
from pypto.codegen.pto_module import emit_module
from pypto.errors import PartialCodegenError, UnsupportedFeatureError, UserError
from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.ir.options import BackendType, RuntimeKind
from pypto.ir.types import TensorType
from pypto.toolchain.prefix_map import PrefixMap


def kernel_units(program: Program) -> list[tuple[str, list[Function]]]:
    """Codegen units: each Group with its member kernels, then every ungrouped AIC/AIV/InCore function."""
    units: list[tuple[str, list[Function]]] = []
    grouped: set[str] = set()
    finder = OrchCodegen(program.functions[0], program, FuncIds()) if program.functions else None
    for f in program.functions:
        if f.func_type is FunctionType.Group and finder is not None:
            members = [m for m in finder.group_members(f) if m.is_incore]
            external = [m.name for m in members if external_source_of(m) is not None]
            if external:
                raise UnsupportedFeatureError(
                    f"group '{f.name}' calls the external kernel(s) {', '.join(external)}: an external kernel "
                    "runs only as a task of its own", f.span,
                    hint="call the external kernel from the orchestration (or a pl.spmd scope), not inside a "
                         "cube/vector group")
            grouped |= {m.name for m in members}
            units.append((f.name, members))
    for f in program.functions:
        if f.is_incore and f.name not in grouped and external_source_of(f) is None:
            units.append((f.name, [f]))
    return units


def external_source_of(f: Function) -> str | None:
    """The hand-written C++ file of an external kernel (``@pl.function(external_source=...)``), else None."""
    value = f.attrs.get("external_source") if f.attrs else None
    return value if isinstance(value, str) else None


def _external_kernel_files(program: Program, ids: FuncIds) -> dict[str, str]:
    """``kernels/<core>/<func>.cpp`` of each dispatched external kernel: its file, included at its own path
    (so the file's relative includes resolve) instead of PTO through ptoas."""
    out: dict[str, str] = {}
    for f in program.functions:
        path = external_source_of(f)
        if path is None or f.name not in ids.cores:
            continue
        out[kernel_source(ids.cores[f.name], f.name)] = (
            f"// Kernel Function: {f.name}\n// External kernel (@pl.function(external_source=...))\n"
            f"// sources digest: {sources_digest(path)}\n#include {json.dumps(path)}\n")
    return out


_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def sources_digest(path: str) -> str:
    """A digest of ``path`` and every file its quoted ``#include``s reach relative to the including file
    (runtime headers such as ``tensor.h`` are found elsewhere and skipped): the kernel's build key follows it,
    so an edit to the hand-written source rebuilds the kernel."""
    digest = hashlib.sha256()
    seen: set[str] = set()
    todo = [path]
    while todo:
        cur = todo.pop()
        if cur in seen or not os.path.isfile(cur):
            continue
        seen.add(cur)
        with open(cur, "rb") as fh:
            data = fh.read()
        digest.update(cur.encode() + b"\0" + data)
        base = os.path.dirname(cur)
        todo.extend(os.path.normpath(os.path.join(base, m)) for m in
                    _QUOTED_INCLUDE.findall(data.decode("utf-8", "replace")))
    return digest.hexdigest()[:24]


def _tensor_dirs(f: Function) -> tuple[str, ...]:
    return tuple(d.value for p, d in zip(f.params, f.param_directions, strict=True) if isinstance(p.type, TensorType))


def _check_outputs_written(f: Function) -> None:
    """An orchestration's ``pl.Out`` parameter must be written (by a kernel call) or returned.

    A function that rebinds its output name to a new value and returns that leaves the caller's
    output tensor untouched (upstream rejects this program in code generation too).
    """
    from pypto.ir.enums import ParamDirection
    from pypto.ir.stmt import ReturnStmt
    from pypto.passes._util import calls_in, iter_stmts, used_vars

    inits = [e for s in iter_stmts(f.body) for e in getattr(s, "inits", ())]
    args = {a for c in calls_in(f.body) for a in c.args} | set(used_vars(inits))
    rets = [s for s in iter_stmts(f.body) if isinstance(s, ReturnStmt)]
    returned = set(used_vars(rets))
    for p, d in zip(f.params, f.param_directions, strict=True):
        if d is ParamDirection.Out and isinstance(p.type, TensorType) and p not in args and p not in returned \
                and returned:
            name = base_name(p.name)
            raise UserError(f"'{f.name}' never writes its output '{name}': the value it returns is a new "
                            f"tensor, so the caller's '{name}' is left unchanged", rets[0].span,
                            hint=f"write into the output instead of rebinding it: {name}[:] = <value>, or "
                                 f"{name} = pl.assemble({name}, <value>, [0, ...])")


def generate(program: Program, *, backend_type: BackendType | str = BackendType.Ascend910B,
             platform: str | None = None, runtime: RuntimeKind | str = RuntimeKind.TENSORMAP_AND_RINGBUFFER,
             emit_source_loc: bool = True, skip_ptoas: bool = False, file_prefix_map: PrefixMap = (),
             ptoas_plans_memory: bool = False) -> Artifact:
    """Generate every text artifact of ``program`` (a post-pipeline Program); ``platform`` is unused.

    ``files`` gets ``orchestration/<orch>.cpp``; with ``skip_ptoas`` also
    ``kernels/<aiv|aic>/<func>.pto`` (``kernels/<group>.pto`` for groups). The assembler stage
    (:func:`pypto.backend.assemble`) adds ``ptoas/``, kernel wrappers and ``kernel_config.py``.
    ``file_prefix_map`` rewrites the source paths of ``loc(...)`` (see :mod:`pypto.toolchain.prefix_map`).
    ``ptoas_plans_memory`` (the PTOAS planner): tile buffers are allocated where first used (see
    :func:`pypto.codegen.pto_module.emit_module`).
    """
    backend = backend_type.value if isinstance(backend_type, BackendType) else str(backend_type)
    rt = RuntimeKind.from_name(runtime).value
    files: dict[str, str] = {}
    units = []
    for name, funcs in kernel_units(program):
        text, models = emit_module(funcs, backend_type=backend, emit_loc=emit_source_loc, file_map=file_prefix_map,
                                   allocs_at_first_use=ptoas_plans_memory)
        units.append(KernelUnit(name, text, tuple(models)))
    orchs = program.orchestrations()
    ids = FuncIds()
    try:
        for f in orchs:
            _check_outputs_written(f)
            files[orchestration_source(f.name)] = OrchCodegen(f, program, ids, backend).emit()
    except UserError as exc:
        if not units:
            raise
        done = skip_ptoas_files(units)
        raise PartialCodegenError(f"code generation failed after {len(units)} kernel unit(s) were generated "
                                  f"({', '.join(u.name for u in units)}):\n{exc}", files=done,
                                  user_error=exc) from None
    _check_single_orchestration(orchs)
    files.update(_external_kernel_files(program, ids))
    func_ids = [FuncId(i, n, ids.cores[n], _tensor_dirs(program[n])) for n, i in ids.ids.items()]
    if skip_ptoas:
        files.update(skip_ptoas_files(units))
    return Artifact(files=files, units=units, orchestration_names=sorted(f.name for f in orchs),
                    func_ids=func_ids,
                    orch_signatures={f.name: _tensor_dirs(f) for f in orchs}, runtime=rt, backend_type=backend)


def _check_single_orchestration(orchs: list[Function]) -> None:
    if len(orchs) > 1:
        raise UserError(f"program has {len(orchs)} orchestration functions "
                        f"({', '.join(f.name for f in orchs)}); multi-orchestration artifacts are not "
                        "supported yet", orchs[0].span, hint="compile each orchestration as its own program")
