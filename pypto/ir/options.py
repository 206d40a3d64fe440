"""Compile-option enums shared by the API, the pass manager, codegen and the runtime."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import Enum, IntEnum

from pypto.toolchain import platforms as _platforms


class BackendType(Enum):
    """Pass and codegen target."""

    __hash__ = object.__hash__  # members are singletons compared by identity: hash them in C

    Ascend910B = "Ascend910B"
    Ascend950 = "Ascend950"


class OptimizationStrategy(Enum):
    """Pass pipeline recipe; ``Default`` is the only one."""

    Default = "Default"


class PassDumpLevel(IntEnum):
    """IR snapshots after each pass: none, concise, or with explicit tile layouts."""

    NONE = 0
    CONCISE = 1
    EXPLICIT = 2

    @staticmethod
    def coerce(value: bool | PassDumpLevel | int | str) -> PassDumpLevel:
        """Accept bool (True -> CONCISE), an int, a name, or the enum itself."""
        if isinstance(value, PassDumpLevel):
            return value
        if isinstance(value, bool):
            return PassDumpLevel.CONCISE if value else PassDumpLevel.NONE
        if isinstance(value, str):
            try:
                return PassDumpLevel[value.upper()]
            except KeyError:
                raise ValueError(f"Invalid dump level '{value}': expected none, concise or explicit") from None
        return PassDumpLevel(value)


class VerificationLevel(Enum):
    """IR checks between passes: none, the basic verifier, or that plus a print/parse round trip."""

    NONE = "none"
    BASIC = "basic"
    ROUNDTRIP = "roundtrip"


class MemoryPlanner(Enum):
    """Who plans on-chip buffers: our passes, DSA with reuse penalties, or the assembler.

    With ptoas 0.1.1 the assembler places every tile: ``pto.alloc_tile`` takes no address, and its
    PlanMemory assigns the bytes, sharing them between tiles whose lifetimes (from the ``alloc_tile`` on)
    do not meet when space runs short (measured: five 64 KiB UB tiles used one after another all get
    address 0; four 16 KiB ones get four addresses). PYPTO and DSA_RP decide which tiles share one
    ``alloc_tile``, all hoisted to the kernel's head; PTOAS (upstream: ptoas ``level2`` plans) emits one
    ``alloc_tile`` per buffer where it is first used, MaterializeSemanticAliases still keeping a
    loop-carried accumulator in one. A ``pl.MemRef(slots=N)`` buffer, upstream one ptoas multi-buffer
    region under PTOAS, gets a tile per definition under every planner (see ``pypto.passes._slots``).
    """

    __hash__ = object.__hash__  # members are singletons compared by identity: hash them in C

    PYPTO = "PYPTO"
    DSA_RP = "DSA_RP"
    PTOAS = "PTOAS"


class DiagnosticPhase(Enum):

    __hash__ = object.__hash__  # members are singletons compared by identity: hash them in C

    NONE = "none"
    PRE_PIPELINE = "pre_pipeline"
    POST_PASS = "post_pass"
    POST_PIPELINE = "post_pipeline"


class DiagnosticCheck(Enum):

    __hash__ = object.__hash__  # members are singletons compared by identity: hash them in C

    UnusedVariable = "UnusedVariable"
    UnusedControlFlowResult = "UnusedControlFlowResult"
    OutParamWriteDropped = "OutParamWriteDropped"
    TileInnermostDimGranularity = "TileInnermostDimGranularity"


class RuntimeKind(Enum):
    """Runtime ABI the artifact targets; the value is its wire name."""

    TENSORMAP_AND_RINGBUFFER = "tensormap_and_ringbuffer"
    HOST_BUILD_GRAPH = "host_build_graph"

    @staticmethod
    def from_name(name: str | RuntimeKind) -> RuntimeKind:
        if isinstance(name, RuntimeKind):
            return name
        for kind in RuntimeKind:
            if kind.value == name or kind.name == name:
                return kind
        raise ValueError(f"Unknown runtime '{name}': expected one of tensormap_and_ringbuffer, host_build_graph")


PLATFORMS = tuple(_platforms.PLATFORMS)  # the platform facts live in pypto.toolchain.platforms


def backend_for_platform(platform: str) -> BackendType:
    """a2a3* -> Ascend910B, a5* -> Ascend950; the upstream error for anything else."""
    info = _platforms.PLATFORMS.get(platform)
    if info is None:
        raise ValueError(_platforms.invalid_platform_text(platform))
    return BackendType(info.backend)


def default_sim_platform(backend: BackendType) -> str:
    return _platforms.BACKEND_DEFAULT_SIM[BackendType(backend).value]


class VerificationMode(Enum):
    """When a VerificationInstrument checks IR properties around each pass."""

    NONE = "none"
    BEFORE = "before"
    AFTER = "after"
    BEFORE_AND_AFTER = "before_and_after"


class DiagnosticCheckSet:
    """A mutable set of :class:`DiagnosticCheck` values (unhashable, like upstream's bitset)."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, checks: Iterable[DiagnosticCheck] = ()) -> None:
        self._checks = set(checks)

    def insert(self, check: DiagnosticCheck) -> None:
        self._checks.add(check)

    def remove(self, check: DiagnosticCheck) -> None:
        self._checks.discard(check)

    def contains(self, check: DiagnosticCheck) -> bool:
        return check in self._checks

    def empty(self) -> bool:
        return not self._checks

    def difference(self, other: DiagnosticCheckSet) -> DiagnosticCheckSet:
        return DiagnosticCheckSet(self._checks - other._checks)

    def union_with(self, other: DiagnosticCheckSet) -> DiagnosticCheckSet:
        return DiagnosticCheckSet(self._checks | other._checks)

    def to_list(self) -> list[DiagnosticCheck]:
        """The checks in declaration order."""
        return [c for c in DiagnosticCheck if c in self._checks]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DiagnosticCheckSet) and self._checks == other._checks

    def __iter__(self) -> Iterator[DiagnosticCheck]:
        return iter(self.to_list())

    def __str__(self) -> str:
        return "{" + ", ".join(c.name for c in self.to_list()) + "}"

    def __repr__(self) -> str:
        return f"DiagnosticCheckSet({self})"
