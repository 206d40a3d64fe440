"""``get_class_source_lines``: the source lines of a class and the file line it starts on."""

from __future__ import annotations

import inspect

from pypto.errors import UserError


def get_class_source_lines(cls: type) -> tuple[list[str], int]:
    """``(lines, first_line)`` of ``cls``'s definition (decorators included), as ``inspect`` finds it.

    A class whose source cannot be read (defined in a REPL or ``exec``) is a UserError."""
    try:
        return inspect.getsourcelines(cls)
    except (OSError, TypeError) as exc:
        raise UserError(f"cannot read the source of class {cls.__qualname__}: {exc}",
                        hint="define the @pl.program class in a .py file") from None


__all__ = ["get_class_source_lines"]
