"""Upstream's ``pypto.pypto_core.passes``: pass options, properties, instruments and pass factories.

The options (``MemoryPlanner``, ``VerificationLevel``, ...), ``PassContext``, ``IRProperty`` and
``CallbackInstrument`` are pypto's own. Each snake-case pass factory (``passes.convert_to_ssa()``) builds
pypto's pass of that name under the current ``PassContext``. Upstream internals with no counterpart
(and passes pypto does not have) are stand-ins that raise UnsupportedFeatureError when used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pypto.diagnostics import Diagnostic
from pypto.errors import VerificationError
from pypto.ir.function import Program
from pypto.ir.options import (
    DiagnosticCheck,
    DiagnosticCheckSet,
    DiagnosticPhase,
    MemoryPlanner,
    RuntimeKind,
    VerificationLevel,
    VerificationMode,
)
from pypto.ir.properties import STRUCTURAL, IRProperty
from pypto.passes import REGISTRY, get_pass
from pypto.passes.base import Pass
from pypto.passes.context import PassContext
from pypto.passes.instruments import CallbackInstrument, Instrument, PassStep
from pypto.pypto_core import l0_tile_chooser
from pypto.pypto_core._standin import stand_ins

PassInstrument = Instrument


class IRPropertySet:
    """A mutable set of :class:`IRProperty` values."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, props: Iterable[IRProperty] = ()) -> None:
        self._props = set(props)

    def insert(self, prop: IRProperty) -> None:
        self._props.add(prop)

    def remove(self, prop: IRProperty) -> None:
        self._props.discard(prop)

    def contains(self, prop: IRProperty) -> bool:
        return prop in self._props

    def empty(self) -> bool:
        return not self._props

    def to_list(self) -> list[IRProperty]:
        return [p for p in IRProperty if p in self._props]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IRPropertySet) and self._props == other._props

    def __iter__(self) -> Any:
        return iter(self.to_list())


def get_structural_properties() -> IRPropertySet:
    """The properties every program satisfies at every point of the pipeline."""
    return IRPropertySet(STRUCTURAL)


def verify_properties(properties: IRPropertySet | Iterable[IRProperty], program: Program, pass_name: str = "") -> None:
    """Raise VerificationError listing every violation of ``properties`` in ``program``."""
    from pypto.ir.verifier import verify_or_raise

    verify_or_raise(program, list(properties), where=f"after pass {pass_name}" if pass_name else "")


def runtime_kind_to_name(kind: RuntimeKind) -> str:
    return RuntimeKind(kind).value


def runtime_kind_from_name(name: str) -> RuntimeKind:
    return RuntimeKind.from_name(name)


def get_default_verification_level() -> VerificationLevel:
    return PassContext().verification_level


def get_default_diagnostic_phase() -> DiagnosticPhase:
    return PassContext().diagnostic_phase


class VerificationInstrument(Instrument):
    """Verifies the structural properties and each pass's declared products before and/or after it."""

    name = "VerificationInstrument"

    def __init__(self, mode: VerificationMode = VerificationMode.AFTER) -> None:
        self.mode = VerificationMode(mode)

    def after_pass(self, step: PassStep) -> None:
        p = step.pass_
        if self.mode in (VerificationMode.BEFORE, VerificationMode.BEFORE_AND_AFTER):
            verify_properties(STRUCTURAL | (p.requires & STRUCTURAL), step.before, f"{p.name} (input)")
        if self.mode in (VerificationMode.AFTER, VerificationMode.BEFORE_AND_AFTER):
            from pypto.ir.properties import VERIFIED

            verify_properties(STRUCTURAL | (p.produces & VERIFIED), step.after, p.name)


class PassPipeline:
    """An ordered list of passes run one after another (``add_pass``, ``run``)."""

    def __init__(self) -> None:
        self._passes: list[Pass] = []

    def add_pass(self, p: Pass) -> None:
        self._passes.append(p)

    def get_pass_names(self) -> list[str]:
        return [p.name for p in self._passes]

    def run(self, program: Program) -> Program:
        for p in self._passes:
            program = p.run(program)
        return program


def _factory(key: str) -> Callable[[], Pass]:
    def make() -> Pass:
        return get_pass(key).from_context(PassContext.current() or PassContext())

    make.__name__ = key
    make.__doc__ = f"pypto's {key} pass under the current PassContext."
    return make


_PASS_FACTORIES = (
    "init_mem_ref materialize_semantic_aliases memory_reuse allocate_memory_addr fuse_create_assemble_to_slice "
    "fold_no_op_reshape normalize_return_order unroll_loops skew_cross_core_pipeline lower_pipeline_to_slots "
    "lower_pipeline_loops canonicalize_io_order ctrl_flow_transform convert_to_ssa outline_incore_scopes "
    "outline_cluster_scopes outline_hierarchy_scopes convert_tensor_to_tile_ops optimize_orch_tensors "
    "flatten_tile_nd_to_2d legalize_tile_cast auto_tile_matmul_l0 canonicalize_tile_slice infer_tile_memory_space "
    "insert_mx_scale_addr materialize_tensor_strides resolve_backend_op_layouts expand_mixed_kernel "
    "lower_auto_vector_split inject_gm_pipe_buffer split_vector_kernel simplify lower_composite_ops "
    "derive_call_directions auto_derive_task_dependencies expand_manual_phase_fence flatten_call_expr "
    "inline_functions normalize_stmt_structure synthesize_allreduce_signals materialize_comm_domain_scopes "
    "lower_host_tensor_collectives materialize_dist_tensor_ctx materialize_valid_shape_symbols stamp_tfree_split "
    "materialize_runtime_scopes classify_iter_arg_carry insert_comm_fence").split()
_KEYS = {k.lower(): k for k in REGISTRY}
_FACTORIES = {n: _factory(_KEYS[n.replace("_", "")]) for n in _PASS_FACTORIES if n.replace("_", "") in _KEYS}
globals().update(_FACTORIES)

_STAND_INS = {
    **stand_ins(__name__, " ".join(n for n in _PASS_FACTORIES if n not in _FACTORIES),
                "pypto's pipeline has no pass of this name"),
    **stand_ins(__name__, "DiagnosticCheckRegistry DiagnosticInstrument ReportInstrument SSAErrorType "
                "TypeCheckErrorType NestedCallErrorType UseAfterDefErrorType DiagnosticSeverity "
                "PropertyVerifierRegistry run_verifier stmt_dependency_analysis PassProperties create_function_pass "
                "create_program_pass get_verified_properties get_default_verify_properties "
                "verify_tensor_view_canonical TypeCheckError",
                "an internal of upstream's C++ pass library with no counterpart in pypto"),
}


def __getattr__(name: str) -> Any:
    if name in _STAND_INS:
        return _STAND_INS[name]
    raise AttributeError(f"module 'pypto.pypto_core.passes' has no attribute '{name}'")


_ = (l0_tile_chooser, Diagnostic, VerificationError, DiagnosticCheck, DiagnosticCheckSet, MemoryPlanner, CallbackInstrument)
