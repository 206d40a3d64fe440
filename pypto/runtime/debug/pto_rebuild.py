"""Upstream's ``pypto.runtime.debug.pto_rebuild``: splice re-assembled ``.pto`` bodies into kernel sources.

:func:`rebuild_kernel_cpp_from_pto` runs ptoas, so it lives in :mod:`pypto.flows.replay` (``_LAZY``).
"""

from __future__ import annotations

import os

from pypto.artifact.directory import PTOAS_BODY_BEGIN, PTOAS_BODY_END
from pypto.lazy import lazy_getattr

_LAZY = {"rebuild_kernel_cpp_from_pto": "pypto.flows.replay"}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


def rebuild_kernel_cpp_from_pto(work_dir: str | os.PathLike[str]) -> list[str]:
    """Re-assemble edited ``ptoas/*.pto`` files into their kernel sources (:mod:`pypto.flows.replay`)."""
    from pypto.flows.replay import rebuild_kernel_cpp_from_pto as rebuild

    return rebuild(work_dir)


__all__ = ["PTOAS_BODY_BEGIN", "PTOAS_BODY_END", "rebuild_kernel_cpp_from_pto"]
