"""A small MessagePack codec (the subset the IR serializer needs; any MessagePack reader can read it).

Values: None, bool, int (-2**63 .. 2**64-1), float (always float64), str, bytes, list/tuple (arrays)
and dict (maps). Arrays decode as lists. See https://github.com/msgpack/msgpack/blob/master/spec.md.
"""

from __future__ import annotations

import struct
from typing import Any


class MsgpackError(ValueError):
    """The bytes are not MessagePack this codec reads, or a value cannot be encoded."""


def packb(value: Any) -> bytes:
    out = bytearray()
    _pack(value, out)
    return bytes(out)


def _pack(v: Any, out: bytearray) -> None:  # noqa: C901 - one branch per MessagePack family
    if v is None:
        out.append(0xC0)
    elif v is True or v is False:
        out.append(0xC3 if v else 0xC2)
    elif isinstance(v, int):
        _pack_int(v, out)
    elif isinstance(v, float):
        out.append(0xCB)
        out += struct.pack(">d", v)
    elif isinstance(v, str):
        data = v.encode("utf-8")
        _header(len(data), out, fix=(0xA0, 32), codes=(0xD9, 0xDA, 0xDB))
        out += data
    elif isinstance(v, (bytes, bytearray)):
        _header(len(v), out, fix=None, codes=(0xC4, 0xC5, 0xC6))
        out += v
    elif isinstance(v, (list, tuple)):
        _header(len(v), out, fix=(0x90, 16), codes=(None, 0xDC, 0xDD))
        for item in v:
            _pack(item, out)
    elif isinstance(v, dict):
        _header(len(v), out, fix=(0x80, 16), codes=(None, 0xDE, 0xDF))
        for key, item in v.items():
            _pack(key, out)
            _pack(item, out)
    else:
        raise MsgpackError(f"cannot encode a {type(v).__name__} as MessagePack")


def _pack_int(v: int, out: bytearray) -> None:
    if 0 <= v < 128:
        out.append(v)
    elif -32 <= v < 0:
        out.append(v & 0xFF)
    elif 0 <= v < 2**64:
        out.append(0xCF)
        out += struct.pack(">Q", v)
    elif -(2**63) <= v < 0:
        out.append(0xD3)
        out += struct.pack(">q", v)
    else:
        raise MsgpackError(f"integer {v} does not fit in 64 bits")


def _header(n: int, out: bytearray, fix: tuple[int, int] | None, codes: tuple[int | None, int, int]) -> None:
    if fix is not None and n < fix[1]:
        out.append(fix[0] | n)
    elif codes[0] is not None and n < 256:
        out += bytes((codes[0], n))
    elif n < 65536:
        out.append(codes[1])
        out += struct.pack(">H", n)
    else:
        out.append(codes[2])
        out += struct.pack(">I", n)


def unpackb(data: bytes) -> Any:
    reader = _Reader(memoryview(data))
    value = reader.value()
    if reader.pos != len(data):
        raise MsgpackError(f"{len(data) - reader.pos} trailing bytes after the MessagePack value")
    return value


_FIXED = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
          0xCA: ">f", 0xCB: ">d"}
_LENGTH = {0xD9: ("str", ">B"), 0xDA: ("str", ">H"), 0xDB: ("str", ">I"), 0xC4: ("bin", ">B"),
           0xC5: ("bin", ">H"), 0xC6: ("bin", ">I"), 0xDC: ("array", ">H"), 0xDD: ("array", ">I"),
           0xDE: ("map", ">H"), 0xDF: ("map", ">I")}


class _Reader:
    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> memoryview:
        if self.pos + n > len(self.data):
            raise MsgpackError("truncated MessagePack data")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def value(self) -> Any:
        b = self.take(1)[0]
        if b < 0x80:
            return b
        if b >= 0xE0:
            return b - 0x100
        if 0xA0 <= b <= 0xBF:
            return self.compound("str", b & 0x1F)
        if 0x90 <= b <= 0x9F:
            return self.compound("array", b & 0x0F)
        if 0x80 <= b <= 0x8F:
            return self.compound("map", b & 0x0F)
        if b in (0xC0, 0xC2, 0xC3):
            return {0xC0: None, 0xC2: False, 0xC3: True}[b]
        if b in _FIXED:
            fmt = _FIXED[b]
            return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]
        if b in _LENGTH:
            kind, fmt = _LENGTH[b]
            return self.compound(kind, struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0])
        raise MsgpackError(f"unsupported MessagePack type byte 0x{b:02x} at offset {self.pos - 1}")

    def compound(self, kind: str, n: int) -> Any:
        if kind == "str":
            return bytes(self.take(n)).decode("utf-8")
        if kind == "bin":
            return bytes(self.take(n))
        if kind == "array":
            return [self.value() for _ in range(n)]
        out = {}
        for _ in range(n):
            key = self.value()
            out[key] = self.value()
        return out
