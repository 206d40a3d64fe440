"""The one-kernel program the unsigned-dtype tests (UINT16 carrier, UINT32 rewrites) compile: ``x`` loaded as
``t``, then the test's statements, which store into ``o``."""

from __future__ import annotations


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
