"""On-disk (L2) cache of ``@pl.jit`` compiles: a fresh process reuses the artifact of an identical compile.

An entry is the artifact directory of one complete compile (``compiled_meta.json`` present), stored
as ``<cache_dir>/jit/<program>-<key>/``. A hit copies it to where the compile would have written
(``save_kernels_dir``, else a new ``build_output/<program>_<timestamp>``): users see the same
artifacts as after a compile, and nobody writes into an entry. The key covers the in-memory
specialization key, the sources and referenced globals of the kernel and every jit kernel it calls,
the pypto version and package contents, the toolchain manifests, the compile-relevant settings and
the platform. Entries are published with an atomic rename, so concurrent processes only ever see
complete ones; a corrupt or incomplete entry is discarded and recompiled. ``PYPTO_JIT_CACHE=0`` (or
``RunConfig(jit_cache=False)``) bypasses the cache.
"""

from __future__ import annotations

import ast
import contextlib
import enum
import hashlib
import inspect
import os
import shutil
import tempfile
import textwrap
import types
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import pypto
from pypto.artifact import is_complete

SCHEMA = "1"
MAX_ENTRIES = 256  # least recently used entries beyond this are removed (~0.3 MB each)
_SIMPLE = (type(None), bool, int, float, complex, str, bytes, enum.Enum)
_PACKAGE = Path(pypto.__file__).resolve().parent


class Uncacheable(Exception):
    """The kernel references a value whose effect on the compile cannot be fingerprinted."""


def cache_root() -> Path:
    """``<cache_dir>/jit``, next to the simulator build cache ``<cache_dir>/sim``."""
    from pypto.runtime import build

    return build.cache_root().parent / "jit"


def enabled(config: Any) -> bool:
    """``config.jit_cache`` if set, else the ``jit_cache`` setting (``PYPTO_JIT_CACHE``, default on)."""
    explicit = getattr(config, "jit_cache", None)
    if explicit is not None:
        return bool(explicit)
    from pypto.toolchain.settings import jit_cache_enabled

    return jit_cache_enabled()


# -- key ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def package_digest() -> str:
    """sha256 of the pypto package files that shape a compile (the simulator's C++ has its own cache)."""
    h = hashlib.sha256(pypto.__version__.encode() + b"\0")
    skip = _PACKAGE / "runtime" / "sim"
    files = []
    for dirpath, dirnames, filenames in os.walk(_PACKAGE):
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and Path(dirpath, d) != skip]
        files += [Path(dirpath, f) for f in filenames if not f.endswith((".pyc", ".so"))]
    for path in sorted(files):
        h.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


@lru_cache(maxsize=1)
def manifest_digest() -> str:
    """sha256 of every toolchain manifest (wheel: ``pypto/_toolchains``; checkout: ``toolchains/``)."""
    h = hashlib.sha256()
    for folder in (_PACKAGE / "_toolchains", _PACKAGE.parent / "toolchains"):
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _value_text(value: Any, seen: set[int]) -> str:
    """A deterministic text for a global the kernel names (Uncacheable if there is none)."""
    if getattr(type(value), "__pypto_jit__", False):  # a @pl.jit kernel (JITFunction)
        return f"jit {value.kind} {value.auto_scope} {value.level!r}\n" + _function_text(value.func, seen)
    if isinstance(value, types.ModuleType):
        return _module_text(value)
    if isinstance(value, _SIMPLE):
        return f"{type(value).__qualname__} {value!r}"
    if isinstance(value, tuple | list | frozenset):
        items = sorted(_value_text(v, seen) for v in value) if isinstance(value, frozenset) else \
            [_value_text(v, seen) for v in value]
        return f"{type(value).__name__}({', '.join(items)})"
    module = getattr(value, "__module__", None) or type(value).__module__
    if isinstance(value, type | types.FunctionType | types.BuiltinFunctionType) and module.split(".")[0] in (
            "pypto", "builtins", "math", "numpy"):
        return f"{module}.{getattr(value, '__qualname__', value)}"  # covered by the package digest / versions
    if isinstance(value, types.FunctionType):
        return _function_text(value, seen)
    text = repr(value)
    if module.split(".")[0] == "pypto" and " at 0x" not in text:
        return f"{type(value).__qualname__} {text}"  # e.g. pl.dynamic("M")
    raise Uncacheable(f"global of type {type(value).__qualname__}")


