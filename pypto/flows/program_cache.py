"""The on-disk cache of ``pypto.runtime.run(program, ...)`` compiles: a fresh process that runs an
unchanged Program again reuses the artifact of the previous compile (no passes, no codegen, no tool).

The key is the sha256 of the Program's serialization (:func:`pypto.ir.serialize`: every node and
its source spans, so a moved line is a different Program), the compile options ``run`` passes, and
what the ``@pl.jit`` cache keys on besides (pypto version and package contents, toolchain manifests,
the compile-relevant settings). Entries live with the jit cache's (``<cache_dir>/jit``), published,
verified and pruned by :mod:`pypto.jit.disk_cache`, and the same switch turns both off (the
``jit_cache`` setting, ``PYPTO_JIT_CACHE=0``, ``RunConfig(jit_cache=False)``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

SCHEMA = "program-1"


def entry_key(program: Any, options: tuple[Any, ...]) -> str | None:
    """The key of ``program`` compiled with ``options``; None when it cannot be serialized."""
    import pypto
    from pypto.ir.serialization import serialize
    from pypto.jit.disk_cache import manifest_digest, package_digest
    from pypto.toolchain.settings import compile_fingerprint

    try:
        data = serialize(program)
    except (TypeError, ValueError):
        return None
    parts = (SCHEMA, pypto.__version__, package_digest(), manifest_digest(), compile_fingerprint(), repr(options),
             hashlib.sha256(data).hexdigest())
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def lookup(program: Any, key: str, save_dir: Any) -> Any:
    """A CompiledProgram on a copy of the cached artifact (``save_dir`` or a new default dir); None on a miss."""
    from pypto.jit import disk_cache

    return disk_cache.lookup(program.name, key, save_dir, lambda: program)


def store(program: Any, key: str, compiled: Any) -> None:
    """Publish the artifact of a complete compile under ``key`` (errors are ignored)."""
    from pypto.jit import disk_cache

    disk_cache.store(program.name, key, Path(compiled.output_dir))
