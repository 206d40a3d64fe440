"""Upstream's ``pypto.runtime.debug.run_script_writer``: :func:`write_run_script` (``<dir>/debug/run.py``).

Every compile writes that script already (the artifact directory's owner, :mod:`pypto.artifact`,
renders it); this writes it again, e.g. for other parameters or another default platform.
"""

from pypto.artifact.run_script import render_run_script, write_run_script

__all__ = ["render_run_script", "write_run_script"]
