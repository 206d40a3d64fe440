"""PassContext: the compile knobs every pass and instrument sees, active as a context manager."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypedDict

from pypto.ir.options import (
    BackendType,
    DiagnosticCheck,
    DiagnosticCheckSet,
    DiagnosticPhase,
    MemoryPlanner,
    RuntimeKind,
    VerificationLevel,
)

_STATE = threading.local()

DEFAULT_DISABLED: frozenset[DiagnosticCheck] = frozenset({DiagnosticCheck.UnusedControlFlowResult})


class PassOptions(TypedDict, total=False):
    """:class:`PassContext`'s keywords but ``memory_planner``, for functions that pass them on."""

    instruments: Iterable[Any]
    verification_level: VerificationLevel
    diagnostic_phase: DiagnosticPhase
    disabled_diagnostics: Iterable[DiagnosticCheck] | DiagnosticCheckSet | None
    enable_pypto_l0c_double_buffer: bool
    runtime: RuntimeKind | str
    backend_type: BackendType


@dataclass(frozen=True, init=False)
class PassContext:
    """Settings for one pipeline run, never changed once made; ``with PassContext(...):`` makes it the
    current one.

    The parameters are upstream's, in upstream's order (``PassContext([], VerificationLevel.NONE)``),
    plus ``backend_type``. Instruments become a tuple, disabled diagnostics a frozenset (None: the
    default set) and a runtime name its :class:`RuntimeKind`.
    """

    instruments: tuple[Any, ...]  # passes.instruments.Instrument objects (not imported: it imports this)
    verification_level: VerificationLevel
    diagnostic_phase: DiagnosticPhase
    disabled_diagnostics: frozenset[DiagnosticCheck]
    memory_planner: MemoryPlanner
    enable_pypto_l0c_double_buffer: bool
    runtime: RuntimeKind
    backend_type: BackendType

    def __init__(
        self,
        instruments: Iterable[Any] = (),
        verification_level: VerificationLevel = VerificationLevel.BASIC,
        diagnostic_phase: DiagnosticPhase = DiagnosticPhase.PRE_PIPELINE,
        disabled_diagnostics: Iterable[DiagnosticCheck] | DiagnosticCheckSet | None = None,
        memory_planner: MemoryPlanner = MemoryPlanner.PYPTO,
        enable_pypto_l0c_double_buffer: bool = False,
        runtime: RuntimeKind | str = RuntimeKind.TENSORMAP_AND_RINGBUFFER,
        backend_type: BackendType = BackendType.Ascend910B,
    ) -> None:
        disabled = DEFAULT_DISABLED if disabled_diagnostics is None else frozenset(disabled_diagnostics)
        values = {"instruments": tuple(instruments), "verification_level": verification_level,
                  "diagnostic_phase": diagnostic_phase, "disabled_diagnostics": disabled,
                  "memory_planner": memory_planner,
                  "enable_pypto_l0c_double_buffer": bool(enable_pypto_l0c_double_buffer),
                  "runtime": RuntimeKind.from_name(runtime), "backend_type": backend_type}
        for name, value in values.items():
            object.__setattr__(self, name, value)  # the one place a frozen dataclass sets its fields

    @staticmethod
    def current() -> PassContext | None:
        """The innermost active context, or None."""
        stack = getattr(_STATE, "stack", None)
        return stack[-1] if stack else None

    def __enter__(self) -> PassContext:
        if not hasattr(_STATE, "stack"):
            _STATE.stack = []
        _STATE.stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        stack: list[PassContext] = _STATE.stack
        # by identity: two equal contexts may be nested, and the inner one leaves first
        index = max(i for i, ctx in enumerate(stack) if ctx is self)
        del stack[index]
