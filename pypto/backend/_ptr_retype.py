"""Retyping the GM pointer parameters of ptoas 0.1.1's C++ (shared by ``i16_retype`` and ``u32_retype``).

The parameters to retype are found in the ``.pto`` signature (``!pto.ptr<elem>``), their C++ spelling
is replaced in the ``AICORE void`` entry, and every pointer offset from one of them (``T* v2 = v1 +
...``, in order) is retyped too.
"""

from __future__ import annotations

import re

FUNC_SIG = re.compile(r"func\.func\s+@([\w$.]+)\s*\((.*?)\)\s*(?:->|\{|attributes)", re.S)
CPP_FUNC = re.compile(r"(AICORE\s+void\s+)([\w$]+)\s*\(([^)]*)\)")
PTR_OFFSET = re.compile(r"__gm__\s+[\w:]+\s*\*\s*(v\d+)\s*=\s*(v\d+)\s*\+")


def _ptr_params(pto: str, elem: str) -> dict[str, list[int]]:
    """Function name -> positions of its ``!pto.ptr<elem>`` parameters."""
    out = {}
    for name, params in FUNC_SIG.findall(pto):
        parts = [p for p in params.split(",") if ":" in p]
        out[name] = [i for i, p in enumerate(parts) if re.search(rf"!pto\.ptr<\s*{elem}\s*>", p)]
    return out


def retype_pointers(cpp: str, pto: str, elem: str, spelled: str, ctype: str) -> tuple[list[str], set[str]]:
    """The lines of ``cpp`` with its ``!pto.ptr<elem>`` parameters (spelled ``__gm__ <spelled>*`` by
    ptoas) and the pointers offset from them typed ``__gm__ <ctype>*``, and the names of those pointers."""
    positions, ptrs = _ptr_params(pto, elem), set()

    def signature(m: re.Match[str]) -> str:
        params = m.group(3).split(",")
        for i in positions.get(m.group(2), ()):
            if i < len(params):
                ptrs.add(params[i].split("*")[-1].strip())
                params[i] = re.sub(rf"__gm__\s+{spelled}\s*\*", f"__gm__ {ctype}*", params[i])
        return m.group(1) + m.group(2) + "(" + ",".join(params) + ")"

    lines = CPP_FUNC.sub(signature, cpp).splitlines()
    for i, ln in enumerate(lines):  # offset pointers, in order
        m = PTR_OFFSET.search(ln)
        if m and m.group(2) in ptrs:
            ptrs.add(m.group(1))
            lines[i] = re.sub(r"__gm__\s+[\w:]+\s*\*", f"__gm__ {ctype}*", ln, count=1)
    return lines, ptrs
