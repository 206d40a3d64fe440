"""PassContext: frozen, upstream's positional order, normalised inputs, nesting by identity."""

from __future__ import annotations

import dataclasses

import pytest

from pypto.ir.options import (
    BackendType,
    DiagnosticCheck,
    DiagnosticCheckSet,
    DiagnosticPhase,
    MemoryPlanner,
    RuntimeKind,
    VerificationLevel,
)
from pypto.passes.context import DEFAULT_DISABLED, PassContext
from pypto.passes.instruments import Instrument


def test_defaults_are_upstreams() -> None:
    ctx = PassContext()
    assert ctx.instruments == () and ctx.disabled_diagnostics == DEFAULT_DISABLED
    assert (ctx.verification_level, ctx.diagnostic_phase, ctx.memory_planner, ctx.runtime, ctx.backend_type) == (
        VerificationLevel.BASIC, DiagnosticPhase.PRE_PIPELINE, MemoryPlanner.PYPTO,
        RuntimeKind.TENSORMAP_AND_RINGBUFFER, BackendType.Ascend910B)
    assert ctx.enable_pypto_l0c_double_buffer is False


def test_upstream_positional_order() -> None:
    inst = Instrument()
    ctx = PassContext([inst], VerificationLevel.NONE, DiagnosticPhase.NONE, DiagnosticCheckSet(),
                      MemoryPlanner.PTOAS, True, "host_build_graph")
    assert ctx.instruments == (inst,) and ctx.verification_level is VerificationLevel.NONE
    assert ctx.diagnostic_phase is DiagnosticPhase.NONE and ctx.disabled_diagnostics == frozenset()
    assert ctx.memory_planner is MemoryPlanner.PTOAS and ctx.enable_pypto_l0c_double_buffer is True
    assert ctx.runtime is RuntimeKind.HOST_BUILD_GRAPH


def test_inputs_are_copied_into_immutable_values() -> None:
    instruments, disabled = [Instrument()], {DiagnosticCheck.UnusedVariable}
    ctx = PassContext(instruments, disabled_diagnostics=disabled)
    instruments.append(Instrument())
    disabled.add(DiagnosticCheck.UnusedControlFlowResult)
    assert len(ctx.instruments) == 1 and ctx.disabled_diagnostics == frozenset({DiagnosticCheck.UnusedVariable})
    assert isinstance(ctx.instruments, tuple) and isinstance(ctx.disabled_diagnostics, frozenset)


def test_frozen() -> None:
    ctx = PassContext()
    name = "verification_level"
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(ctx, name, VerificationLevel.NONE)
    changed = dataclasses.replace(ctx, verification_level=VerificationLevel.NONE)
    assert changed.verification_level is VerificationLevel.NONE and ctx.verification_level is VerificationLevel.BASIC
    assert hash(PassContext()) == hash(ctx) and PassContext() == ctx


def test_unknown_runtime_is_rejected() -> None:
    with pytest.raises(ValueError, match="Unknown runtime 'nosuch'"):
        PassContext(runtime="nosuch")


def test_equal_contexts_nest_and_leave_by_identity() -> None:
    outer, inner = PassContext(), PassContext()
    assert outer == inner and outer is not inner
    with outer:
        with inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current() is None
