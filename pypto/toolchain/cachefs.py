"""Self-healing cache files: publish atomically with a recorded content hash, verify before use.

Every object pypto caches on disk (g++-built ``.so``/``.o`` files, the runtime library, jit cache
entries, the ptoas shim) goes through here:

- :func:`temp_for` names a private temp file next to the final path (``.<name>.tmp-<pid>-<rand>``);
- :func:`publish` records the sha256 of the finished temp file in ``<final>.sha256``, makes the file
  readable by group and others (a cache dir may be shared), then renames it into place; the object
  only ever appears complete, and its digest is on disk before it does;
- :func:`verified` checks an object against its recorded digest (memoized per inode, size and mtime,
  so a process hashes each object once); a missing, truncated, emptied or garbage object, or a
  missing or garbage digest, is *not* verified — callers rebuild it, after :func:`discard` removed it
  with a warning;
- :func:`clean_orphans` removes temp files and directories left by killed builds.

``tree_digest`` / ``record_tree`` / ``verify_tree`` do the same for a directory (a jit cache entry).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

DIGEST_SUFFIX = ".sha256"
TREE_DIGEST = ".pypto-digest"
TEMP_MARK = ".tmp-"
ORPHAN_AGE = 120.0  # seconds: a temp file this old whose owner process is gone is an orphan
STALE_AGE = 24 * 3600.0  # seconds: any temp file this old is an orphan (owner may be in another pid namespace)
FILE_MODE = 0o644
_verified: dict[tuple[str, int, int, int], bool] = {}
_cleaned: set[str] = set()


def ensure_dir(path: Path) -> Path:
    """``mkdir -p`` of a cache directory; a UserError naming the cache-dir setting when that fails."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from pypto.errors import UserError

        raise UserError(f"the cache directory {path} is not usable: {exc.strerror or exc}",
                        hint="set PYPTO_CACHE_DIR (or cache_dir in the config file) to a writable directory") from exc
    return path


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def digest_path(path: Path) -> Path:
    return path.with_name(path.name + DIGEST_SUFFIX)


# temp-name randomness without a system call per name: a private generator seeded from os.urandom
# (user code seeding the global ``random`` cannot make two processes agree), reseeded in a forked child
_names = random.Random()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_names.seed)


def temp_for(final: Path) -> Path:
    """A fresh private temp path in ``final``'s directory (same file system: the rename is atomic)."""
    return final.with_name(f".{final.name}{TEMP_MARK}{os.getpid()}-{_names.getrandbits(32):08x}{final.suffix}")


def _write_atomic(path: Path, text: str) -> None:
    tmp = temp_for(path)
    tmp.write_text(text)
    os.chmod(tmp, FILE_MODE)
    os.replace(tmp, path)


def publish(tmp: Path, final: Path, mode: int = FILE_MODE) -> Path:
    """Move the finished ``tmp`` to ``final`` atomically, digest first; returns ``final``."""
    digest = sha256_file(tmp)
    os.chmod(tmp, mode)
    _write_atomic(digest_path(final), digest + "\n")
    os.replace(tmp, final)
    st = final.stat()
    _verified[(os.fspath(final), st.st_ino, st.st_size, st.st_mtime_ns)] = True
    return final


