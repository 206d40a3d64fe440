"""One ``.pto`` module per kernel unit: the PTO walker wired to its rule table.

:class:`~pypto.codegen.pto_mlir.KernelCodegen` walks a function and asks a rule table for each tile op;
:data:`~pypto.codegen.pto_rules.RULES` holds the lowerings. Neither imports the other at run time; this
file, above both, hands the table to the walker.
"""

from __future__ import annotations

import re

from pypto.artifact.model import KernelFunc
from pypto.codegen.pto_mlir import KernelCodegen
from pypto.codegen.pto_rules import RULES
from pypto.codegen.pto_types import DEVICE_SPEC, TOOLCHAIN
from pypto.errors import UserError
from pypto.ir.function import Function
from pypto.toolchain.prefix_map import PrefixMap


def emit_module(funcs: list[Function], *, backend_type: str, emit_loc: bool,
                file_map: PrefixMap = (), allocs_at_first_use: bool = False) -> tuple[str, list[KernelFunc]]:
    """One ``.pto`` module for the given kernel functions (a single kernel or a Group's members);
    ``allocs_at_first_use``: ptoas plans the memory (the PTOAS planner), so each ``alloc_tile`` comes where
    its tile is first used rather than at the function's head."""
    bodies, models = [], []
    for f in funcs:
        text, model = KernelCodegen(f, emit_loc=emit_loc, rules=RULES, file_map=file_map,
                                    allocs_at_first_use=allocs_at_first_use).emit()
        bodies.append(text)
        models.append(model)
    _check_one_half_type(funcs, bodies)
    spec = DEVICE_SPEC.get(backend_type, DEVICE_SPEC["Ascend910B"])
    head = f'module attributes {{"pto.device-spec" = "{spec}"}} {{'
    return "\n".join([head, *bodies, "}"]) + "\n", models


# an element type token outside string literals (loc paths): `dtype=bf16`, `<f16>`, `: f16`, `64xbf16`.
# The token comes first and its left context is checked behind it: a pattern that starts with a literal is
# searched by scanning for that literal, where a leading lookbehind is tried at every position of the text.
_HALF_TYPES = {t: re.compile(rf'{t}(?:(?<![\w%@$.]{t})|(?<=[\d?]x{t}))\b') for t in ("bf16", "f16")}
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _check_one_half_type(funcs: list[Function], bodies: list[str]) -> None:
    """A unit may use bf16 or f16, not both: ptoas 0.1.1 gets bf16 units with f16 standing in for bf16."""
    seen: dict[str, Function] = {}
    for f, text in zip(funcs, bodies, strict=True):
        if "f16" not in text:  # both types spell it ("bf16" too); the regexes cannot match without it
            continue
        code = None
        for t, pat in _HALF_TYPES.items():
            # blanking string literals only removes tokens, so a token must show in the raw text first
            if t in seen or not pat.search(text):
                continue
            code = _STRING.sub('""', text) if code is None else code
            if pat.search(code):
                seen.setdefault(t, f)
        if len(seen) == 2:
            where = (f"kernel '{f.name}' uses" if seen["bf16"] is seen["f16"] else
                     f"kernels '{seen['bf16'].name}' (bf16) and '{seen['f16'].name}' (f16), assembled as one unit, use")
            raise UserError(f"{where} both BF16 and FP16 data: {TOOLCHAIN} cannot lower bf16, so pypto assembles a "
                            "bf16 kernel with f16 standing in for bf16 and retypes the C++ back, which needs a unit "
                            "without f16", f.span,
                            hint="keep one 16-bit float type per kernel: convert the other at the kernel boundary "
                                 "(pl.cast through FP32), or move the FP16 work into its own kernel")
