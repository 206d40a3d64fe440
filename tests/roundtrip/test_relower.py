"""``ir.compile`` accepts its own output: a lowered program, or any pass dump re-parsed with
``pl.loads``, compiles to the same kernels and orchestration as the source program.

For every example kernel (discovered like ``test_examples_roundtrip``), the source is compiled once
with dumps; then ``ir.compile(kernel.lower(...))`` and ``ir.compile(pl.loads(<each dump>))`` must give
byte-identical ``kernels/**`` (.pto) and ``orchestration/**`` files. Source locations are not
emitted, since a re-parsed dump's spans point into the dump file. ``skip_ptoas`` keeps it fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_examples_roundtrip import _example_cases, example_args

import pypto.language as pl
from pypto import ir
from pypto.driver import lower
from pypto.ir.function import Program
from pypto.ir.options import VerificationLevel


def _code(out: Path) -> dict[str, str]:
    """The generated code of an artifact dir: kernels/** and orchestration/**."""
    return {p.relative_to(out).as_posix(): p.read_text() for sub in ("kernels", "orchestration")
            for p in sorted((out / sub).rglob("*")) if p.is_file()}


def _compile(program: Program, out: Path, level: VerificationLevel | None = None, dumps: bool = False) -> Any:
    return ir.compile(program, output_dir=out, skip_ptoas=True, emit_source_loc=False, dump_passes=dumps,
                      verification_level=level, platform="a2a3sim")


def _source_and_lowered(target: Any, module: Any, name: str) -> tuple[Program, Program]:
    if isinstance(target, Program):
        return target, lower(target)
    args = example_args(module, name, target)
    bound = target._bind(args, {})
    return target.specialize(*target._classify(bound)), target.lower(*args)


@pytest.mark.parametrize("module,name,target", _example_cases())
def test_lowered_program_and_every_dump_compile_to_the_same_code(module, name, target, tmp_path):
    source, lowered = _source_and_lowered(target, module, name)
    first = _compile(source, tmp_path / "src", dumps=True)
    want = _code(first.output_dir)
    assert any(k.endswith(".pto") for k in want), "the example produced no kernel"
    dumps = sorted((first.output_dir / "passes_dump").glob("*.py"))
    assert len(dumps) >= 49, [d.name for d in dumps]

    again = _compile(lowered, tmp_path / "lowered")
    assert again.program is lowered  # CompiledProgram.program is the input as given
    assert _code(again.output_dir) == want, "ir.compile(kernel.lower(...)) differs from the first compile"
    for dump in dumps:
        got = _code(_compile(pl.loads(str(dump)), tmp_path / dump.stem).output_dir)
        assert got == want, f"ir.compile(pl.loads('{dump.name}')) differs from the first compile"


@pytest.mark.parametrize("module,name,target", _example_cases())
def test_relowering_under_roundtrip_verification(module, name, target, tmp_path):
    """Every pass re-run on a lowered program (and on the last dump) prints and re-parses to itself."""
    source, lowered = _source_and_lowered(target, module, name)
    first = _compile(source, tmp_path / "src", dumps=True)
    want = _code(first.output_dir)
    last = sorted((first.output_dir / "passes_dump").glob("*.py"))[-1]
    for key, program in (("lowered", lowered), ("last_dump", pl.loads(str(last)))):
        got = _compile(program, tmp_path / key, level=VerificationLevel.ROUNDTRIP)
        assert _code(got.output_dir) == want, key


def test_relowering_a_doc_style_kernel_is_not_doubly_allocated(tmp_path):
    """The getting-started pattern: three 64 KiB tiles fit the 192 KiB UB only if the second pipeline
    run reuses the first run's buffers instead of allocating new ones beside them."""
    import numpy as np

    @pl.jit
    def add_kernel(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            ta = pl.load(a, [0, 0], [128, 128])
            tb = pl.load(b, [0, 0], [128, 128])
            pl.store(pl.add(ta, tb), [0, 0], out)
        return out

    x = np.zeros((128, 128), np.float32)
    lowered = add_kernel.lower(x, x, x)
    twice = lower(lowered)
    kernel = next(f for f in twice.functions if f.is_incore)
    allocs = [s for s in ir_stmts(kernel) if getattr(getattr(s, "value", None), "op", None) == "tile.alloc"]
    assert len(allocs) == 2, [s.var.name for s in allocs]
    again = _compile(lowered, tmp_path / "x", level=VerificationLevel.ROUNDTRIP)
    assert (again.output_dir / "kernels").is_dir()


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_compiled_lowered_program_runs(platform, tmp_path, monkeypatch):
    """The getting-started pattern end to end: ir.compile(kernel.lower(...)) dispatched on the sim."""
    import numpy as np

    from pypto.runtime import RunConfig

    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "cache"))

    @pl.jit
    def axpb(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(pl.mul(a, 3.0), b)
        return out

    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal((128, 128)).astype(np.float32) for _ in range(2))
    lowered = axpb.lower(a, b, np.zeros_like(a))
    compiled = ir.compile(lowered, platform=platform, output_dir=tmp_path / "art")
    assert compiled.program is lowered
    out = np.zeros_like(a)
    compiled(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, 3.0 * a + b, rtol=1e-5, atol=1e-5)


def ir_stmts(func: Any) -> list[Any]:
    from pypto.ir.stmt import flatten

    return flatten(func.body)
