"""Upstream's ``pypto.runtime.debug.replay``: :func:`replay` an artifact, :func:`invalidate_binary_cache`.

``python -m pypto.runtime.debug.replay DIR`` is the command line of every ``debug/run.py`` (without
inline inputs it needs a ``golden.py`` in ``DIR``). :func:`replay` and ``_main`` live in
:mod:`pypto.flows.replay` (``_LAZY``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pypto.artifact.directory import invalidate_binary_cache
from pypto.lazy import lazy_getattr

_LAZY = {"replay": "pypto.flows.replay", "_main": "pypto.flows.replay"}  # replay: the wrapper below imports it


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


def replay(work_dir: str | os.PathLike[str], *tensors: Any, config: Any = None, recompile: bool = True,
           rebuild_from_pto: bool = True, validate: bool = False) -> None:
    """Run an existing artifact directory again with ``tensors`` (see :func:`pypto.flows.replay.replay`)."""
    from pypto.flows.replay import replay as run_again

    run_again(work_dir, *tensors, config=config, recompile=recompile, rebuild_from_pto=rebuild_from_pto,
              validate=validate)


__all__ = ["invalidate_binary_cache", "replay"]

if __name__ == "__main__":
    sys.exit(__getattr__("_main")())
