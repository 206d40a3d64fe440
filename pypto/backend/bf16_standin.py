"""bf16 through ptoas 0.1.1: f16 stands in for bf16 in the assembler's input, the C++ is retyped back.

ptoas 0.1.1 verifies ``bf16`` but cannot lower it (``Failed to convert element type: bf16``). f16 has
the same width, the same 16x16 fractal and the same alignment, and 0.1.1's lowering of the ops a bf16
tile meets (tload/tstore, tmov, tmatmul[.acc], tcvt, the vector ops) depends on the element type
only through its width and its C++ name. So a unit that uses bf16 and no f16 goes to ptoas with every
``bf16`` spelled ``f16`` (``ptoas/<unit>.bf16-as-f16.pto``, the exact input of the run), and the C++
it returns has ``half`` replaced by ``bfloat16_t`` (tiles, ``GlobalTensor``, ``__gm__`` pointers).

The one f16-specific decision ptoas makes is on float constants: it rounds an ``f16`` literal to f16
and prints it with 6 significant digits. A bf16 constant is therefore written as its exact bf16
value, which must also be an f16 value (``|v|`` within f16's range); bf16 has 8 significant bits, so
the printed digits read back (through ``bfloat16_t``'s rounding) as the same bf16 value.
"""

from __future__ import annotations

import math
import re
import struct

from pypto.errors import UserError
from pypto.ir.dtypes import bf16_round, f16_exact

SUFFIX = "bf16-as-f16.pto"
NOTE = ("# bf16 stand-in: ptoas 0.1.1 cannot lower bf16, so this unit's .pto was fed to it with every bf16 "
        f"spelled f16 (the .{SUFFIX} file the command above names); pypto then retyped the C++ "
        "half -> bfloat16_t\n")

# a type token outside string literals: `dtype=bf16`, `<bf16>`, `: bf16`, `32x64xbf16`, `?xbf16`; the token
# first, its left context checked behind it (a leading literal is searched for; a leading lookbehind is
# tried at every position)
_TOKEN = r"{0}(?:(?<![\w%@$.]{0})|(?<=[\d?]x{0}))\b"
_BF16 = re.compile(_TOKEN.format("bf16"))
_F16 = re.compile(_TOKEN.format("f16"))
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_CONST = re.compile(r"(arith\.constant )(\S+)( : )bf16\b")
_HALF = re.compile(r"\bhalf\b")


def _outside_strings(text: str, fn) -> str:
    out, pos = [], 0
    for m in _STRING.finditer(text):
        out += [fn(text[pos:m.start()]), m.group(0)]
        pos = m.end()
    return "".join([*out, fn(text[pos:])])


def uses(text: str) -> tuple[bool, bool]:
    """(mentions bf16, mentions f16) as element types, string literals (``loc(...)`` paths) ignored."""
    code = _STRING.sub('""', text)
    return bool(_BF16.search(code)), bool(_F16.search(code))


def _literal_value(lit: str, where: str) -> float:
    """The bf16 value of an MLIR float literal: a decimal, or a hex bit pattern (``0x7F80``)."""
    try:
        if lit.lower().startswith("0x"):
            return struct.unpack("<f", struct.pack("<I", (int(lit, 16) & 0xFFFF) << 16))[0]
        return bf16_round(float(lit))
    except ValueError:
        raise UserError(f"{where}: cannot read the bf16 constant {lit}") from None


def _constant(m: re.Match[str], where: str) -> str:
    value = _literal_value(m.group(2), where)
    if math.isnan(value) or math.isinf(value):  # f16's own bit pattern, sign kept
        bits = (0x7E00 if math.isnan(value) else 0x7C00) | (0x8000 if math.copysign(1.0, value) < 0 else 0)
        return f"{m.group(1)}0x{bits:04X}{m.group(3)}f16"
    if not f16_exact(value):
        raise UserError(f"{where}: bf16 constant {m.group(2)} (bf16 value {value!r}) is outside the range f16 can "
                        "hold exactly; ptoas 0.1.1 lowers bf16 through an f16 stand-in, which would change it",
                        hint="keep the constant within f16's range (6.1e-05..65504), or apply it in FP32")
    return f"{m.group(1)}{value:.9e}{m.group(3)}f16"


def to_standin(text: str, where: str) -> str:
    """The module text ptoas 0.1.1 is fed for a bf16 unit; a UserError if the unit also uses f16."""
    bf16, f16 = uses(text)
    if bf16 and f16:
        raise UserError(f"{where} uses both bf16 and f16 element types: ptoas 0.1.1 cannot lower bf16, and "
                        "pypto assembles bf16 with f16 standing in for it, which needs a unit without f16",
                        hint="convert one of them at the kernel boundary (pl.cast through FP32), or put the "
                             "f16 work in its own kernel")

    def code(part: str) -> str:
        part = _CONST.sub(lambda m: _constant(m, where), part)
        return _BF16.sub("f16", part)
    return _outside_strings(text, code)


def retype_cpp(cpp: str) -> str:
    """ptoas' C++ for a stand-in unit with its f16 (``half``) retyped to ``bfloat16_t``."""
    return _HALF.sub("bfloat16_t", cpp)
