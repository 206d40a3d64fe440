"""ptoas' output cached by content, the way ccache caches a compiler call.

The key of one kernel unit is the sha256 of the text ptoas is fed (the unit's ``.pto``, or its bf16
stand-in) without its ``loc(...)`` source locations (ptoas writes none of them into its C++, so an
edit that moves the lines of one kernel leaves the others' keys alone), the ptoas identity
(:func:`identity`) and the flags (the argv without its paths). An entry
is one file ``<cache_dir>/ptoas-cpp/<key>.entry``: a header line with the sha256 of the body, then the
body (ptoas' C++ for the unit as ptoas wrote it, and the log of the run that made it). So:

- a unit whose input, ptoas and flags are unchanged starts no ptoas: its C++ comes from the entry;
- entries are written to a private temp file and renamed into place: readers see a whole entry or
  none, and concurrent writers of one key each publish a whole (identical-purpose) entry;
- an entry that does not match its recorded digest (truncated, edited, garbage) is a miss: it is
  removed, with a warning, and the unit's fresh output replaces it; nothing here raises;
- the directory is bounded by the ``cache_max_mb`` setting (``PYPTO_CACHE_MAX_MB``): after a store,
  the least recently used entries (a hit sets an entry's access time, never its mtime: a hit rewrites
  nothing) are removed until it fits.

ptoas 0.1.1 is not deterministic from run to run (its memory planner walks pointer-keyed maps), so the
cache also makes an unchanged unit's C++, and every g++ build keyed by it, stable across runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pypto.artifact import ptoas_file
from pypto.backend import ptoas_stage
from pypto.backend.ptoas_stage import PtoasResult
from pypto.toolchain import cachefs

SCHEMA = "1"
DIR_NAME = "ptoas-cpp"
SUFFIX = ".entry"
_MAGIC = "pypto-ptoas-cache"
_LOC = re.compile(r' loc\("(?:[^"\\]|\\.)*":\d+:\d+\)')


@dataclass(frozen=True, slots=True)
class CachedOutput:
    """What one ptoas run produced for one unit: its C++ (before :func:`ptoas_stage.finish_cpp`) and log."""

    cpp: str
    log: str


@lru_cache(maxsize=16)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    del size, mtime_ns  # part of the memo key only: a replaced file is hashed again
    return cachefs.sha256_file(Path(path))


def _digest(path: Path) -> str:
    st = path.stat()
    return _file_digest(os.fspath(path), st.st_size, st.st_mtime_ns)


def identity(ptoas: Path) -> str:
    """What names the assembler: the sha256 of the executable given, and of what a wrapper runs.

    The pinned wheel's shim is a script naming the wheel's binary; the wheel's version and the binary's
    hash from the wheel's RECORD stand for that binary (no 20 MB hash per process). A ``PTOAS_ROOT``
    wrapper script adds the hash of ``bin/ptoas`` next to it when there is one.
    """
    from pypto.toolchain.ptoas import installed_wheel

    ptoas = Path(ptoas)
    parts = [_digest(ptoas)]
    with open(ptoas, "rb") as f:
        head = f.read(4096)
    if head.startswith(b"#!"):
        install = installed_wheel()
        if install is not None and os.fspath(install.binary).encode() in head:
            parts.append(f"wheel ptoas {install.version} {install.record_hash or _digest(install.binary)}")
        sibling = ptoas.parent / "bin" / "ptoas"
        if sibling.is_file():
            parts.append(_digest(sibling))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class PtoasCache:
    """The ptoas output cache of one assembler (see the module docstring); ``hits``/``misses`` count lookups."""

    def __init__(self, root: Path, ptoas: Path, max_bytes: int) -> None:
        self.root = Path(root)
        self.ident = identity(ptoas)
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0

    @classmethod
    def from_settings(cls, cache_dir: Path, ptoas: Path, max_mb: int) -> PtoasCache | None:
        """The cache under ``<cache_dir>/ptoas-cpp`` bounded to ``max_mb`` MB; None when ``max_mb`` is 0
        or the assembler cannot be read (the compile then runs ptoas as without a cache)."""
        if max_mb <= 0:
            return None
        try:
            return cls(Path(cache_dir) / DIR_NAME, ptoas, max_mb << 20)
        except OSError:
            return None

    def key(self, text: str, flags: Sequence[str]) -> str:
        h = hashlib.sha256()
        for part in (SCHEMA, self.ident, shlex.join(flags), text):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()

    def path(self, key: str) -> Path:
        return self.root / f"{key}{SUFFIX}"

    def get(self, key: str) -> CachedOutput | None:
        """The entry under ``key``; None on a miss. A damaged entry is removed (with a warning) and missed."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            self.misses += 1
            return None
        found = _decode(data)
        if found is None:
            cachefs.discard(path, "ptoas cache entry")
            self.misses += 1
            return None
        with contextlib.suppress(OSError):  # recently used: evicted last. The access time only: a hit
            st = os.stat(path)                # rewrites nothing (a CI cache sees no changed file)
            os.utime(path, ns=(time.time_ns(), st.st_mtime_ns))
        self.hits += 1
        return found

    def put(self, key: str, output: CachedOutput, *, evict: bool = True) -> None:
        """Publish an entry atomically, then (with ``evict``) evict down to the bound; a cache that cannot
        be written is skipped."""
        path = self.path(key)
        tmp = cachefs.temp_for(path)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(_encode(output))
            os.chmod(tmp, cachefs.FILE_MODE)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
            return
        if evict:
            self.prune()

    def prune(self) -> int:
        """Remove the least recently used entries until the directory fits ``max_bytes``; how many went."""
        cachefs.clean_orphans(self.root)
        entries = []
        with contextlib.suppress(OSError), os.scandir(self.root) as it:
            for e in it:
                if e.name.endswith(SUFFIX) and not e.name.startswith("."):
                    with contextlib.suppress(OSError):
                        st = e.stat()
                        entries.append((max(st.st_atime_ns, st.st_mtime_ns), st.st_size, e.path))
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed += 1
            total -= size
        return removed


