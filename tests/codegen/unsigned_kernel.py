"""The one-kernel program the unsigned-dtype tests (UINT16 carrier, UINT32 rewrites) compile: ``x`` loaded as
``t``, then the test's statements, which store into ``o``."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def one_kernel(x: str, body: str, out: str) -> str:
    """DSL source of a program whose kernel takes ``x: <x>`` and ``o: pl.Out[<out>]`` and runs ``body``."""
    return f"""import pypto.language as pl

@pl.program
class R:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {x}, o: pl.Out[{out}]) -> {out}:
        t = pl.load(x, [0, 0], [16, 64])
        {body}
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {x}, o: pl.Out[{out}]) -> {out}:
        o = self.k(x, o)
        return o
"""


def compile_checked(src: str, platform: str) -> tuple[Any, list[Path]]:
    """``src`` compiled for ``platform`` and its ``.pto`` files, each checked against the ptoas 0.1.1 dialect
    when the checker is set up."""
    from ptocheck import checker, verify

    import pypto.language as pl
    from pypto import ir

    compiled = ir.compile(pl.parse(src), platform=platform)
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    if checker()[0] is not None:
        verify(*ptos)
    return compiled, ptos
