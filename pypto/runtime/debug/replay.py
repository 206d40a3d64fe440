"""Upstream's ``pypto.runtime.debug.replay``: :func:`replay` an artifact, :func:`invalidate_binary_cache`.

``python -m pypto.runtime.debug.replay DIR`` is the command line of every ``debug/run.py`` (without
inline inputs it needs a ``golden.py`` in ``DIR``). :func:`replay` and ``_main`` live in
:mod:`pypto.flows.replay` (``_LAZY``).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

_LAZY = {"replay": "pypto.flows.replay", "_main": "pypto.flows.replay"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def invalidate_binary_cache(work_dir: str | os.PathLike[str]) -> None:
    """Delete the built kernel and orchestration copies in ``work_dir`` (and its ranks' ``next_levels/``).

    Sources stay; the next run builds again from them. Builds are cached by the content of the
    source (plus flags, headers and compiler), so an edited ``.cpp`` is always rebuilt and an
    unchanged one is taken from the cache. Prints how many files were removed.
    """
    root = Path(work_dir)
    dirs = [root, *sorted(d for d in (root / "next_levels").glob("*") if d.is_dir())]
    removed = 0
    for base in dirs:
        for sub in ("kernels", "orchestration"):
            for built in sorted((base / sub).rglob("*")) if (base / sub).is_dir() else ():
                if built.is_file() and built.name.endswith((".so", ".so.key", ".o")):
                    built.unlink()
                    removed += 1
    print(f"[cpp->.so] invalidated {removed} cached binary file(s); cpp will rebuild" if removed
          else "[cpp->.so] no cached binaries to invalidate")


__all__ = ["invalidate_binary_cache", "replay"]  # noqa: F822 - the _LAZY names load on first use

if __name__ == "__main__":
    sys.exit(__getattr__("_main")())
