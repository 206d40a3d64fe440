"""Name -> enum tables for ``pl.Level.X`` / ``pl.Role.X`` / ``pl.SplitMode.X`` / ``pl.FunctionType.X``
written in DSL source, and ``extract_enum_value`` reading one from an AST node."""

from __future__ import annotations

import ast
from typing import Any

from pypto.errors import ParserSyntaxError
from pypto.ir.enums import FunctionType, Level, Role, SplitMode

LEVEL_MAP: dict[str, Level] = dict(Level.__members__)
ROLE_MAP: dict[str, Role] = dict(Role.__members__)
SPLIT_MODE_MAP: dict[str, SplitMode] = dict(SplitMode.__members__)
FUNCTION_TYPE_MAP: dict[str, FunctionType] = dict(FunctionType.__members__)


def extract_enum_value(value: ast.expr, enum_map: dict[str, Any], enum_name: str, qualified: str) -> Any:
    """``pl.Level.HOST`` or ``Level.HOST`` (an attribute on a name ending in ``enum_name``) -> the member.

    Anything else, or an unknown member, is a ParserSyntaxError naming ``qualified``."""
    if not isinstance(value, ast.Attribute):
        raise ParserSyntaxError(f"expected {qualified}.<name>")
    base = value.value
    base_name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else None
    if base_name != enum_name:
        raise ParserSyntaxError(f"expected {qualified}.<name>")
    if value.attr not in enum_map:
        raise ParserSyntaxError(f"unknown {qualified} value '{value.attr}'",
                                hint=f"one of: {', '.join(sorted(enum_map))}")
    return enum_map[value.attr]


__all__ = ["FUNCTION_TYPE_MAP", "LEVEL_MAP", "ROLE_MAP", "SPLIT_MODE_MAP", "extract_enum_value"]
