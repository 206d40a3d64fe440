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

FUNC_SIG = re.compile(r"func\.func\s+@([\w$.]+)\s*\((.*?)\)\s*(?:->|\{|attributes)", re.S)
CPP_FUNC = re.compile(r"(AICORE\s+void\s+)([\w$]+)\s*\(([^)]*)\)")
PTR_OFFSET = re.compile(r"__gm__\s+[\w:]+\s*\*\s*(v\d+)\s*=\s*(v\d+)\s*\+")
_GT_USE = re.compile(r"\b(GT_\w+)\s+v\d+\s*=\s*\1\((v\d+)\s*,")
_T_ALIAS = re.compile(r"^(\s*)using T = float;", re.M)


def uses(pto: str) -> bool:
    return bool(re.search(r"\bi16\b|\dxi16\b", pto))


def _i16_params(pto: str) -> dict[str, list[int]]:
    """Function name -> positions of its ``!pto.ptr<i16>`` parameters."""
    out = {}
    for name, params in FUNC_SIG.findall(pto):
        parts = [p for p in params.split(",") if ":" in p]
        out[name] = [i for i, p in enumerate(parts) if re.search(r"!pto\.ptr<\s*i16\s*>", p)]
    return out


def _retype_signature(m: re.Match[str], positions: dict[str, list[int]], ptrs: set[str]) -> str:
    params = m.group(3).split(",")
    for i in positions.get(m.group(2), ()):
        if i < len(params):
            name = params[i].split("*")[-1].strip()
            params[i] = re.sub(r"__gm__\s+void\s*\*", "__gm__ int16_t*", params[i])
            ptrs.add(name)
    return m.group(1) + m.group(2) + "(" + ",".join(params) + ")"


def retype_cpp(cpp: str, pto: str) -> str:
    """``cpp`` with its i16 tiles, pointers and GlobalTensors typed ``int16_t`` (unchanged without i16)."""
    if not uses(pto):
        return cpp
    ptrs: set[str] = set()
    cpp = CPP_FUNC.sub(lambda m: _retype_signature(m, _i16_params(pto), ptrs), cpp)
    cpp = _T_ALIAS.sub(r"\1using T = int16_t;", cpp)
    lines = cpp.splitlines()
    for i, ln in enumerate(lines):  # offset pointers, in order
        m = PTR_OFFSET.search(ln)
        if m and m.group(2) in ptrs:
            ptrs.add(m.group(1))
            lines[i] = re.sub(r"__gm__\s+[\w:]+\s*\*", "__gm__ int16_t*", ln, count=1)
    views = {m.group(1) for ln in lines for m in [_GT_USE.search(ln)] if m and m.group(2) in ptrs}
    for i, ln in enumerate(lines):
        for gt in views:
            if re.match(rf"\s*using {gt} = GlobalTensor<float,", ln):
                lines[i] = ln.replace("GlobalTensor<float,", "GlobalTensor<int16_t,", 1)
    return "\n".join(lines) + ("\n" if cpp.endswith("\n") else "")
