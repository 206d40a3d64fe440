"""The on-chip vector memory (UB) of a generated kernel's buffers, counted before ptoas 0.1.1 runs.

:func:`ub_overflows` sums, per function of a ``.pto`` module, the bytes of the ``pto.alloc_tile`` ops at its
top level (each rounded up to 32; buffers allocated inside a loop or branch body are left out) and names the
functions whose sum is past the capacity the module's ``pto.device-spec`` selects. That is what ptoas' PlanMemory
needs when it gives each buffer bytes of its own; it shares bytes between tiles of one dtype that are not live
together when space runs short, so a sum over capacity may still fit. The driver therefore cuts a kernel
(:mod:`pypto.passes._ub_cut`) only when ptoas itself fails with ``ub overflow, requires N bits while M bits
avaliable!``, and names the kernel with these bytes when it cannot be cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pypto.codegen.pto_types import DEVICE_SPEC

# the UB capacity PlanMemory takes for each device spec pypto emits (ptoas 0.1.1)
UB_BYTES = {DEVICE_SPEC["Ascend910B"]: 192 * 1024, DEVICE_SPEC["Ascend950"]: 248 * 1024}
_ALIGN = 32
_ELEMENT_BYTES = {"f32": 4, "i32": 4, "ui32": 4, "f16": 2, "bf16": 2, "i16": 2, "ui16": 2, "i8": 1, "ui8": 1}
_SPEC = re.compile(r'"pto\.device-spec"\s*=\s*"([^"]+)"')
_FUNC = re.compile(r"^  func\.func @([\w.$-]+)\(", re.M)
# a top-level alloc: indented by exactly four spaces (one level inside ``func.func``)
_ALLOC = re.compile(r"^    %[\w.$-]+ = pto\.alloc_tile\b[^:\n]*: !pto\.tile_buf<loc=ub, dtype=(\w+), rows=(\d+), "
                    r"cols=(\d+)", re.M)


@dataclass(frozen=True)
class UbOverflow:
    """A kernel function whose top-level UB buffers need ``needed`` bytes of the ``available``."""

    func: str
    needed: int
    available: int


def ub_bytes(func_text: str) -> int:
    """The UB bytes of the top-level ``alloc_tile`` ops in one function's text (each rounded up to 32)."""
    total = 0
    for dtype, rows, cols in _ALLOC.findall(func_text):
        size = int(rows) * int(cols) * _ELEMENT_BYTES.get(dtype, 4)
        total += -(-size // _ALIGN) * _ALIGN
    return total


def ub_overflows(pto: str) -> list[UbOverflow]:
    """The functions of a ``.pto`` module whose UB buffers exceed its device spec's capacity."""
    spec = _SPEC.search(pto)
    available = UB_BYTES.get(spec.group(1)) if spec else None
    if available is None:
        return []
    heads = list(_FUNC.finditer(pto))
    out = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(pto)
        needed = ub_bytes(pto[m.start():end])
        if needed > available:
            out.append(UbOverflow(m.group(1), needed, available))
    return out


__all__ = ["UB_BYTES", "UbOverflow", "ub_bytes", "ub_overflows"]
