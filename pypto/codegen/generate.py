"""``generate``: post-pipeline IR -> :class:`Artifact` (PTO units, orchestration C++).

``compiled_meta.json`` is not codegen's: the driver records it once (``pypto.artifact.ArtifactMeta``).
"""

from __future__ import annotations

from pypto.artifact import Artifact, FuncId, KernelUnit, orchestration_source, skip_ptoas_files
from pypto.codegen.orchestration_cpp import FuncIds, OrchCodegen
from pypto.codegen.pto_module import emit_module
from pypto.errors import UserError
from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.ir.options import BackendType, RuntimeKind
from pypto.ir.types import TensorType


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


def generate(program: Program, *, backend_type: BackendType | str = BackendType.Ascend910B,
             platform: str | None = None, runtime: RuntimeKind | str = RuntimeKind.TENSORMAP_AND_RINGBUFFER,
             emit_source_loc: bool = True, skip_ptoas: bool = False) -> Artifact:
    """Generate every text artifact of ``program`` (a post-pipeline Program); ``platform`` is unused.

    ``files`` gets ``orchestration/<orch>.cpp``; with ``skip_ptoas`` also
    ``kernels/<aiv|aic>/<func>.pto`` (``kernels/<group>.pto`` for groups). The assembler stage
    (:func:`pypto.backend.assemble`) adds ``ptoas/``, kernel wrappers and ``kernel_config.py``.
    """
    backend = backend_type.value if isinstance(backend_type, BackendType) else str(backend_type)
    rt = RuntimeKind.from_name(runtime).value
    files: dict[str, str] = {}
    units = []
    for name, funcs in kernel_units(program):
        text, models = emit_module(funcs, backend_type=backend, emit_loc=emit_source_loc)
        units.append(KernelUnit(name, text, tuple(models)))
    orchs = program.orchestrations()
    ids = FuncIds()
    for f in orchs:
        files[orchestration_source(f.name)] = OrchCodegen(f, program, ids, backend).emit()
    _check_single_orchestration(orchs)
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
