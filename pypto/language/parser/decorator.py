"""Upstream's ``pypto.language.parser.decorator``: the ``@pl.function`` / ``@pl.program`` decorators."""

from pypto.language.decorators import InlineFunction, function, inline, program

__all__ = ["InlineFunction", "function", "inline", "program"]
