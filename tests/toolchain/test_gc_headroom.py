"""gc_headroom: the collector's first-generation threshold is raised while a compile (or a DSL parse) runs and restored
after it, also when compiles nest or fail; a collector switched off (threshold 0) is left alone."""

from __future__ import annotations

import gc
import threading

import pytest

from pypto.toolchain import gc_headroom as gh


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_raised_inside_and_restored_after(thresholds):
    with gh.gc_headroom():
        assert gc.get_threshold() == (gh.COMPILE_GEN0_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_nested_uses_restore_once_the_outermost_ends(thresholds):
    with gh.gc_headroom():
        with gh.gc_headroom():
            pass
        assert gc.get_threshold()[0] == gh.COMPILE_GEN0_THRESHOLD
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_when_the_block_raises(thresholds):
    with pytest.raises(RuntimeError), gh.gc_headroom():
        raise RuntimeError("compile failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_or_a_disabled_collector_is_kept(thresholds):
    gc.set_threshold(0, 10, 10)
    with gh.gc_headroom():
        assert gc.get_threshold() == (0, 10, 10)
    gc.set_threshold(10 * gh.COMPILE_GEN0_THRESHOLD, 5, 5)
    with gh.gc_headroom():
        assert gc.get_threshold() == (10 * gh.COMPILE_GEN0_THRESHOLD, 5, 5)
    assert gc.get_threshold() == (10 * gh.COMPILE_GEN0_THRESHOLD, 5, 5)


def test_overlapping_threads_restore_the_original(thresholds):
    entered, release = threading.Barrier(2), threading.Event()

    def compile_like() -> None:
        with gh.gc_headroom():
            entered.wait()
            release.wait()

    t = threading.Thread(target=compile_like)
    t.start()
    with gh.gc_headroom():
        entered.wait()
    assert gc.get_threshold()[0] == gh.COMPILE_GEN0_THRESHOLD  # the other compile still runs
    release.set()
    t.join()
    assert gc.get_threshold() == (700, 10, 10)


def test_compile_runs_under_the_raised_threshold(thresholds, monkeypatch, tmp_path):
    import pypto.language as pl
    from pypto import driver

    seen = []
    real = driver._compile_locked

    def spy(program, opts):
        seen.append(gc.get_threshold()[0])
        return real(program, opts)

    monkeypatch.setattr(driver, "_compile_locked", spy)

    @pl.program
    class Tiny:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            return a

    driver.compile(Tiny, output_dir=tmp_path / "out", skip_ptoas=True, dump_passes=False)
    assert seen == [gh.COMPILE_GEN0_THRESHOLD]
    assert gc.get_threshold() == (700, 10, 10)


def test_program_parse_runs_under_the_raised_threshold(thresholds, monkeypatch):
    import pypto.language as pl
    from pypto.language import programs

    seen = []
    real = programs.parse_class

    def spy(*args, **kwargs):
        seen.append(gc.get_threshold()[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(programs, "parse_class", spy)

    @pl.program
    class Tiny:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
            return a

    assert Tiny.name == "Tiny"
    assert seen == [gh.COMPILE_GEN0_THRESHOLD]
    assert gc.get_threshold() == (700, 10, 10)
