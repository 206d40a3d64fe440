"""Upstream's ``pypto.language.parser.text_parser``: printed IR text back to IR (``pl.parse`` & co)."""

from pypto.language.text import loads, loads_program, parse, parse_program

__all__ = ["loads", "loads_program", "parse", "parse_program"]
