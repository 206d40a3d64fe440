"""Element types as the simulation runtime sees them: ``DataType`` codes, metadata names, numpy/torch types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class RtDType:
    """One runtime element type.

    Attributes:
        code: value of the C++ ``DataType`` enum (stored in ``ChipTensor::dtype``).
        meta: spelling in ``compiled_meta.json`` (``fp32``).
        itemsize: bytes per element (FP4 packs two values per byte and reports 1).
        numpy: numpy dtype name, or None when numpy has no such type.
        torch: ``torch`` attribute name, or None.
    """

    code: int
    meta: str
    itemsize: int
    numpy: str | None
    torch: str | None


DTYPES: tuple[RtDType, ...] = (
    RtDType(0, "fp32", 4, "float32", "float32"),
    RtDType(1, "fp16", 2, "float16", "float16"),
    RtDType(2, "int32", 4, "int32", "int32"),
    RtDType(3, "int16", 2, "int16", "int16"),
    RtDType(4, "int8", 1, "int8", "int8"),
    RtDType(5, "uint8", 1, "uint8", "uint8"),
    RtDType(6, "bf16", 2, None, "bfloat16"),
    RtDType(7, "int64", 8, "int64", "int64"),
    RtDType(8, "uint64", 8, "uint64", "uint64"),
    RtDType(9, "uint16", 2, "uint16", "uint16"),
    RtDType(10, "uint32", 4, "uint32", "uint32"),
    RtDType(11, "bool", 1, "bool", "bool"),
    RtDType(12, "fp8e4m3fn", 1, None, "float8_e4m3fn"),
    RtDType(13, "fp8e8m0", 1, None, "float8_e8m0fnu"),
    RtDType(14, "fp4", 1, None, "float4_e2m1fn_x2"),
)
BY_META = {d.meta: d for d in DTYPES}
BY_NUMPY = {np.dtype(d.numpy): d for d in DTYPES if d.numpy}
# Raw-bit carriers accepted for types numpy lacks (bf16 as uint16, fp8 as uint8).
RAW_CARRIERS = {"bf16": np.dtype("uint16"), "fp8e4m3fn": np.dtype("uint8"), "fp8e8m0": np.dtype("uint8"),
                "fp4": np.dtype("uint8")}


def from_meta(name: str) -> RtDType:
    """Look up a ``compiled_meta.json`` dtype name."""
    try:
        return BY_META[name]
    except KeyError:
        raise ValueError(f"unknown dtype '{name}' (known: {', '.join(BY_META)})") from None


def from_numpy(dtype: np.dtype) -> RtDType:
    """The runtime type of a numpy dtype (TypeError if unsupported)."""
    try:
        return BY_NUMPY[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"numpy dtype {np.dtype(dtype)} has no runtime DataType") from None


def from_torch(dtype: Any) -> RtDType:
    """The runtime type of a torch dtype (TypeError if unsupported)."""
    name = str(dtype).removeprefix("torch.")
    for d in DTYPES:
        if d.torch == name:
            return d
    raise TypeError(f"torch dtype {dtype} has no runtime DataType")


def coerce(dtype: Any) -> RtDType:
    """Accept an RtDType, a metadata name, a numpy dtype or a torch dtype."""
    if isinstance(dtype, RtDType):
        return dtype
    if isinstance(dtype, str) and dtype in BY_META:
        return BY_META[dtype]
    if type(dtype).__module__.startswith("torch"):
        return from_torch(dtype)
    return from_numpy(np.dtype(dtype))


def numpy_carrier(d: RtDType) -> np.dtype:
    """The numpy dtype used to hold values of ``d`` (raw bits for types numpy lacks)."""
    return np.dtype(d.numpy) if d.numpy else RAW_CARRIERS[d.meta]
