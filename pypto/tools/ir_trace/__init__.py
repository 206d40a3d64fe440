"""IR lowering trace: one self-contained HTML page of the per-pass diffs of a ``passes_dump/`` directory.

    pypto-ir-trace <passes_dump> [-o ir_trace.html] [--context N]
    python -m pypto.tools.ir_trace <passes_dump> [-o ir_trace.html] [--context N]

Reads ``00_frontend.py`` and the consecutive ``NN_after_<Pass>.py`` dumps (a gap, a duplicate index or a
malformed name is an error; a sibling ``NN_after_<Pass>.log`` is shown as that pass's warning) and writes a
deterministic page: per-pass +/- counts, changed / no-op filters, side-by-side or stacked diffs per
function, j/k to step through passes, copy a snapshot, light/dark theme, folding. Exit 0 on success, 1 on
an input or I/O error (``pypto-ir-trace: error: ...``), 2 on bad arguments.

Floor: the tools' (offline readers). Upstream's submodules: ``model`` (:class:`IRTraceError`, the
dumps), ``discovery`` (finding them), ``diff`` (per-pass diffs), ``html`` (the page), ``cli``.
"""

from pypto.tools.ir_trace.cli import PROG, main, write_atomic
from pypto.tools.ir_trace.diff import _hunks, build, diff_pass, split_functions
from pypto.tools.ir_trace.discovery import collect
from pypto.tools.ir_trace.html import render
from pypto.tools.ir_trace.model import Dump, IRTraceError, TraceError

__all__ = ["PROG", "Dump", "IRTraceError", "TraceError", "_hunks", "build", "collect", "diff_pass", "main", "render",
           "split_functions", "write_atomic"]
