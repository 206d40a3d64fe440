"""Upstream's backend model: a :class:`SoC` of dies of clusters of cores with their on-chip memories.

``Backend910B`` (Ascend910B: one die of 24 AIC and 48 AIV single-core clusters; AIC memories Mat 512 KiB,
Left/Right 64 KiB, Acc 128 KiB, Bias 1 KiB; AIV Vec 184 KiB usable) and ``Backend950`` (Ascend950: two
dies of 18 clusters of 1 AIC + 2 AIV; Acc 256 KiB, Bias 4 KiB, LeftScale/RightScale 4 KiB, Vec
240 KiB) carry upstream's numbers, with the memory graph data moves follow (:meth:`Backend.find_mem_path`).
:func:`set_backend_type` configures the process-wide backend once (setting another one is a
ValueError until :func:`reset_for_testing`). Our compiler takes ``backend_type`` per compile and
does not read or set this configuration.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.ir.enums import CoreType, MemorySpace
from pypto.ir.options import BackendType

KIB = 1024


@dataclass(frozen=True, order=False)
class Mem:
    """One on-chip memory of a core: its space, size in bytes and alignment in bytes."""

    mem_type: MemorySpace
    mem_size: int
    alignment: int


@dataclass(frozen=True)
class Core:
    """A core of ``core_type`` (``CUBE`` = AIC, ``VECTOR`` = AIV) with its memories."""

    core_type: CoreType
    mems: tuple[Mem, ...]

    def __init__(self, core_type: CoreType, mems: list[Mem] | tuple[Mem, ...]) -> None:
        object.__setattr__(self, "core_type", core_type)
        object.__setattr__(self, "mems", tuple(mems))


def _pairs(counts: dict[Any, int] | tuple[tuple[Any, int], ...]) -> tuple[tuple[Any, int], ...]:
    return tuple(counts.items()) if isinstance(counts, dict) else tuple(counts)


@dataclass(frozen=True)
class Cluster:
    """Cores and how many of each; ``core_counts`` maps :class:`Core` -> count."""

    _counts: tuple[tuple[Core, int], ...]

    def __init__(self, core_counts: dict[Core, int] | Core, count: int = 1) -> None:
        object.__setattr__(self, "_counts", ((core_counts, count),) if isinstance(core_counts, Core)
                           else _pairs(core_counts))

    @property
    def core_counts(self) -> dict[Core, int]:
        return dict(self._counts)

    def total_core_count(self) -> int:
        return sum(n for _, n in self._counts)


@dataclass(frozen=True)
class Die:
    """Clusters and how many of each; ``cluster_counts`` maps :class:`Cluster` -> count."""

    _counts: tuple[tuple[Cluster, int], ...]

    def __init__(self, cluster_counts: dict[Cluster, int] | Cluster, count: int = 1) -> None:
        object.__setattr__(self, "_counts", ((cluster_counts, count),) if isinstance(cluster_counts, Cluster)
                           else _pairs(cluster_counts))

    @property
    def cluster_counts(self) -> dict[Cluster, int]:
        return dict(self._counts)

    def total_cluster_count(self) -> int:
        return sum(n for _, n in self._counts)

    def total_core_count(self) -> int:
        return sum(c.total_core_count() * n for c, n in self._counts)


@dataclass(frozen=True)
class SoC:
    """Dies and how many of each, plus the memory graph (space -> spaces data moves to directly)."""

    _counts: tuple[tuple[Die, int], ...]
    mem_graph: dict[MemorySpace, tuple[MemorySpace, ...]] = field(default_factory=dict, compare=False, hash=False)

    def __init__(self, die_counts: dict[Die, int] | Die, count: int = 1,
                 mem_graph: dict[MemorySpace, list[MemorySpace]] | None = None) -> None:
        object.__setattr__(self, "_counts", ((die_counts, count),) if isinstance(die_counts, Die)
                           else _pairs(die_counts))
        object.__setattr__(self, "mem_graph", {k: tuple(v) for k, v in (mem_graph or {}).items()})

    @property
    def die_counts(self) -> dict[Die, int]:
        return dict(self._counts)

    def total_die_count(self) -> int:
        return sum(n for _, n in self._counts)

    def total_cluster_count(self) -> int:
        return sum(d.total_cluster_count() * n for d, n in self._counts)

    def total_core_count(self) -> int:
        return sum(d.total_core_count() * n for d, n in self._counts)

    def cores(self) -> list[tuple[Core, int]]:
        """Every core kind with its number on the whole chip."""
        return [(core, nc * ncl * nd) for die, nd in self._counts for cl, ncl in die._counts for core, nc in cl._counts]


def _soc_910b() -> SoC:
    aic = Core(CoreType.CUBE, [Mem(MemorySpace.Mat, 512 * KIB, 128), Mem(MemorySpace.Left, 64 * KIB, 64),
                               Mem(MemorySpace.Right, 64 * KIB, 64), Mem(MemorySpace.Acc, 128 * KIB, 128),
                               Mem(MemorySpace.Bias, 1 * KIB, 64)])
    aiv = Core(CoreType.VECTOR, [Mem(MemorySpace.Vec, 184 * KIB, 128)])  # 192 KiB physical, top 8 KiB reserved
    graph = {MemorySpace.DDR: [MemorySpace.Vec, MemorySpace.Mat], MemorySpace.Vec: [MemorySpace.DDR],
             MemorySpace.Mat: [MemorySpace.Left, MemorySpace.Right, MemorySpace.Bias],
             MemorySpace.Acc: [MemorySpace.Mat, MemorySpace.DDR]}
    return SoC(Die({Cluster(aic, 1): 24, Cluster(aiv, 1): 48}), 1, graph)


def _soc_950() -> SoC:
    aic = Core(CoreType.CUBE, [Mem(MemorySpace.Mat, 512 * KIB, 128), Mem(MemorySpace.Left, 64 * KIB, 64),
                               Mem(MemorySpace.Right, 64 * KIB, 64), Mem(MemorySpace.Acc, 256 * KIB, 128),
                               Mem(MemorySpace.Bias, 4 * KIB, 64), Mem(MemorySpace.LeftScale, 4 * KIB, 32),
                               Mem(MemorySpace.RightScale, 4 * KIB, 32)])
    aiv = Core(CoreType.VECTOR, [Mem(MemorySpace.Vec, 240 * KIB, 128)])  # 248 KiB physical, top 8 KiB reserved
    graph = {MemorySpace.DDR: [MemorySpace.Vec, MemorySpace.Mat], MemorySpace.Vec: [MemorySpace.Mat, MemorySpace.DDR],
             MemorySpace.Mat: [MemorySpace.Left, MemorySpace.Right, MemorySpace.Bias, MemorySpace.LeftScale,
                               MemorySpace.RightScale],
             MemorySpace.Acc: [MemorySpace.Vec, MemorySpace.Mat, MemorySpace.DDR]}
    return SoC(Die(Cluster({aic: 1, aiv: 2}), 18), 2, graph)


class Backend:
    """A backend: its :class:`SoC` and what passes ask of it (memory sizes, core counts, data paths)."""

    def __init__(self, soc: SoC, type_name: str = "Backend") -> None:
        self._soc, self._type_name = soc, type_name

    @property
    def soc(self) -> SoC:
        return self._soc

    def get_type_name(self) -> str:
        return self._type_name

    def get_mem_size(self, mem_type: MemorySpace) -> int:
        """Bytes of the first memory of ``mem_type`` on any core (0 when the chip has none)."""
        return next((m.mem_size for core, _ in self._soc.cores() for m in core.mems if m.mem_type == mem_type), 0)

    def get_core_count(self, core_type: CoreType) -> int:
        """Cores of ``core_type`` on the whole chip."""
        return sum(n for core, n in self._soc.cores() if core.core_type == core_type)

    def find_mem_path(self, from_mem: MemorySpace, to_mem: MemorySpace) -> list[MemorySpace]:
        """The shortest chain of spaces data moves through from ``from_mem`` to ``to_mem`` ([] when none)."""
        parent: dict[MemorySpace, MemorySpace] = {from_mem: from_mem}
        todo = deque([from_mem])
        while todo and to_mem not in parent:
            cur = todo.popleft()
            for nxt in self._soc.mem_graph.get(cur, ()):
                if nxt not in parent:
                    parent[nxt] = cur
                    todo.append(nxt)
        if to_mem not in parent:
            return []
        path = [to_mem]
        while path[-1] != from_mem:
            path.append(parent[path[-1]])
        return path[::-1]

    def export_to_file(self, path: str) -> None:
        """Write this backend (type name and SoC) to ``path`` as MessagePack."""
        from pypto.ir.msgpack import packb

        Path(path).write_bytes(packb({"type_name": self._type_name, "soc": _soc_doc(self._soc)}))

    @staticmethod
    def import_from_file(path: str) -> Backend:
        """A backend read back from :meth:`export_to_file`'s file."""
        from pypto.ir.msgpack import unpackb

        doc = unpackb(Path(path).read_bytes())
        return Backend(_soc_from(doc["soc"]), str(doc["type_name"]))

    def __repr__(self) -> str:
        return f"<{self._type_name}: {self._soc.total_die_count()} die(s), {self._soc.total_core_count()} cores>"