def _module_text(module: types.ModuleType) -> str:
    """pypto modules by name (the package digest covers them); others also by their file's contents, since
    the kernel may reach jit kernels or constants through them (``helpers.tile_add(...)``)."""
    path = getattr(module, "__file__", None)
    if module.__name__.split(".")[0] == "pypto" or not path:
        return f"module {module.__name__}"
    try:
        return f"module {module.__name__} {hashlib.sha256(Path(path).read_bytes()).hexdigest()}"
    except OSError as exc:
        raise Uncacheable(f"cannot read module {module.__name__}") from exc


def _function_text(func: Any, seen: set[int]) -> str:
    """Source (with file and line, which ``loc()`` records) plus the globals and free variables it names."""
    if id(func) in seen:
        return f"<recursive {func.__qualname__}>"
    seen.add(id(func))
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        raise Uncacheable(f"no source for {func!r}") from exc
    text = "".join(lines)
    env = dict(func.__globals__)
    cells = func.__closure__ or ()
    with contextlib.suppress(ValueError):  # an empty cell: the name is not bound yet
        env.update({n: c.cell_contents for n, c in zip(func.__code__.co_freevars, cells, strict=True)})
    parts = [f"{inspect.getsourcefile(func)}:{first}", text]
    parts += [f"{n} = {_value_text(env[n], seen)}" for n in _free_names(text) if n in env]
    return "\n".join(parts)


def _free_names(text: str) -> list[str]:
    """Names a function reads but does not bind (parameters and assigned names are local)."""
    tree = ast.parse(textwrap.dedent(text))
    loads, bound = set(), {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else bound).add(node.id)
    return sorted(loads - bound)


def entry_key(jit_func: Any, memory_key: tuple, config: Any) -> str | None:
    """The L2 key of one specialization, or None if it cannot be cached (see :class:`Uncacheable`)."""
    from pypto.toolchain.settings import compile_fingerprint

    try:
        closure = _function_text(jit_func.func, set())
    except Uncacheable:
        return None
    parts = (SCHEMA, pypto.__version__, package_digest(), manifest_digest(), compile_fingerprint(),
             repr(memory_key), jit_func.kind, repr(jit_func.auto_scope), repr(jit_func.level), closure,
             str(getattr(config, "platform", None)))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


# -- entries -----------------------------------------------------------------------------------------
def _entry_dir(name: str, key: str) -> Path:
    return cache_root() / f"{name}-{key}"


def _valid(entry: Path) -> bool:
    """A complete, intact entry: every file matches the digest recorded when it was published, and the
    metadata, kernel_config and every source it names parse and exist."""
    from pypto.artifact import load_artifact
    from pypto.toolchain.cachefs import verify_tree

    if not is_complete(entry) or not verify_tree(entry):
        return False
    try:
        info = load_artifact(entry)
    except Exception:  # noqa: BLE001 - any parse failure means a corrupt entry
        return False
    return info.orchestration.is_file() and all(k.source.is_file() for k in info.kernels) and bool(info.meta)


def _discard(entry: Path) -> None:
    """Remove an entry atomically for readers (rename first), ignoring races with other processes."""
    trash = entry.with_name(f".trash-{entry.name}-{os.getpid()}")
    with contextlib.suppress(OSError):
        os.rename(entry, trash)
        shutil.rmtree(trash, ignore_errors=True)


