"""A precompiled header (g++ ``.gch``) of the generated kernels' prelude, so a kernel build skips parsing the
simulator's tile-ISA headers (~0.15 s of the ~0.45 s of CPU one kernel's g++ takes).

What is precompiled is the prelude every generated kernel source starts with (:data:`PRELUDE`: ``<cstdint>``,
the ``__gm__``/``__aicore__`` fallbacks, ``<pto/pto-inst.hpp>``, ``tensor.h``, ``intrinsic.h``), and only a
source that starts with exactly that text (after its ``//`` comment lines), has no extra include
directories and no ``tensor.h``/``intrinsic.h`` of its own next to it is built with it (``-include``): the
preprocessor then sees the same macros and headers in the same order as without it, the prelude of the
source itself being a no-op the second time (every header is ``#pragma once``, the macros are
``#ifndef``-guarded). g++ checks a ``.gch`` against the compiler and the command line's flags and macros
and parses the headers itself when they differ; the core-type macro (``-D__DAV_VEC__``/``-D__DAV_CUBE__``)
is named by no header, so one ``.gch`` per platform serves both core types. The object is the same,
byte for byte (``tests/runtime/test_kernel_pch.py``).

Where it lives: ``<cache dir>/sim/pch-<platform>/prelude-<key>.hpp`` and its ``.gch`` (~38 MB), the key
covering the flags, the simulator's headers (content), the include dir and the compiler, as every build
key does (:func:`pypto.runtime.build.kernel_pch`); ``python -m pypto.runtime.prebuild`` puts one in the
install's prebuilt dir. It is self-healing like every cached object: published atomically with its
sha256, verified before its first use in a process (in the background while the program compiles:
hashing 38 MB takes ~0.05 s), a damaged one is removed and rebuilt, a build with it that fails is redone
without it (and the ``.gch`` dropped if that one succeeds), and a ``.gch`` g++ cannot build is remembered
(``.failed``) so no later run tries again for that key. A kernel's cache key never includes the
``.gch``: an object built with it and one built without are the same object.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from pypto.errors import ToolchainError
from pypto.toolchain import cachefs

# The generated kernel prelude (pypto.backend.kernel_wrapper.HEADER without its two comment lines and
# ``using namespace pto;``; tests/runtime/test_kernel_pch.py keeps the two equal).
PRELUDE = """\
#include <cstdint>

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#ifdef __CPU_SIM
#define __aicore__
#else
#define __aicore__ [aicore]
#endif
#endif

#include <pto/pto-inst.hpp>
#include "tensor.h"
#include "intrinsic.h"

"""
_PRELUDE = PRELUDE.encode()
_QUOTED = ("tensor.h", "intrinsic.h")  # found next to the source first: a source with its own would differ
FAILED_SUFFIX = ".failed"
GCH_SUFFIX = ".gch"

_lock = threading.Lock()
_ready: dict[str, Future[Path | None]] = {}  # hpp path -> its verified (or built) header, once per process


def eligible(text: bytes, source: Path, include_dirs: tuple[Path, ...] = ()) -> bool:
    """True when the kernel source ``text`` (at ``source``) builds the same with the precompiled prelude."""
    if include_dirs:
        return False
    body = text
    while body.startswith(b"//"):
        end = body.find(b"\n")
        if end < 0:
            return False
        body = body[end + 1:]
    if not body.startswith(_PRELUDE):
        return False
    return not any(os.path.lexists(source.parent / name) for name in _QUOTED)


def gch_of(hpp: Path) -> Path:
    return hpp.with_name(hpp.name + GCH_SUFFIX)


def header(hpp: Path, build: Callable[[Path], object] | None,
           prebuilt: Callable[[], Path | None] = lambda: None) -> Path | None:
    """The header to ``-include`` (``hpp``, or the install's copy ``prebuilt()`` names) once its ``.gch`` is verified,
    building ``hpp``'s with ``build(gch)`` when there is none; None when it cannot be had (a build that
    failed, a full disk) or there is none and ``build`` is None (then a later caller may still build it).
    Once per process and path: concurrent callers wait for the first; never raises."""
    key = os.fspath(hpp)
    with _lock:
        fut = _ready.get(key)
        owner = fut is None
        if owner:
            fut = _ready[key] = Future()
    if not owner:
        return fut.result()
    result = None
    try:
        result = _obtain(hpp, build, prebuilt)
    except Exception as exc:  # noqa: BLE001 - a kernel then builds without it; the cause is logged
        cachefs.warn("kernel pch: not used", reason=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    if result is None and build is None:
        with _lock:
            _ready.pop(key, None)  # only looked for: a caller that may build tries again
    fut.set_result(result)
    return result


def _whole(hpp: Path) -> bool:
    """``hpp`` holds the prelude and its ``.gch`` matches its recorded digest."""
    try:
        return hpp.read_bytes() == _PRELUDE and cachefs.verified(gch_of(hpp))
    except OSError:
        return False


def _obtain(hpp: Path, build: Callable[[Path], object] | None, prebuilt: Callable[[], Path | None]) -> Path | None:
    gch = gch_of(hpp)
    if _whole(hpp):
        cachefs.mark_used(gch)
        return hpp
    installed = prebuilt()
    if installed is not None and _whole(installed):
        return installed
    failed = hpp.with_name(hpp.name + FAILED_SUFFIX)
    if build is None or failed.exists():
        return None
    if gch.exists() or cachefs.digest_path(gch).exists():
        cachefs.discard(gch, "kernel precompiled header")
    cachefs.ensure_dir(hpp.parent)
    cachefs.write_atomic(hpp, PRELUDE)
    try:
        build(gch)
    except ToolchainError as exc:  # g++ cannot precompile it here: remembered for this key, kernels build without
        cachefs.write_atomic(failed, str(exc))
        return None
    size = gch.stat().st_size
    cachefs.prune_lru(hpp.parent, GCH_SUFFIX, 2 * size, keep=gch)  # this key's and at most one other
    return hpp


def reject(hpp: Path) -> None:
    """A kernel failed with the header and built without it: the ``.gch`` goes, and is not built again for
    this key (a ``.failed`` marker, as for a ``.gch`` g++ cannot build)."""
    cachefs.discard(gch_of(hpp), "kernel precompiled header", "failed a build that succeeds without it")
    with contextlib.suppress(OSError):
        cachefs.write_atomic(hpp.with_name(hpp.name + FAILED_SUFFIX), "a kernel failed with it and built without it")
    with _lock:
        _ready.pop(os.fspath(hpp), None)


def forget() -> None:
    """Drop this process's memo of ready headers (tests)."""
    with _lock:
        _ready.clear()
