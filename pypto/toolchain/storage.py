"""Telling a full or read-only disk from a bug: file-system errors on the user's paths become StorageError.

:func:`storage_error` turns an ``OSError`` whose cause is the machine (no space, quota, read-only file
system, permission) into a :class:`~pypto.errors.StorageError` naming the path and the cause.
:func:`storage_problem` looks at a directory after a tool failed (g++ and ``as`` report a full disk as
a truncated write or an assembler assertion): a read-only file system or almost no free space there
is named as the cause.
"""

from __future__ import annotations

import contextlib
import errno as _errno
import os
from collections.abc import Iterator
from pathlib import Path

from pypto.errors import StorageError

STORAGE_ERRNOS = frozenset({_errno.ENOSPC, _errno.EDQUOT, _errno.EROFS, _errno.EACCES, _errno.EPERM, _errno.EFBIG})
LOW_SPACE = 1 << 20  # bytes: a failed build with less free space than this blames the disk


def free_bytes(path: str | os.PathLike[str]) -> int | None:
    """Bytes available to us on the file system holding ``path`` (its nearest existing ancestor)."""
    st = _statvfs(Path(path))
    return None if st is None else st.f_bavail * st.f_frsize


def _statvfs(path: Path) -> os.statvfs_result | None:
    for p in (path, *path.parents):
        with contextlib.suppress(OSError):
            return os.statvfs(p)
    return None


def _describe(code: int | None, strerror: str, path: str) -> str:
    if code in (_errno.ENOSPC, _errno.EDQUOT, _errno.EFBIG):
        free = free_bytes(path)
        return f"{strerror.lower()} ({free} bytes free there)" if free is not None else strerror.lower()
    return strerror.lower()


def storage_error(exc: BaseException, path: str | os.PathLike[str] | None = None) -> StorageError | None:
    """The StorageError for ``exc`` when it is a no-space / read-only / permission OSError, else None."""
    if isinstance(exc, StorageError):
        return exc
    if not isinstance(exc, OSError) or exc.errno not in STORAGE_ERRNOS:
        return None
    where = exc.filename if exc.filename is not None else path
    if where is None:
        return None
    where = os.fspath(where)
    return StorageError(where, _describe(exc.errno, exc.strerror or os.strerror(exc.errno or 0), where),
                        errno=exc.errno)


def storage_problem(*paths: str | os.PathLike[str]) -> StorageError | None:
    """A StorageError when a directory in ``paths`` is on a read-only or (nearly) full file system."""
    for path in paths:
        st = _statvfs(Path(path))
        if st is None:
            continue
        if st.f_flag & os.ST_RDONLY:
            return StorageError(path, "read-only file system", errno=_errno.EROFS)
        free = st.f_bavail * st.f_frsize
        if free < LOW_SPACE:
            return StorageError(path, f"no space left on device ({free} bytes free there)", errno=_errno.ENOSPC)
    return None


_CAUSES = {"No space left on device": _errno.ENOSPC, "Disk quota exceeded": _errno.EDQUOT,
           "Read-only file system": _errno.EROFS}


def disk_full_text(output: str, path: str | os.PathLike[str]) -> StorageError | None:
    """A StorageError for ``path`` when a tool's ``output`` reports a full or read-only disk."""
    for text, code in _CAUSES.items():
        if text in output:
            return StorageError(path, f"{text.lower()} (reported by the tool)", errno=code)
    return None


@contextlib.contextmanager
def storage_errors(path: str | os.PathLike[str] | None = None) -> Iterator[None]:
    """Within the block, a no-space / read-only / permission OSError is re-raised as StorageError.

    ``path`` names the place when the error carries no file name; an OSError without errno (a short
    write) under ``path`` is a StorageError when that file system is full or read-only.
    """
    try:
        yield
    except OSError as exc:
        err = storage_error(exc, path)
        if err is None and path is not None and exc.errno is None:
            err = storage_problem(path)
        if err is None:
            raise
        raise err from exc