def lookup(name: str, key: str, save_dir: Any, specialize: Callable[[], Any]) -> Any:
    """A copy of the cached artifact where the compile would have written it; None on a miss or a bad entry.

    The copy goes to ``save_dir`` if given, else to a new ``<output_base>/<name>_<timestamp>`` as
    ``ir.compile`` names its default output dirs. Its ``program`` (the specialized input Program) is
    rebuilt by ``specialize`` on first access.
    """
    entry = _entry_dir(name, key)
    if not entry.is_dir():
        return None
    if not _valid(entry):
        from pypto.toolchain.cachefs import warn

        warn("cache: jit cache entry is incomplete or does not match its recorded digests; removing it and "
              "recompiling", path=os.fspath(entry))
        _discard(entry)
        return None
    try:
        out = _copy_out(entry, Path(save_dir) if save_dir else None, name)
        compiled = _cached_program_class().from_dir(out)
    except (OSError, ValueError):
        return None
    compiled._specialize = specialize
    with contextlib.suppress(OSError):
        os.utime(entry)  # recently used: pruned last
    return compiled


def _copy_out(entry: Path, save_dir: Path | None, name: str) -> Path:
    from pypto.toolchain.cachefs import TREE_DIGEST, dir_lock

    ignore = shutil.ignore_patterns("*.so", "*.so.key", TREE_DIGEST)
    if save_dir is not None:
        save_dir.parent.mkdir(parents=True, exist_ok=True)
        with dir_lock(save_dir):
            shutil.copytree(entry, save_dir, dirs_exist_ok=True, ignore=ignore)
        return save_dir
    from datetime import datetime

    from pypto.toolchain.settings import output_base

    base = output_base()
    stamp = f"{name}_{datetime.now().strftime('%Y%m%d_%H%M%S')}"
    for n in range(1000):
        out = base / (stamp if n == 0 else f"{stamp}_{n}")
        try:
            shutil.copytree(entry, out, ignore=ignore)  # creating `out` claims the name
            return out
        except FileExistsError:
            continue
    raise OSError(f"no free output dir name under {base} for {stamp}")


@lru_cache(maxsize=1)
def _cached_program_class() -> type:
    from pypto.compiled import CompiledProgram

    class CachedCompiledProgram(CompiledProgram):
        """A CompiledProgram read back from the jit disk cache; ``program`` is re-specialized lazily."""

        _specialize: Callable[[], Any] | None = None
        _program: Any = None

        @property  # type: ignore[override]
        def program(self) -> Any:
            if self._program is None and self._specialize is not None:
                self._program = self._specialize()
            return self._program

        @program.setter
        def program(self, value: Any) -> None:
            self._program = value

    return CachedCompiledProgram


def store(name: str, key: str, artifact: Path) -> None:
    """Publish a copy of a complete artifact under the key (first writer wins; errors are ignored)."""
    entry = _entry_dir(name, key)
    if entry.is_dir() or not is_complete(artifact):
        return
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}.tmp-{os.getpid()}-", dir=entry.parent))
    except OSError:
        return
    from pypto.toolchain.cachefs import TREE_DIGEST, record_tree

    try:
        shutil.copytree(artifact, tmp, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("*.so", "*.so.key", TREE_DIGEST, ".*.tmp-*"))
        record_tree(tmp)  # verified on every lookup
        os.chmod(tmp, 0o755)  # mkdtemp made it 0700; a shared cache dir needs it readable
        os.rename(tmp, entry)  # atomic; fails if another process published first
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return
    prune(entry.parent)


def prune(root: Path, keep: int | None = None) -> int:
    """Remove the least recently used entries beyond ``keep`` (default MAX_ENTRIES); returns how many."""
    from pypto.toolchain.cachefs import clean_orphans

    clean_orphans(root)
    keep = MAX_ENTRIES if keep is None else keep
    try:
        entries = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    except OSError:
        return 0
    if len(entries) <= keep:
        return 0
    entries.sort(key=lambda p: p.stat().st_mtime if p.exists() else 0.0)
    stale = entries[: len(entries) - keep]
    for entry in stale:
        _discard(entry)
    return len(stale)
