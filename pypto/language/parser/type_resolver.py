"""Upstream's ``parser.type_resolver.TypeResolver``: an internal of upstream's frontend, not part of pypto's API.

pypto's frontend is built differently (:mod:`pypto.language.function_parser`); using the name
raises an UnsupportedFeatureError that says so and points at ``pl.function`` / ``pl.parse``.
"""

from pypto.language.unsupported import Unsupported

TypeResolver = Unsupported("pypto.language.parser.type_resolver.TypeResolver", "parser")

__all__ = ["TypeResolver"]
