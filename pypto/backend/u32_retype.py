"""ptoas 0.1.1's C++ for a unit with UINT32 tensors, its pointers typed ``uint32_t*``.

0.1.1 types an ``!pto.ptr<ui32>`` parameter ``__gm__ int32_t*`` (and the pointers offset from it), its
ui32 tiles ``int32_t``, but views the pointer as ``GlobalTensor<uint32_t, ...>``, whose constructor
takes a ``uint32_t*``: g++ refuses the conversion, and the kernel entry passes a ``uint32_t*`` to the
``int32_t*`` parameter. The ui32 pointer parameters (read from the ``.pto`` signature) and the pointers
offset from them become ``__gm__ uint32_t*``; the tiles keep ptoas' ``int32_t`` (loads and stores copy
the same bits).
"""

from __future__ import annotations

import re

from pypto.backend.i16_retype import CPP_FUNC, FUNC_SIG, PTR_OFFSET


def uses(pto: str) -> bool:
    return "!pto.ptr<ui32>" in pto.replace(" ", "")


def _u32_params(pto: str) -> dict[str, list[int]]:
    """Function name -> positions of its ``!pto.ptr<ui32>`` parameters."""
    out = {}
    for name, params in FUNC_SIG.findall(pto):
        parts = [p for p in params.split(",") if ":" in p]
        out[name] = [i for i, p in enumerate(parts) if re.search(r"!pto\.ptr<\s*ui32\s*>", p)]
    return out


def _retype_signature(m: re.Match[str], positions: dict[str, list[int]], ptrs: set[str]) -> str:
    params = m.group(3).split(",")
    for i in positions.get(m.group(2), ()):
        if i < len(params):
            ptrs.add(params[i].split("*")[-1].strip())
            params[i] = re.sub(r"__gm__\s+int32_t\s*\*", "__gm__ uint32_t*", params[i])
    return m.group(1) + m.group(2) + "(" + ",".join(params) + ")"


def retype_cpp(cpp: str, pto: str) -> str:
    """``cpp`` with its ui32 pointer parameters and their offsets typed ``uint32_t*`` (unchanged without ui32)."""
    if not uses(pto):
        return cpp
    ptrs: set[str] = set()
    cpp = CPP_FUNC.sub(lambda m: _retype_signature(m, _u32_params(pto), ptrs), cpp)
    lines = cpp.splitlines()
    for i, ln in enumerate(lines):  # offset pointers, in order
        m = PTR_OFFSET.search(ln)
        if m and m.group(2) in ptrs:
            ptrs.add(m.group(1))
            lines[i] = re.sub(r"__gm__\s+[\w:]+\s*\*", "__gm__ uint32_t*", ln, count=1)
    return "\n".join(lines) + ("\n" if cpp.endswith("\n") else "")
