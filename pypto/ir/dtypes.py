"""Element data types with their DSL, MLIR, C++, numpy and metadata spellings."""

from __future__ import annotations

import math
import struct
from enum import Enum
from typing import Any


class DataType(Enum):
    """Element types; the value is the DSL constant name (``pl.FP32``)."""

    __hash__ = object.__hash__  # members are singletons compared by identity: hash them in C

    FP4 = "FP4"
    FP8E4M3FN = "FP8E4M3FN"
    FP8E5M2 = "FP8E5M2"
    FP8E8M0 = "FP8E8M0"
    FP16 = "FP16"
    FP32 = "FP32"
    BF16 = "BF16"
    HF4 = "HF4"
    HF8 = "HF8"
    INT4 = "INT4"
    INT8 = "INT8"
    INT16 = "INT16"
    INT32 = "INT32"
    INT64 = "INT64"
    UINT4 = "UINT4"
    UINT8 = "UINT8"
    UINT16 = "UINT16"
    UINT32 = "UINT32"
    UINT64 = "UINT64"
    BOOL = "BOOL"
    INDEX = "INDEX"
    TASK_ID = "TASK_ID"

    @property
    def bits(self) -> int:
        """Storage width in bits."""
        return _INFO[self][0]

    @property
    def nbytes(self) -> int:
        """Storage bytes per element (sub-byte types round up to 1)."""
        return max(1, self.bits // 8)

    @property
    def mlir(self) -> str:
        """MLIR element type spelling (``f32``, ``i32``, ``index``)."""
        return _INFO[self][1]

    @property
    def meta(self) -> str:
        """``compiled_meta.json`` spelling (``fp32``)."""
        return _INFO[self][2]

    @property
    def ctype(self) -> str:
        """C++ element type used by kernels and the runtime."""
        return _INFO[self][3]

    @property
    def is_float(self) -> bool:
        return self in _FLOATS

    @property
    def is_int(self) -> bool:
        return not self.is_float and self not in (DataType.BOOL, DataType.TASK_ID)

    @property
    def is_signed(self) -> bool:
        return self.is_float or self.name.startswith("INT") or self is DataType.INDEX

    def numpy(self) -> Any:
        """The numpy dtype, or raise for types numpy cannot hold (numpy is imported on first use)."""
        import numpy as np

        name = _INFO[self][4]
        if name is None:
            raise TypeError(f"dtype {self.value} has no numpy equivalent")
        return np.dtype(name)

    def __repr__(self) -> str:
        return f"pl.{self.value}"


_FLOATS = frozenset(
    {DataType.FP4, DataType.FP8E4M3FN, DataType.FP8E5M2, DataType.FP8E8M0, DataType.FP16,
     DataType.FP32, DataType.BF16, DataType.HF4, DataType.HF8}
)

# bits, mlir, meta, c++ type, numpy
_INFO: dict[DataType, tuple[int, str, str, str, str | None]] = {
    DataType.FP4: (4, "!pto.f4E2M1x2", "fp4", "uint8_t", None),
    DataType.FP8E4M3FN: (8, "f8E4M3FN", "fp8e4m3fn", "uint8_t", None),
    DataType.FP8E5M2: (8, "f8E5M2", "fp8e5m2", "uint8_t", None),
    DataType.FP8E8M0: (8, "!pto.f8E8M0", "fp8e8m0", "uint8_t", None),
    DataType.FP16: (16, "f16", "fp16", "half", "float16"),
    DataType.FP32: (32, "f32", "fp32", "float", "float32"),
    DataType.BF16: (16, "bf16", "bf16", "bfloat16_t", None),
    DataType.HF4: (4, "!pto.hif4", "hf4", "uint8_t", None),
    DataType.HF8: (8, "!pto.hif8", "hf8", "uint8_t", None),
    DataType.INT4: (4, "i4", "int4", "int8_t", None),
    DataType.INT8: (8, "i8", "int8", "int8_t", "int8"),
    DataType.INT16: (16, "i16", "int16", "int16_t", "int16"),
    DataType.INT32: (32, "i32", "int32", "int32_t", "int32"),
    DataType.INT64: (64, "i64", "int64", "int64_t", "int64"),
    DataType.UINT4: (4, "ui4", "uint4", "uint8_t", None),
    DataType.UINT8: (8, "ui8", "uint8", "uint8_t", "uint8"),
    DataType.UINT16: (16, "ui16", "uint16", "uint16_t", "uint16"),
    DataType.UINT32: (32, "ui32", "uint32", "uint32_t", "uint32"),
    DataType.UINT64: (64, "ui64", "uint64", "uint64_t", "uint64"),
    DataType.BOOL: (8, "i1", "bool", "bool", "bool"),
    DataType.INDEX: (64, "index", "index", "int64_t", "int64"),
    DataType.TASK_ID: (64, "i64", "task_id", "uint64_t", None),
}

_NUMPY_NAMES = {v[4]: k for k, v in _INFO.items() if v[4] and k is not DataType.INDEX}


def from_numpy(dtype: Any) -> DataType:
    """Map a numpy dtype to a DataType (TypeError for unsupported ones)."""
    import numpy as np

    try:
        return _NUMPY_NAMES[np.dtype(dtype).name]
    except KeyError:
        raise TypeError(f"numpy dtype {dtype} is not supported by pypto") from None


def from_meta(name: str) -> DataType:
    """Inverse of :attr:`DataType.meta`."""
    for dt, info in _INFO.items():
        if info[2] == name:
            return dt
    raise ValueError(f"unknown dtype '{name}' in artifact metadata")


# short spellings accepted by the CLI (`--shape a=128x128:f16`) and example SHAPES tables
ALIASES: dict[str, DataType] = {
    **{a: DataType.FP16 for a in ("f16", "fp16", "float16", "half")},
    **{a: DataType.BF16 for a in ("bf16", "bfloat16")},
    **{a: DataType.FP32 for a in ("f32", "fp32", "float32", "float")},
    **{a: DataType.INT8 for a in ("i8", "int8")},
    **{a: DataType.INT16 for a in ("i16", "int16")},
    **{a: DataType.INT32 for a in ("i32", "int32")},
    **{a: DataType.INT64 for a in ("i64", "int64")},
    **{a: DataType.UINT8 for a in ("u8", "uint8")},
    "bool": DataType.BOOL,
}


def from_name(text: str) -> DataType:
    """A dtype from a short spelling (``f32``, ``fp16``, ``int32``, ...), case-insensitive."""
    try:
        return ALIASES[text.lower()]
    except KeyError:
        raise ValueError(f"unknown dtype '{text}': expected one of {', '.join(sorted(ALIASES))}") from None


def bf16_round(x: float) -> float:
    """``x`` rounded once to bf16 (nearest, ties to even; an overflow gives inf), as a float; NaN stays NaN."""
    if x != x or x == 0 or math.isinf(x):
        return x
    q = math.ldexp(1.0, max(math.frexp(x)[1] - 8, -133))  # bf16's quantum at x (subnormals: 2^-133)
    r = round(x / q) * q
    return math.copysign(math.inf, x) if abs(r) >= 2.0 ** 128 else math.copysign(r, x)


def f16_exact(x: float) -> bool:
    """Is ``x`` (finite) exactly an f16 value?"""
    try:
        return struct.unpack("<e", struct.pack("<e", x))[0] == x
    except OverflowError:
        return False