def verified(path: Path) -> bool:
    """True when ``path`` exists and matches the digest recorded when it was published."""
    try:
        st = path.stat()
    except OSError:
        return False
    memo = (os.fspath(path), st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _verified.get(memo)
    if hit is not None:
        return hit
    try:
        recorded = digest_path(path).read_text().strip()
        ok = st.st_size > 0 and recorded == sha256_file(path)
    except (OSError, UnicodeDecodeError):
        ok = False
    _verified[memo] = ok
    return ok


def warn(event: str, **kw: object) -> None:
    from pypto.toolchain.logging import get_logger

    get_logger("pypto.cache").warning(event, **kw)


def discard(path: Path, what: str, reason: str = "does not match its recorded sha256") -> None:
    """Remove a bad cache object and its digest (with a warning); races with other processes are fine."""
    if path.exists() or digest_path(path).exists():
        warn(f"cache: {what} {reason}; removing and rebuilding it", path=os.fspath(path))
    for p in (path, digest_path(path)):
        with contextlib.suppress(OSError):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink()


def _owner_alive(name: str) -> bool:
    try:
        pid = int(name.split(TEMP_MARK, 1)[1].split("-", 1)[0])
    except (IndexError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def clean_orphans(folder: Path, *, force: bool = False) -> int:
    """Remove temp files/dirs of builds that were killed (once per process per folder); how many."""
    key = os.fspath(folder)
    if key in _cleaned and not force:
        return 0
    _cleaned.add(key)
    now = time.time()
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for e in entries:
        legacy = e.name.startswith("tmp") and e.name.endswith((".so", ".o"))  # mkstemp names of older pyptos
        if TEMP_MARK not in e.name and not e.name.startswith(".trash-") and not legacy:
            continue
        with contextlib.suppress(OSError):
            age = now - e.stat(follow_symlinks=False).st_mtime
            if age < STALE_AGE and (age < ORPHAN_AGE or _owner_alive(e.name)):
                continue
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path, ignore_errors=True)
            else:
                os.unlink(e.path)
            removed += 1
    return removed


# -- directories (jit cache entries) -----------------------------------------------------------------
def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every regular file under ``root`` (relative POSIX path -> digest), digest file excluded."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            if rel != TREE_DIGEST:
                out[rel] = sha256_file(path)
    return out


def record_tree(root: Path) -> None:
    """Write ``root/.pypto-digest`` (one ``<sha256>  <path>`` line per file)."""
    lines = [f"{d}  {rel}" for rel, d in sorted(tree_digest(root).items())]
    (root / TREE_DIGEST).write_text("\n".join(lines) + "\n")


def verify_tree(root: Path) -> bool:
    """True when ``root`` holds exactly the files its digest lists, with the recorded contents."""
    try:
        text = (root / TREE_DIGEST).read_text()
        recorded = dict(reversed(line.split("  ", 1)) for line in text.splitlines() if line)
        return bool(recorded) and recorded == tree_digest(root)
    except (OSError, UnicodeDecodeError, ValueError):
        return False


# -- artifact directory locks ------------------------------------------------------------------------
@contextlib.contextmanager
def dir_lock(folder: Path, *, shared: bool = False, create: bool = True) -> Iterator[None]:
    """Hold an advisory lock on the directory ``folder`` itself (exclusive: a writer; shared: a reader).

    The lock is a ``flock`` on the directory (no lock file: nothing is left next to it). A writer (a
    compile into an explicit output dir, ``create=True``) creates the directory first; a reader locks
    it only when it exists. Where the directory cannot be made, opened or locked (a file system
    without ``flock``), the block runs unlocked; the writer then reports why it cannot write.
    """
    import fcntl

    path = os.path.abspath(folder)
    held = _held_locks()
    if path in held:  # re-entered on this thread (e.g. a run inside a compile): already covered
        yield
        return
    fd = _open_dir(path, create)
    if fd is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        except OSError:
            os.close(fd)
            fd = None
    if fd is None:
        yield
        return
    held.add(path)
    try:
        yield
    finally:
        held.discard(path)
        os.close(fd)


def _open_dir(path: str, create: bool) -> int | None:
    if create:
        with contextlib.suppress(OSError):
            os.makedirs(path, exist_ok=True)
    try:
        return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None


_tls = threading.local()


def _held_locks() -> set[str]:
    if not hasattr(_tls, "held"):
        _tls.held = set()
    return _tls.held


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write a file so that readers see the old or the new contents, never a partial file."""
    from pypto.toolchain.files import text_bytes, write_file

    tmp = temp_for(path)
    try:
        write_file(tmp, data if isinstance(data, bytes) else text_bytes(data))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


PRUNE_GRACE_S = 600.0  # objects used this recently are never evicted


def mark_used(path: Path) -> None:
    """Mark a cached object as used (its access time only: a hit rewrites nothing), so it is evicted last."""
    with contextlib.suppress(OSError):
        st = path.stat()
        os.utime(path, ns=(time.time_ns(), st.st_mtime_ns))


def prune_lru(folder: Path, suffix: str, max_bytes: int, keep: Path | None = None) -> int:
    """Remove the least recently used ``*suffix`` objects of ``folder`` (with their digests) until it fits
    ``max_bytes``; how many went.

    ``keep`` and every object used in the last ``PRUNE_GRACE_S`` seconds stay: the sibling objects of one
    program, built in parallel, and objects another process is about to load are never evicted. Temp
    files (dot names) are left to :func:`clean_orphans`.
    """
    entries = []
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        for e in it:
            if e.name.endswith(suffix) and not e.name.startswith(".") and (keep is None or e.path != os.fspath(keep)):
                with contextlib.suppress(OSError):
                    st = e.stat()
                    entries.append((max(st.st_atime_ns, st.st_mtime_ns), st.st_size, Path(e.path)))
    total = sum(size for _, size, _ in entries)
    if keep is not None:
        with contextlib.suppress(OSError):
            total += keep.stat().st_size
    removed, recent = 0, time.time_ns() - int(PRUNE_GRACE_S * 1e9)
    for used, size, path in sorted(entries):
        if total <= max_bytes or used >= recent:
            break
        for p in (path, digest_path(path)):
            with contextlib.suppress(OSError):
                p.unlink()
        total, removed = total - size, removed + 1
    return removed
