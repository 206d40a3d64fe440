"""PassContext: the compile knobs every pass and instrument sees, active as a context manager."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.options import (
    BackendType,
    DiagnosticCheck,
    DiagnosticPhase,
    MemoryPlanner,
    RuntimeKind,
    VerificationLevel,
)

_STATE = threading.local()

DEFAULT_DISABLED: frozenset[DiagnosticCheck] = frozenset({DiagnosticCheck.UnusedControlFlowResult})


@dataclass
class PassContext:
    """Settings for one pipeline run; ``with PassContext(...):`` makes it the current one."""

    verification_level: VerificationLevel = VerificationLevel.BASIC
    diagnostic_phase: DiagnosticPhase = DiagnosticPhase.PRE_PIPELINE
    disabled_diagnostics: set[DiagnosticCheck] | frozenset[DiagnosticCheck] | None = None
    memory_planner: MemoryPlanner = MemoryPlanner.PYPTO
    runtime: RuntimeKind = RuntimeKind.TENSORMAP_AND_RINGBUFFER
    backend_type: BackendType = BackendType.Ascend910B
    enable_l0c_double_buffer: bool = False
    instruments: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.disabled_diagnostics is None:
            self.disabled_diagnostics = set(DEFAULT_DISABLED)
        self.disabled_diagnostics = frozenset(self.disabled_diagnostics)
        if isinstance(self.runtime, str):
            self.runtime = RuntimeKind.from_name(self.runtime)

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
        _STATE.stack.remove(self)