def without_locs(pto: str) -> str:
    """``pto`` without its ``loc("file":line:col)`` attributes: what shapes ptoas' C++."""
    return _LOC.sub("", pto)


def _encode(output: CachedOutput) -> bytes:
    body = json.dumps({"cpp": output.cpp, "log": output.log}).encode()
    return f"{_MAGIC} {SCHEMA} {hashlib.sha256(body).hexdigest()}\n".encode() + body


def _decode(data: bytes) -> CachedOutput | None:
    header, sep, body = data.partition(b"\n")
    if not sep or header.decode(errors="replace").split() != [_MAGIC, SCHEMA, hashlib.sha256(body).hexdigest()]:
        return None
    try:
        doc = json.loads(body)
        return CachedOutput(doc["cpp"], doc["log"]) if isinstance(doc["cpp"], str) and doc["cpp"] else None
    except (ValueError, KeyError, TypeError):
        return None


# -- the assembler stage's side ----------------------------------------------------------------------
def lookup(cache: PtoasCache, ptoas: Path, out_dir: Path, unit: str,
           insert_sync: bool) -> tuple[str, PtoasResult | None]:
    """The key of ``ptoas/<unit>.pto`` as ptoas is fed it, and on a hit the unit's result, its
    ``ptoas/<unit>.cpp`` written from the entry (a bf16 unit's stand-in is written either way)."""
    src, standin = ptoas_stage.ptoas_input(out_dir, unit)
    key = cache.key(without_locs((out_dir / src).read_text()), ptoas_stage.ptoas_flags(insert_sync))
    found = cache.get(key)
    if found is None:
        return key, None
    cpp = Path(ptoas_file(unit, "cpp"))
    (out_dir / cpp).write_text(ptoas_stage.finish_cpp(found.cpp, standin, (out_dir / src).read_text()))
    argv = ptoas_stage.ptoas_argv(ptoas, src, cpp, insert_sync=insert_sync)
    # the log of the run that made the entry, byte for byte: an artifact is the same whether its units were
    # assembled here or reused (a cache hit is reported in the compile's log, not in the artifact)
    from pypto.toolchain.logging import get_logger

    get_logger("pypto.ptoas").debug("ptoas output reused from the cache", unit=unit, entry=key[:16])
    return key, PtoasResult(unit, True, found.log, "", f"cd <artifact dir> && {shlex.join(argv)}", 0.0, found.cpp)


def remember(cache: PtoasCache, keys: dict[str, str], results: list[PtoasResult]) -> None:
    """Store each successful unit's output under its key (failures are never cached), then evict once."""
    stored = False
    for r in results:
        if r.ok and r.cpp:
            cache.put(keys[r.unit], CachedOutput(r.cpp, r.log), evict=False)
            stored = True
    if stored:
        cache.prune()
