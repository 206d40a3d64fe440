"""ptoas 0.1.1's C++ for a unit with UINT32 tensors, its pointers typed ``uint32_t*``.

0.1.1 types an ``!pto.ptr<ui32>`` parameter ``__gm__ int32_t*`` (and the pointers offset from it), its
ui32 tiles ``int32_t``, but views the pointer as ``GlobalTensor<uint32_t, ...>``, whose constructor
takes a ``uint32_t*``: g++ refuses the conversion, and the kernel entry passes a ``uint32_t*`` to the
``int32_t*`` parameter. The ui32 pointer parameters (read from the ``.pto`` signature) and the pointers
offset from them become ``__gm__ uint32_t*``; the tiles keep ptoas' ``int32_t`` (loads and stores copy
the same bits).
"""

from __future__ import annotations

from pypto.backend._ptr_retype import retype_pointers


def uses(pto: str) -> bool:
    return "!pto.ptr<ui32>" in pto.replace(" ", "")


def retype_cpp(cpp: str, pto: str) -> str:
    """``cpp`` with its ui32 pointer parameters and their offsets typed ``uint32_t*`` (unchanged without ui32)."""
    if not uses(pto):
        return cpp
    lines, _ = retype_pointers(cpp, pto, "ui32", "int32_t", "uint32_t")
    return "\n".join(lines) + ("\n" if cpp.endswith("\n") else "")