def _soc_doc(soc: SoC) -> dict[str, Any]:
    def core(c: Core) -> dict[str, Any]:
        return {"core_type": c.core_type.value, "mems": [[m.mem_type.value, m.mem_size, m.alignment] for m in c.mems]}

    return {"dies": [{"count": nd, "clusters": [{"count": ncl, "cores": [{"count": nc, "core": core(c)}
                                                                        for c, nc in cl._counts]}
                                                for cl, ncl in die._counts]} for die, nd in soc._counts],
            "mem_graph": {k.value: [v.value for v in vs] for k, vs in soc.mem_graph.items()}}


def _soc_from(doc: dict[str, Any]) -> SoC:
    def core(d: dict[str, Any]) -> Core:
        return Core(CoreType(d["core_type"]), [Mem(MemorySpace(t), int(s), int(a)) for t, s, a in d["mems"]])

    dies = {Die({Cluster({core(c["core"]): int(c["count"]) for c in cl["cores"]}): int(cl["count"])
                 for cl in die["clusters"]}): int(die["count"]) for die in doc["dies"]}
    graph = {MemorySpace(k): [MemorySpace(v) for v in vs] for k, vs in doc["mem_graph"].items()}
    return SoC(dies, mem_graph=graph)


class Backend910B(Backend):
    """The Ascend910B backend (a singleton: :meth:`instance`)."""

    _instance: Backend910B | None = None

    def __init__(self) -> None:
        super().__init__(_soc_910b(), "910B")

    @staticmethod
    def instance() -> Backend910B:
        if Backend910B._instance is None:
            Backend910B._instance = Backend910B()
        return Backend910B._instance


