"""DSL-only callables: the objects ``pld.*`` names are bound to (recognized by identity when parsing)."""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError


class Construct:
    """A ``pld`` construct; calling it as Python raises (it only has meaning inside a DSL body)."""

    __slots__ = ("name", "where")

    def __init__(self, name: str, where: str) -> None:
        self.name = name
        self.where = where

    def __call__(self, *_args: Any, **_kwargs: Any) -> Any:
        raise UserError(f"{self.name}() was called as plain Python; it is a construct of {self.where}",
                        hint=f"use {self.name} inside the body of {self.where} (the body is compiled, not run)")

    def __repr__(self) -> str:
        return self.name


def construct(name: str, where: str) -> Construct:
    return Construct(name, where)


KERNEL = "a @pl.jit.incore kernel"
HOST = "the @pl.jit.host orchestrator"
