"""The artifact model: what codegen hands the assembler (generated text per relative path, kernel units)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

CoreKind = Literal["aiv", "aic"]
ParamKind = Literal["tensor", "scalar", "dim", "block_idx", "block_num", "sub_block_idx"]


@dataclass(frozen=True, slots=True)
class KernelParam:
    """One argument of a kernel's MLIR function, in MLIR order (tensors, scalars, dynamic dims).

    ``index`` is the position in the runtime's ``args[]`` (tensors first, then scalars); for a
    ``dim`` it is the tensor's position and ``axis`` the dimension read from ``shapes[axis]``.
    ``ctype`` is the C++ type of the ptoas-generated parameter (``float``, ``int32_t``, ...).
    A ``dim`` declared as ``scale * name + offset`` (``M * 2``) is read as ``(shapes[axis] - offset) / scale``.
    """

    name: str
    kind: ParamKind
    dtype: str
    ctype: str
    index: int
    axis: int = -1
    scale: int = 1
    offset: int = 0


@dataclass(frozen=True, slots=True)
class KernelFunc:
    """One InCore function of a unit: name, core type and its MLIR arguments."""

    name: str
    core: CoreKind
    params: tuple[KernelParam, ...]


@dataclass(frozen=True, slots=True)
class KernelUnit:
    """One ``.pto`` module: a single AIV/AIC function, or all members of a Group."""

    name: str
    pto: str
    funcs: tuple[KernelFunc, ...]

    @property
    def core(self) -> CoreKind:
        return self.funcs[0].core


@dataclass(frozen=True, slots=True)
class FuncId:
    """A kernel as the orchestration submits it: ``func_id`` by first-seen call order."""

    func_id: int
    name: str
    core: CoreKind
    signature: tuple[str, ...]


@dataclass(frozen=True)
class Artifact:
    """Output of codegen: ``files`` (relpath -> text, no ptoas products yet) and kernel units.

    ``func_ids`` lists the kernels each orchestration submits (ids shared across orchestrations);
    ``runtime`` is the wire name baked into ``kernel_config.py``.
    """

    files: dict[str, str]
    units: list[KernelUnit]
    orchestration_names: list[str]
    func_ids: list[FuncId] = field(default_factory=list)
    orch_signatures: dict[str, tuple[str, ...]] = field(default_factory=dict)
    runtime: str = "tensormap_and_ringbuffer"
    backend_type: str = "Ascend910B"
