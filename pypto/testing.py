"""``pypto.testing``: upstream's error-raising helpers for testing error handling.

Floor: above ``errors`` and ``span``. Upstream's module is its C++ binding's; each helper here raises
the exception a pypto error of that kind surfaces as in Python, with ``message`` as its text.
"""

from __future__ import annotations

from typing import NoReturn

from pypto.errors import InternalError, PyptoError, UserError
from pypto.span import Span


def raise_value_error(message: str) -> NoReturn:
    """Raise ``ValueError`` (our :class:`~pypto.errors.UserError`, which is one)."""
    raise UserError(message)


def raise_type_error(message: str) -> NoReturn:
    raise TypeError(message)


def raise_runtime_error(message: str) -> NoReturn:
    raise RuntimeError(message)


def raise_not_implemented_error(message: str) -> NoReturn:
    raise NotImplementedError(message)


def raise_index_error(message: str) -> NoReturn:
    raise IndexError(message)


def raise_generic_error(message: str) -> NoReturn:
    """Raise ``pypto.Error`` (:class:`~pypto.errors.PyptoError`)."""
    raise PyptoError(message)


def raise_assertion_error(message: str) -> NoReturn:
    raise AssertionError(message)


def raise_internal_error(message: str) -> NoReturn:
    raise InternalError(message)


def raise_internal_error_with_span(message: str, filename: str, line: int, col: int) -> NoReturn:
    """Raise :class:`~pypto.errors.InternalError` whose text starts with ``filename:line:col``."""
    from pypto.errors import internal_check_span

    internal_check_span(False, message, Span(filename, line, col))
    raise AssertionError("unreachable")


_KINDS = {"value": raise_value_error, "type": raise_type_error, "runtime": raise_runtime_error,
          "not_implemented": raise_not_implemented_error, "index": raise_index_error,
          "generic": raise_generic_error, "assertion": raise_assertion_error, "internal": raise_internal_error}


def rethrow_with_message(kind: str, original: str, replacement: str) -> NoReturn:
    """Raise an error of ``kind`` with text ``original``, catch it and raise the same type with ``replacement``."""
    raiser = _KINDS.get(kind)
    if raiser is None:
        raise ValueError(f"unknown error kind {kind!r}; use one of {', '.join(_KINDS)}")
    try:
        raiser(original)
    except Exception as exc:  # noqa: BLE001 - rethrown as its own type
        raise type(exc)(replacement) from exc
    raise AssertionError("unreachable")
