"""MkDocs hook: a page's ``<!-- settings-table -->`` line becomes the table of every pypto setting.

The table is read from the pydantic model (``pypto.toolchain.settings_model.Settings``, whose fields
are built from ``settings_fields.FIELDS``): field name, environment variable, type, default and
description, so the page cannot drift from the code. A
field whose default comes from a factory needs a line in ``FACTORY_DEFAULTS``; a new one without it
fails the build instead of printing a value of the machine that built the site.
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

MARKER = "<!-- settings-table -->"

# Defaults computed when settings are resolved, described instead of evaluated on the build machine.
FACTORY_DEFAULTS = {
    "toolchain": "the newest manifest in `toolchains/` (`pypto toolchain list`)",
    "cache_dir": "`$XDG_CACHE_HOME/pypto`, else `~/.cache/pypto`",
}


def _type(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{v}`" for v in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        parts = [a for a in typing.get_args(annotation) if a is not type(None)]
        text = " \\| ".join(_type(a) for a in parts)
        return f"{text} (optional)" if len(parts) < len(typing.get_args(annotation)) else text
    if annotation is Path:
        return "path"
    return getattr(annotation, "__name__", str(annotation))


def _default(name: str, field: Any) -> str:
    if field.default_factory is not None:
        if name not in FACTORY_DEFAULTS:
            raise ValueError(f"settings table: field {name!r} has a default factory; describe it in "
                             f"FACTORY_DEFAULTS of {Path(__file__).name}")
        return FACTORY_DEFAULTS[name]
    if field.default is None:
        return "unset"
    if isinstance(field.default, bool):
        return f"`{str(field.default).lower()}`"
    return f"`{field.default}`"


def settings_table() -> str:
    """The Markdown table of every field of the settings model."""
    from pypto.toolchain.settings_model import Settings
    from pypto.toolchain.settings_sources import env_var

    rows = ["| setting | environment variable | type | default | description |", "|---|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        description = (field.description or "").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
        rows.append(f"| `{name}` | `{env_var(name)}` | {_type(field.annotation)} | {_default(name, field)} "
                    f"| {description} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Each line that is the marker alone becomes the table; a mention of it inside prose stays text."""
    lines = markdown.split("\n")
    if not any(line.strip() == MARKER for line in lines):
        return markdown
    table = settings_table()
    return "\n".join(table if line.strip() == MARKER else line for line in lines)
