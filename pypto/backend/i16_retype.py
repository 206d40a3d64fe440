"""ptoas 0.1.1's C++ for a unit with INT16 data, retyped to ``int16_t``.

0.1.1 plans i16 tiles with 2-byte elements but spells them in C++ as its fallback alias
``using T = float;``, types an ``!pto.ptr<i16>`` parameter ``__gm__ void*`` (and pointers offset from
it ``int32_t*``), and views it as ``GlobalTensor<float, ...>``. Every other element type pypto emits
has its own C++ name, so in such a unit ``T`` means i16: ``T`` becomes ``int16_t``, the i16 pointer
parameters (read from the ``.pto`` signature) ``__gm__ int16_t*``, the pointers offset from them
likewise, and the GlobalTensors built on them ``GlobalTensor<int16_t, ...>``.
"""

from __future__ import annotations

import re

from pypto.backend._ptr_retype import retype_pointers

_GT_USE = re.compile(r"\b(GT_\w+)\s+v\d+\s*=\s*\1\((v\d+)\s*,")
_T_ALIAS = re.compile(r"^(\s*)using T = float;", re.M)


def uses(pto: str) -> bool:
    return bool(re.search(r"\bi16\b|\dxi16\b", pto))


def retype_cpp(cpp: str, pto: str) -> str:
    """``cpp`` with its i16 tiles, pointers and GlobalTensors typed ``int16_t`` (unchanged without i16)."""
    if not uses(pto):
        return cpp
    lines, ptrs = retype_pointers(_T_ALIAS.sub(r"\1using T = int16_t;", cpp), pto, "i16", "void", "int16_t")
    views = {m.group(1) for ln in lines for m in [_GT_USE.search(ln)] if m and m.group(2) in ptrs}
    for i, ln in enumerate(lines):
        for gt in views:
            if re.match(rf"\s*using {gt} = GlobalTensor<float,", ln):
                lines[i] = ln.replace("GlobalTensor<float,", "GlobalTensor<int16_t,", 1)
    return "\n".join(lines) + ("\n" if cpp.endswith("\n") else "")
