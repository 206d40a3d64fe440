"""The one metadata record of an artifact directory: ``compiled_meta.json`` as typed values.

:class:`ParamInfo` is one orchestration parameter; :class:`ArtifactMeta` is the whole document. The
compile driver builds it once from the program (:meth:`ArtifactMeta.from_program`), ``run_pto``
builds it from a ``.pto`` signature, and every reader (``CompiledProgram.from_dir``, the runtime's
``load_artifact``, the jit disk cache) goes through :meth:`ArtifactMeta.read` / :meth:`from_json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pypto.ir.dtypes import DataType, from_meta

if TYPE_CHECKING:
    from pypto.ir.function import Program

META_FILE = "compiled_meta.json"
META_SCHEMA = 1
DEFAULT_RUNTIME = "tensormap_and_ringbuffer"


@dataclass(frozen=True, slots=True)
class ParamInfo:
    """One orchestration parameter; ``shape`` None means unknown (or a scalar), a None axis is dynamic."""

    name: str
    direction: str
    shape: tuple[int | None, ...] | None
    dtype: DataType | None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "direction": self.direction,
                "shape": list(self.shape) if self.shape is not None else None,
                "dtype": self.dtype.meta if self.dtype is not None else None}

    @staticmethod
    def from_json(d: dict[str, Any]) -> ParamInfo:
        shape = d.get("shape")
        dtype = d.get("dtype")
        return ParamInfo(str(d["name"]), str(d.get("direction", "In")), tuple(shape) if shape is not None else None,
                         from_meta(dtype) if dtype else None)


@dataclass(frozen=True, slots=True)
class ArtifactMeta:
    """``compiled_meta.json``: parameters, return count and what the artifact was built for.

    ``extra`` holds further keys some producers record (``run_pto``: ``source``, ``func``); they are
    written after the standard ones and kept on read.
    """

    params: tuple[ParamInfo, ...] = ()
    num_return_types: int = 0
    platform: str | None = None
    backend_type: str | None = None
    runtime: str = DEFAULT_RUNTIME
    toolchain: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def output_indices(self) -> tuple[int, ...]:
        """Indices of pure ``Out`` parameters (allocated by return-style calls)."""
        return tuple(i for i, p in enumerate(self.params) if p.direction == "Out")

    def to_json(self) -> dict[str, Any]:
        return {"schema": META_SCHEMA, "params": [p.to_json() for p in self.params],
                "num_return_types": self.num_return_types, "platform": self.platform,
                "backend_type": self.backend_type, "runtime": self.runtime, "toolchain": self.toolchain,
                **self.extra}

    def text(self) -> str:
        from pypto.toolchain.files import indented_json

        return indented_json(self.to_json())  # json.dumps(..., indent=2), byte for byte

    @staticmethod
    def from_json(doc: Any, where: str | Path = META_FILE) -> ArtifactMeta:
        """Validate and convert a parsed document (ValueError naming ``where`` if the schema is wrong)."""
        if not isinstance(doc, dict) or doc.get("schema") != META_SCHEMA or "params" not in doc:
            raise ValueError(f"{where}: unsupported metadata schema "
                             f"{doc.get('schema') if isinstance(doc, dict) else doc!r} (expected {META_SCHEMA}); "
                             "recompile with this pypto version")
        known = {"schema", "params", "num_return_types", "platform", "backend_type", "runtime", "toolchain"}
        return ArtifactMeta(
            params=tuple(ParamInfo.from_json(p) for p in doc["params"]),
            num_return_types=int(doc.get("num_return_types", 0)),
            platform=doc.get("platform"),
            backend_type=doc.get("backend_type"),
            runtime=str(doc.get("runtime") or DEFAULT_RUNTIME),
            toolchain=doc.get("toolchain"),
            extra={k: v for k, v in doc.items() if k not in known},
        )

    @staticmethod
    def read(root: str | Path) -> ArtifactMeta:
        """Read ``<root>/compiled_meta.json`` (FileNotFoundError if absent, ValueError if corrupt)."""
        path = Path(root) / META_FILE
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: '{root}' is not a complete pypto artifact directory "
                "(compile did not finish, or this is not an output dir of ir.compile)")
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: corrupt metadata ({exc}); recompile the program") from exc
        return ArtifactMeta.from_json(doc, path)

    @staticmethod
    def from_program(program: Program, *, platform: str, backend_type: str, runtime: str,
                     toolchain: str | None, lowered: Program | None = None) -> ArtifactMeta:
        """The record of ``program`` as given to ``ir.compile`` (its last orchestration's parameters).

        A program with no orchestration function of its own (an Opaque entry the passes turn into one)
        records the parameters of the orchestration in ``lowered``, the program after the passes.
        """
        params, nret = _orchestration_params(program if program.orchestrations() or lowered is None else lowered)
        return ArtifactMeta(params, nret, platform, backend_type, runtime, toolchain)


def _orchestration_params(program: Program) -> tuple[tuple[ParamInfo, ...], int]:
    from pypto.ir.enums import ParamDirection
    from pypto.ir.types import ShapedType, TupleType

    orch = program.orchestrations()
    if not orch:
        return (), 0
    func = orch[-1]
    infos = []
    for var, direction in zip(func.params, func.param_directions, strict=True):
        t = var.type
        shape = dtype = None
        if isinstance(t, ShapedType):
            shape = t.static_shape()
            dtype = t.dtype
        elif hasattr(t, "dtype"):
            dtype = t.dtype
        infos.append(ParamInfo(var.name.split("__ssa_")[0], ParamDirection(direction).value, shape, dtype))
    nret = sum(len(rt.types) if isinstance(rt, TupleType) else 1 for rt in func.return_types)
    return tuple(infos), nret
