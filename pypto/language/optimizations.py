"""``pl.split(mode)`` and ``pl.cross_core_slot(slot_num=N)``: entries of ``pl.at(..., optimizations=[...])``.

Both are accepted and recorded on the region. With ptoas 0.1.1 they do not change the generated code:
there are no cross-core pipes, so a mixed region's vector half runs on one AIV lane and data crosses
between cube and vector through GM (results are the same; see the limits tables of docs/compatibility.md).
"""

from __future__ import annotations

from pypto.errors import UserError
from pypto.ir.enums import SplitMode
from pypto.ir.stmt import CrossCoreSlot, Optimization, Split


def split(mode: SplitMode) -> Split:
    """Cross-core split mode of the outlined kernel (``pl.SplitMode.UP_DOWN`` / ``LEFT_RIGHT`` / ``NONE``)."""
    if not isinstance(mode, SplitMode):
        raise UserError(f"pl.split() takes a pl.SplitMode, got {mode!r}")
    return Split(mode)


def cross_core_slot(slot_num: int = 2) -> CrossCoreSlot:
    """Ring depth of the automatic cross-core pipeline."""
    if isinstance(slot_num, bool) or not isinstance(slot_num, int) or slot_num < 1:
        raise UserError(f"pl.cross_core_slot(slot_num=...) takes a positive integer, got {slot_num!r}")
    return CrossCoreSlot(slot_num)


__all__ = ["CrossCoreSlot", "Optimization", "Split", "cross_core_slot", "split"]
