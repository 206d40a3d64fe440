"""Call-site argument directions (``ir.ArgDirection``) and ``make_call``, which records them.

A cross-function call keeps its per-argument directions in ``Call.attrs['arg_directions']``; a call
built without them has none until the DeriveCallDirections pass fills them in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pypto.ir.enums import ArgDirection
from pypto.ir.expr import Call, Expr, GlobalVar
from pypto.ir.types import Type, UnknownType
from pypto.span import Span

input = ArgDirection.Input  # noqa: A001 (upstream's spelling)
output = ArgDirection.Output
output_existing = ArgDirection.OutputExisting
inout = ArgDirection.InOut
no_dep = ArgDirection.NoDep
scalar = ArgDirection.Scalar


def make_call(op: GlobalVar | str, args: Sequence[Expr], *, directions: Sequence[ArgDirection] | None = None,
              kwargs: dict[str, Any] | None = None, type: Type | None = None,  # noqa: A002
              span: Span | None = None) -> Call:
    """A Call of ``op`` (usually a function's GlobalVar) with ``directions`` as its ``arg_directions``.

    ``directions`` must have one entry per argument (ValueError otherwise); None leaves them unset."""
    args = tuple(args)
    attrs: dict[str, Any] = {}
    if directions is not None:
        dirs = tuple(directions)
        if len(dirs) != len(args):
            raise ValueError(f"make_call: directions length ({len(dirs)}) must match args length ({len(args)})")
        attrs["arg_directions"] = dirs
    return Call(op, args, dict(kwargs or {}), attrs, type if type is not None else UnknownType(),
                span=span or Span.unknown())


__all__ = ["ArgDirection", "inout", "input", "make_call", "no_dep", "output", "output_existing", "scalar"]
