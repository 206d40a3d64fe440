"""Writing compile products with few system calls: ``open``, ``write``, ``close`` per file.

``Path.write_text`` adds a buffered text layer (an ``fstat``, an ``ioctl`` and two ``lseek`` per file);
an artifact directory with pass dumps has some fifty files, so its writers use :func:`write_file` on
bytes from :func:`text_bytes`, which encodes exactly as ``write_text`` would (the locale's preferred
encoding, ``os.linesep`` newlines), so the bytes on disk are the same. :class:`DirMaker` creates each
directory once per compile.
"""

from __future__ import annotations

import json
import locale
import os
import sys
from json.encoder import encode_basestring_ascii as quote

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
    except OSError as exc:  # a full disk: name the file (os.write does not)
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from exc
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
        try:
            os.mkdir(key)  # the usual case: the parent exists (one system call)
        except FileExistsError:
            if not os.path.isdir(key):
                raise
        except FileNotFoundError:
            os.makedirs(key, exist_ok=True)
        self._known.add(key)


_INF = float("inf")


class _NotPlain(Exception):
    pass


def indented_json(value: object) -> str:
    """``json.dumps(value, indent=2)``, the same text, built by C-level string ops.

    With ``indent`` set, the standard library falls back to its pure-Python encoder, which costs more
    than writing the file. Documents other than str-keyed dicts, lists/tuples, str, int, float, bool
    and None go to ``json.dumps`` itself.
    """
    try:
        return _indented(value, "\n")
    except _NotPlain:
        return json.dumps(value, indent=2)


def _indented(value: object, nl: str) -> str:
    if isinstance(value, str):
        return quote(value)
    if value is True or value is False or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is float:
        if value != value:
            return "NaN"
        if value in (_INF, -_INF):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    inner = nl + "  "
    if type(value) is dict:
        if not value:
            return "{}"
        if not all(type(k) is str for k in value):
            raise _NotPlain
        return "{" + inner + ("," + inner).join(
            quote(k) + ": " + _indented(v, inner) for k, v in value.items()) + nl + "}"
    if type(value) in (list, tuple):
        if not value:
            return "[]"
        return "[" + inner + ("," + inner).join(_indented(v, inner) for v in value) + nl + "]"  # type: ignore[attr-defined]
    raise _NotPlain
