"""Upstream's ``pypto.runtime.debug``: re-running a compiled artifact directory after hand edits.

Floor: the runtime's; :func:`replay` and :func:`rebuild_kernel_cpp_from_pto` assemble and run, so their
submodules hand them on to :mod:`pypto.flows.replay` (declared in their ``_LAZY`` tables).
"""

from __future__ import annotations

from pypto.runtime.debug.pto_rebuild import rebuild_kernel_cpp_from_pto
from pypto.runtime.debug.replay import invalidate_binary_cache, replay
from pypto.runtime.debug.run_script_writer import write_run_script

__all__ = ["invalidate_binary_cache", "rebuild_kernel_cpp_from_pto", "replay", "write_run_script"]
