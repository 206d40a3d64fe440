"""ptoas 0.1.1's C++ for a non-finite float constant, made C++ that compiles.

0.1.1 prints an ``arith.constant`` of +-inf or NaN (of any float type) as the bare names ``Inff`` and
``NaNf`` (``float v5 = -Inff;``, ``half v5 = NaNf;``), which no header declares, so g++ stops on the
kernel. They become ``__builtin_inff()`` and ``__builtin_nanf("")``: the same float constants, folded at
compile time, converted to the destination type as any float initializer is. The sign ptoas prints in
front stays where it is.
"""

from __future__ import annotations

import re

_NAMES = {"Inff": "__builtin_inff()", "NaNf": '__builtin_nanf("")'}
_TOKEN = re.compile(r"(?<![\w.\"])(Inff|NaNf)(?![\w\"])")


def fix_cpp(cpp: str) -> str:
    """``cpp`` with ptoas' ``Inff`` / ``NaNf`` constants spelled as g++ builtins (unchanged without them)."""
    if "Inff" not in cpp and "NaNf" not in cpp:
        return cpp
    return _TOKEN.sub(lambda m: _NAMES[m.group(1)], cpp)
