"""How an upstream system-test case is described: element types, tensors, the case's base class.

A case (:class:`PTOTestCase`) names itself, lists its tensors (:class:`TensorSpec`: name, shape,
element type, initial value, whether it is an output), returns a ``@pl.program`` and writes the
expected outputs into a dict of torch tensors. Its ``config`` (a ``RunConfig``) carries the
tolerances the comparison uses. Platform lists are pytest parameters, as upstream's tests expect.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pytest

from pypto.backend import BackendType
from pypto.ir.pass_manager import OptimizationStrategy
from pypto.pypto_core.passes import MemoryPlanner
from pypto.runtime.runner import RunConfig
from pypto.runtime.tensor_spec import ScalarSpec

SIM_PLATFORM_IDS: tuple[str, ...] = ("a2a3sim", "a5sim")
ONBOARD_PLATFORM_IDS: tuple[str, ...] = ("a2a3", "a5")
ALL_PLATFORM_IDS: tuple[str, ...] = (*SIM_PLATFORM_IDS, *ONBOARD_PLATFORM_IDS)

PLATFORMS = [pytest.param(p, id=p) for p in ALL_PLATFORM_IDS]
SIM_PLATFORMS = [pytest.param(p, id=p) for p in SIM_PLATFORM_IDS]
ONBOARD_PLATFORMS = [pytest.param(p, id=p) for p in ONBOARD_PLATFORM_IDS]

_BACKEND_OF_ARCH = {"a2a3": BackendType.Ascend910B, "a5": BackendType.Ascend950}


def platform_to_backend(platform: str) -> BackendType:
    """The code-generation backend of a platform name (``a5sim`` -> Ascend950)."""
    if platform not in ALL_PLATFORM_IDS:
        raise ValueError(f"Unknown platform '{platform}'. Expected one of {ALL_PLATFORM_IDS}.")
    return _BACKEND_OF_ARCH[platform.removesuffix("sim")]


class DataType(Enum):
    """Element types a case may name; ``torch_dtype`` is the host tensor type that carries it."""

    BF16 = "bf16"
    FP32 = "fp32"
    FP16 = "fp16"
    FP8E4M3FN = "fp8e4m3fn"
    FP8E8M0 = "fp8e8m0"
    FP4 = "fp4"
    INT32 = "int32"
    UINT32 = "uint32"
    INT16 = "int16"
    UINT16 = "uint16"
    INT8 = "int8"
    UINT8 = "uint8"
    INT64 = "int64"
    BOOL = "bool"

    @property
    def torch_dtype(self) -> Any:
        """The torch dtype (unsigned 16/32-bit types ride in the signed type of the same width)."""
        import torch

        carriers = {"uint32": "int32", "uint16": "int16", "fp8e4m3fn": "float8_e4m3fn",
                    "fp8e8m0": "float8_e8m0fnu", "fp4": "float4_e2m1fn_x2", "bf16": "bfloat16",
                    "fp32": "float32", "fp16": "float16"}
        name = carriers.get(self.value, self.value)
        dtype = getattr(torch, name, None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"PyTorch does not provide the dtype torch.{name}")
        return dtype


@dataclass
class TensorSpec:
    """One tensor of a case. ``init_value``: None (zeros), a number (filled), a tensor, or a callable
    (``torch.randn``-like factories get the shape; anything else is called without arguments)."""

    name: str
    shape: list[int]
    dtype: DataType
    init_value: int | float | Any | Callable[..., Any] | None = None
    is_output: bool = False


class PTOTestCase(ABC):
    """A system-test case: subclasses give ``get_name``, ``define_tensors``, ``get_program`` and
    ``compute_expected``; constructor keywords override platform, backend, strategy and planner
    unless the subclass redefines the matching ``get_*`` method."""

    def __init__(self, config: RunConfig | None = None, *, platform: str | None = None,
                 backend_type: BackendType | None = None, strategy: OptimizationStrategy | None = None,
                 memory_planner: MemoryPlanner | None = None,
                 enable_pypto_l0c_double_buffer: bool | None = None) -> None:
        self.config = config or RunConfig()
        self._override_platform = platform
        self._override_backend = backend_type
        self._override_strategy = strategy
        self._override_memory_planner = memory_planner
        self._override_l0c_double_buffer = enable_pypto_l0c_double_buffer
        self._tensor_specs: list[TensorSpec] | None = None
        self._scalar_specs: list[ScalarSpec] | None = None

    @abstractmethod
    def get_name(self) -> str:
        """The case's unique name."""

    @abstractmethod
    def define_tensors(self) -> list[TensorSpec]:
        """The case's tensors, inputs and outputs."""

    @abstractmethod
    def get_program(self) -> Any:
        """A ``@pl.program`` class or an ``ir.Program``."""

    @abstractmethod
    def compute_expected(self, tensors: dict[str, Any], params: dict[str, Any] | None = None) -> None:
        """Write the expected outputs into ``tensors`` (torch tensors, in place)."""

    def get_strategy(self) -> OptimizationStrategy:
        return self._override_strategy if self._override_strategy is not None else OptimizationStrategy.Default

    def get_memory_planner(self) -> MemoryPlanner | None:
        return self._override_memory_planner

    def get_enable_pypto_l0c_double_buffer(self) -> bool | None:
        return self._override_l0c_double_buffer

    def get_platform(self) -> str | None:
        """The platform this case pins, or None for the session's ``--platform``."""
        return self._override_platform

    def get_backend_type(self) -> BackendType:
        if self._override_platform is not None:
            return platform_to_backend(self._override_platform)
        return self._override_backend if self._override_backend is not None else BackendType.Ascend910B

    def define_scalars(self) -> list[ScalarSpec]:
        """Scalar arguments passed after every tensor (none by default)."""
        return []

    @property
    def tensor_specs(self) -> list[TensorSpec]:
        if self._tensor_specs is None:
            self._tensor_specs = self.define_tensors()
        return self._tensor_specs

    @property
    def scalar_specs(self) -> list[ScalarSpec]:
        if self._scalar_specs is None:
            self._scalar_specs = self.define_scalars()
        return self._scalar_specs


__all__ = ["ALL_PLATFORM_IDS", "ONBOARD_PLATFORMS", "ONBOARD_PLATFORM_IDS", "PLATFORMS", "SIM_PLATFORMS",
           "SIM_PLATFORM_IDS", "DataType", "PTOTestCase", "ScalarSpec", "TensorSpec", "platform_to_backend"]
