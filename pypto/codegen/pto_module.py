"""One ``.pto`` module per kernel unit: the PTO walker wired to its rule table.

:class:`~pypto.codegen.pto_mlir.KernelCodegen` walks a function and asks a rule table for each tile op;
:data:`~pypto.codegen.pto_rules.RULES` holds the lowerings. Neither imports the other at run time; this
file, above both, hands the table to the walker.
"""

from __future__ import annotations

from pypto.artifact.model import KernelFunc
from pypto.codegen.pto_mlir import KernelCodegen
from pypto.codegen.pto_rules import RULES
from pypto.codegen.pto_types import DEVICE_SPEC
from pypto.ir.function import Function
from pypto.toolchain.prefix_map import PrefixMap


def emit_module(funcs: list[Function], *, backend_type: str, emit_loc: bool,
                file_map: PrefixMap = ()) -> tuple[str, list[KernelFunc]]:
    """One ``.pto`` module for the given kernel functions (a single kernel or a Group's members)."""
    bodies, models = [], []
    for f in funcs:
        text, model = KernelCodegen(f, emit_loc=emit_loc, rules=RULES, file_map=file_map).emit()
        bodies.append(text)
        models.append(model)
    spec = DEVICE_SPEC.get(backend_type, DEVICE_SPEC["Ascend910B"])
    head = f'module attributes {{"pto.device-spec" = "{spec}"}} {{'
    return "\n".join([head, *bodies, "}"]) + "\n", models
