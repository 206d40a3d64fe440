"""Upstream's ``pypto.runtime.elf_parser``: ELF64 helpers (FNV-1a hash, GNU Build-ID, ``.text`` bytes).

Our simulated runtime loads kernels as host shared objects, so these read the ``.so``/``.o`` files g++
builds (x86-64 or AArch64 ELF64, little endian); upstream applies them to device objects.
"""

from __future__ import annotations

import struct
from pathlib import Path

PT_NOTE = 4
NT_GNU_BUILD_ID = 3
_FNV_OFFSET, _FNV_PRIME, _U64 = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def fnv1a_64(data: bytes) -> int:
    """FNV-1a 64-bit hash of ``data``."""
    h = _FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & _U64
    return h


def _is_elf64(data: bytes) -> bool:
    return len(data) >= 64 and data[:4] == b"\x7fELF" and data[4] == 2


def _build_id_in(data: bytes, start: int, end: int) -> int | None:
    at = start
    while at + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from("<III", data, at)
        desc = at + 12 + ((namesz + 3) & ~3)
        nxt = desc + ((descsz + 3) & ~3)
        if nxt > end:
            return None
        if ntype == NT_GNU_BUILD_ID and data[at + 12: at + 16] == b"GNU\0" and descsz >= 8:
            return int(struct.unpack_from("<Q", data, desc)[0])
        at = nxt
    return None


def elf_build_id_64(data: bytes) -> int:
    """The first 8 bytes of the GNU Build-ID note (little endian); :func:`fnv1a_64` of ``data`` without one."""
    if not _is_elf64(data):
        return fnv1a_64(data)
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    if phoff and phentsize >= 56 and phoff + phnum * phentsize <= len(data):
        for i in range(phnum):
            ph = phoff + i * phentsize
            if struct.unpack_from("<I", data, ph)[0] != PT_NOTE:
                continue
            off, = struct.unpack_from("<Q", data, ph + 8)
            size, = struct.unpack_from("<Q", data, ph + 32)
            found = _build_id_in(data, off, off + size) if off + size <= len(data) else None
            if found is not None:
                return found
    return fnv1a_64(data)


def extract_text_section(obj_input: str | Path | bytes) -> bytes:
    """The bytes of the ``.text`` section of an ELF64 object (a path or its bytes); ValueError without one."""
    data = obj_input if isinstance(obj_input, bytes) else Path(obj_input).read_bytes()
    if not _is_elf64(data):
        raise ValueError("extract_text_section: not an ELF64 object")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if not shoff or shoff + shnum * shentsize > len(data) or shstrndx >= shnum:
        raise ValueError("extract_text_section: malformed section header table")

    def section(i: int) -> tuple[int, int, int]:
        base = shoff + i * shentsize
        name, = struct.unpack_from("<I", data, base)
        offset, size = struct.unpack_from("<QQ", data, base + 0x18)
        return name, offset, size

    _, str_off, _ = section(shstrndx)
    for i in range(shnum):
        name, offset, size = section(i)
        end = data.find(b"\0", str_off + name)
        if data[str_off + name: end] == b".text":
            return data[offset: offset + size]
    raise ValueError("extract_text_section: the object has no .text section")


__all__ = ["NT_GNU_BUILD_ID", "PT_NOTE", "elf_build_id_64", "extract_text_section", "fnv1a_64"]
