"""compiled_meta.json records the run's parameters also for a program whose entry is an Opaque function."""

from __future__ import annotations

import json
from pathlib import Path

import pypto.language as pl
from pypto import ir


@pl.program
class OpaqueEntry:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.abs(x)
            out = pl.assemble(out, y, [0, 0])
        return out


def test_an_opaque_entry_records_the_orchestration_parameters(tmp_path: Path) -> None:
    ir.compile(OpaqueEntry, output_dir=str(tmp_path), skip_ptoas=True)
    meta = json.loads((tmp_path / "compiled_meta.json").read_text())
    assert [(p["name"], p["direction"], p["shape"], p["dtype"]) for p in meta["params"]] == [
        ("x", "In", [16, 16], "fp32"), ("out", "Out", [16, 16], "fp32")]
