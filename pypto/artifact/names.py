"""Names that become file names or emitted symbols: one rule, checked before anything is written.

A kernel's or program's name, a ``pl.at(..., name_hint=...)``, a ``@pl.jit`` function's ``__name__``
and a ``FILE::NAME`` target end up as ``.pto`` / ``.cpp`` file names inside the artifact directory,
as default output directory names, as MLIR symbols (``func.func @name``) and as C++ function names.
:func:`check_symbol` is the rule for all of them: an ASCII identifier ``[A-Za-z_][A-Za-z0-9_]*`` of at
most :data:`MAX_LENGTH` characters that is not a C/C++ keyword (so no path separator, no ``..``,
nothing empty, nothing non-ASCII). :func:`contained` is the second line of defence where artifact
files are written: a path that resolves outside its directory is refused.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from pypto.errors import UserError

if TYPE_CHECKING:
    from pypto.span import Span

MAX_LENGTH = 128  # a file name holds the symbol plus suffixes (_incore_0, _aiv, .pto) within 255 bytes
RULE = f"an ASCII identifier [A-Za-z_][A-Za-z0-9_]* of at most {MAX_LENGTH} characters, not a C++ keyword"
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# the emitted kernels and orchestrations are C++: a function may not be called like a keyword
CXX_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires restrict return short signed sizeof static static_assert static_cast struct switch
template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
wchar_t while xor xor_eq
""".split())


class InvalidNameError(UserError):
    """A name that would become a file name or an emitted symbol breaks :data:`RULE`."""


def symbol_problem(name: object) -> str | None:
    """Why ``name`` is not a valid symbol, or None when it is."""
    if not isinstance(name, str):
        return f"it is a {type(name).__name__}, not a string"
    if not name:
        return "it is empty"
    if "/" in name or "\\" in name or ".." in name:
        return "it contains a path separator or '..'"
    if not name.isascii():
        return "it contains non-ASCII characters"
    if _SYMBOL.fullmatch(name) is None:
        bad = [c for c in name if not (c.isalnum() or c == "_")]
        return f"it contains {bad[0]!r}" if bad else "it starts with a digit"
    if len(name) > MAX_LENGTH:
        return f"it is {len(name)} characters long"
    if name in CXX_KEYWORDS:
        return "it is a C++ keyword"
    return None


def check_symbol(name: object, what: str, span: Span | None = None, *,
                 error: type[UserError] = InvalidNameError) -> str:
    """``name`` itself when it is a valid symbol; else ``error`` naming ``what``, the name and the rule.

    ``what`` says where the name came from (``"pl.at(name_hint=...)"``, ``"@pl.program class"``); the
    error is located at ``span`` (the definition) when given.
    """
    problem = symbol_problem(name)
    if problem is None:
        return name  # type: ignore[return-value]
    raise error(f"{what} {name!r} cannot name a kernel or an artifact file: {problem}", span,
                hint=f"use {RULE} (it becomes a file name, an MLIR symbol and a C++ function name)")


def contained(root: str | os.PathLike[str], rel: str | os.PathLike[str]) -> Path:
    """``root / rel``, refused (InvalidNameError) when it resolves outside ``root``.

    The second line of defence behind :func:`check_symbol`: every name is checked before anything is
    written, so this only fires when a name reached a writer unchecked.
    """
    base = os.path.realpath(root)
    path = os.path.realpath(os.path.join(base, rel))
    if path != base and not path.startswith(base.rstrip(os.sep) + os.sep):
        raise InvalidNameError(f"refusing to write {os.fspath(rel)!r}: it resolves to {path}, outside the "
                               f"artifact directory {base}",
                               hint=f"a kernel or program name must be {RULE}")
    return Path(root) / rel


def check_program(program: object) -> None:
    """Every name of an ``ir.Program`` that reaches a file or a symbol: the program's, each function's and
    each scope's ``name_hint`` (outlined kernels are named after it), located at their definitions."""
    from pypto.ir.stmt import preorder

    check_symbol(program.name, "program name", program.span)  # type: ignore[attr-defined]
    for func in program.functions:  # type: ignore[attr-defined]
        check_symbol(func.name, "function name", func.span)
        for stmt in preorder(func.body):
            hint = getattr(stmt, "name_hint", "")
            if hint:
                check_symbol(hint, "name_hint", stmt.span)
