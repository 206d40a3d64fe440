"""Call-site argument directions (``pl.adir.*``): each marker is the matching ``ir.ArgDirection`` value.

They are stored on a cross-function call's ``attrs['arg_directions']`` and printed back as
``attrs={"arg_directions": [pl.adir.input, ...]}``. The callee's own contract is ``pl.Out[T]`` /
``pl.InOut[T]`` on its parameters.
"""

from __future__ import annotations

from pypto.ir.enums import ArgDirection

input = ArgDirection.Input  # noqa: A001 (upstream's spelling; shadows the builtin in this module only)
output = ArgDirection.Output
output_existing = ArgDirection.OutputExisting
inout = ArgDirection.InOut
no_dep = ArgDirection.NoDep
scalar = ArgDirection.Scalar

NAME_TO_DIRECTION: dict[str, ArgDirection] = {
    "input": input, "output": output, "output_existing": output_existing, "inout": inout, "no_dep": no_dep,
    "scalar": scalar,
}
DIRECTION_TO_NAME: dict[ArgDirection, str] = {v: k for k, v in NAME_TO_DIRECTION.items()}

__all__ = ["DIRECTION_TO_NAME", "NAME_TO_DIRECTION", "ArgDirection", "inout", "input", "no_dep", "output",
           "output_existing", "scalar"]
