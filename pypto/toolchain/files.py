"""Writing compile products with few system calls: ``open``, ``write``, ``close`` per file.

``Path.write_text`` adds a buffered text layer (an ``fstat``, an ``ioctl`` and two ``lseek`` per file);
an artifact directory with pass dumps has some fifty files, so its writers use :func:`write_file` on
bytes from :func:`text_bytes`, which encodes exactly as ``write_text`` would (the locale's preferred
encoding, ``os.linesep`` newlines), so the bytes on disk are the same. :class:`DirMaker` creates each
directory once per compile.
"""

from __future__ import annotations

import locale
import os
import sys

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def text_bytes(text: str) -> bytes:
    """``text`` as ``Path.write_text(text)`` puts it on disk (no explicit encoding, strict errors)."""
    encoding = "utf-8" if sys.flags.utf8_mode else locale.getpreferredencoding(False)
    if os.linesep != "\n":
        text = text.replace("\n", os.linesep)
    return text.encode(encoding)


def write_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Create or truncate ``path`` (mode 0o666 less the umask, as ``open`` does) and write ``data``."""
    fd = os.open(path, _FLAGS, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


class DirMaker:
    """``mkdir -p`` that remembers what it made or found, so each directory costs one call per compile."""

    def __init__(self) -> None:
        self._known: set[str] = set()

    def ensure(self, path: str | os.PathLike[str]) -> None:
        key = os.fspath(path)
        if key in self._known:
            return
        os.makedirs(key, exist_ok=True)
        self._known.add(key)