class Backend950(Backend):
    """The Ascend950 backend (a singleton: :meth:`instance`)."""

    _instance: Backend950 | None = None

    def __init__(self) -> None:
        super().__init__(_soc_950(), "950")

    @staticmethod
    def instance() -> Backend950:
        if Backend950._instance is None:
            Backend950._instance = Backend950()
        return Backend950._instance


_config: dict[str, BackendType | None] = {"type": None}
_lock = threading.Lock()


def set_backend_type(backend_type: BackendType) -> None:
    """Configure the process-wide backend (again with the same type: no-op; another type: ValueError)."""
    backend_type = BackendType(backend_type)
    with _lock:
        current = _config["type"]
        if current is not None and current is not backend_type:
            raise ValueError(f"Backend type already set to {current.name}, cannot change to {backend_type.name}")
        _config["type"] = backend_type


def get_backend_type() -> BackendType:
    """The configured backend type (ValueError when :func:`set_backend_type` was not called)."""
    with _lock:
        current = _config["type"]
    if current is None:
        raise ValueError("Backend type not configured. Please call set_backend_type() first.")
    return current


def is_backend_configured() -> bool:
    with _lock:
        return _config["type"] is not None


def get_backend_instance(backend_type: BackendType | None = None) -> Backend:
    """The singleton backend of ``backend_type`` (default: the configured one)."""
    backend_type = get_backend_type() if backend_type is None else BackendType(backend_type)
    return Backend950.instance() if backend_type is BackendType.Ascend950 else Backend910B.instance()


def reset_for_testing() -> None:
    """Forget the configured backend type (tests only)."""
    with _lock:
        _config["type"] = None
