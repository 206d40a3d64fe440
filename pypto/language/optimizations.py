"""``pl.split(mode)`` and ``pl.cross_core_slot(slot_num=N)``: entries of ``pl.at(..., optimizations=[...])``.

Both are accepted and recorded on the region. With ptoas 0.1.1 they do not change the generated code:
there are no cross-core pipes, so a mixed region's vector half runs on one AIV lane and data crosses
between cube and vector through GM (results are the same; see the limits tables of docs/compatibility.md).
"""

from __future__ import annotations

import warnings

from pypto.errors import UserError
from pypto.ir.enums import SplitMode
from pypto.ir.stmt import CrossCoreSlot, Optimization, Split


def _check_slot_num(api: str, slot_num: object) -> None:
    if isinstance(slot_num, bool) or not isinstance(slot_num, int) or slot_num < 1:
        raise UserError(f"{api}(slot_num=...) takes a positive integer, got {slot_num!r}")


def split(mode: SplitMode, *, slot_num: int | None = None) -> Split:
    """Cross-core split mode of the outlined kernel (``pl.SplitMode.UP_DOWN`` / ``LEFT_RIGHT`` / ``NONE``).

    ``slot_num=`` is upstream's deprecated alias of ``pl.cross_core_slot(slot_num=N)``: accepted, validated,
    recorded on the entry, with a DeprecationWarning.
    """
    if not isinstance(mode, SplitMode):
        raise UserError(f"pl.split() takes a pl.SplitMode, got {mode!r}")
    if slot_num is not None:
        _check_slot_num("pl.split", slot_num)
        warnings.warn("pl.split(slot_num=...) is deprecated: use "
                      "optimizations=[pl.cross_core_slot(slot_num=N)] (with pl.split(mode) if a split is wanted)",
                      DeprecationWarning, stacklevel=2)
    return Split(mode, slot_num)


def cross_core_slot(slot_num: int = 2) -> CrossCoreSlot:
    """Ring depth of the automatic cross-core pipeline."""
    _check_slot_num("pl.cross_core_slot", slot_num)
    return CrossCoreSlot(slot_num)


__all__ = ["CrossCoreSlot", "Optimization", "Split", "cross_core_slot", "split"]
