"""``ErrorRenderer``: a frontend error as text with its source line and a caret (optionally coloured)."""

from __future__ import annotations

import sys

from pypto.errors import UserError


class ErrorRenderer:
    """Renders a :class:`~pypto.errors.UserError` the way pypto prints it (``file:line:col: error: ...``,
    the source line, a caret, the hint); with colour, the ``error:`` tag is bold red."""

    def __init__(self, use_color: bool | None = None) -> None:
        if use_color is None:
            from pypto.toolchain.settings import terminal_env

            use_color = sys.stderr.isatty() and not terminal_env().no_color
        self.use_color = use_color

    def render(self, error: UserError) -> str:
        text = error.render()
        if self.use_color:
            text = text.replace("error:", "\033[1;31merror:\033[0m", 1)
        return text


__all__ = ["ErrorRenderer"]
