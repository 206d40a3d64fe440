"""First run on a fresh cache: parallel runtime objects, one build per file however many ask, progress line.

The laziness of the comm/DFX extras is tested in test_runtime_extras.py.
"""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

import pytest
from rt_marks import needs_gxx

from pypto.errors import ToolchainError
from pypto.runtime import build, native
from pypto.toolchain import cachefs


def _publish(out: Path, text: str) -> Path:
    """Write ``out`` the way the real builders do (digest recorded), so a later lookup trusts it."""
    tmp = cachefs.temp_for(out)
    tmp.write_text(text)
    return cachefs.publish(tmp, out)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_once_runs_a_build_once_for_concurrent_callers(tmp_path: Path) -> None:
    out = tmp_path / "x.so"
    calls: list[int] = []

    def slow() -> Path:
        calls.append(1)
        time.sleep(0.2)
        return _publish(out, "built")

    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(build._once(out, slow))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [1] and results == [out] * 4
    assert build._once(out, slow) == out and calls == [1]  # an existing file is not rebuilt


def test_once_reports_a_failure_to_every_waiter_and_retries_later(tmp_path: Path) -> None:
    out = tmp_path / "y.so"
    started = threading.Event()

    def failing() -> Path:
        started.set()
        time.sleep(0.1)
        raise ToolchainError("g++ said no")

    errors: list[str] = []

    def call() -> None:
        try:
            build._once(out, failing)
        except ToolchainError as exc:
            errors.append(str(exc))

    first = threading.Thread(target=call)
    first.start()
    started.wait()
    call()  # joins the build in flight
    first.join()
    assert len(errors) == 2 and all("g++ said no" in e for e in errors)
    assert build._once(out, lambda: _publish(out, "ok")) == out  # nothing stuck in flight


@needs_gxx
def test_runtime_library_builds_once_in_parallel_with_a_progress_line(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = build.compile_so

    def counting(argv: list[str], out: Path, what: str) -> Path:
        built.append(out.name)
        return real(argv, out, what)

    monkeypatch.setattr(build, "compile_so", counting)
    tty = _Tty()
    monkeypatch.setattr("sys.stderr", tty)
    with build.use_cache_dir(tmp_path / "fresh"):
        build.prebuild_core()  # the core object first (no platform needed), in the background ...
        build.prebuild_runtime("a2a3sim", "tensormap_and_ringbuffer")  # ... the library joins it ...
        lib = build.runtime_library("a2a3sim", "tensormap_and_ringbuffer")  # ... joined, not repeated
        assert lib.is_file() and lib.parent == tmp_path / "fresh" / "runtime"
        assert build.runtime_library("a2a3sim", "tensormap_and_ringbuffer") == lib
        objs = sorted(n.split("-")[0] for n in built if n.endswith(".o"))
        assert objs == ["core", "variant"]  # the variant source alone, the core in one object, no extras
        assert [n for n in built if n.endswith(".so")] == [lib.name]
        unity = next((tmp_path / "fresh" / "runtime" / "obj").glob("core-*.cpp")).read_text()
        assert '#include "scheduler.cpp"' in unity and '#include "capi.cpp"' in unity and "variant" not in unity
        assert "comm" not in unity and "dfx" not in unity and "extras" not in unity  # built only when needed
        assert "/" not in unity  # names only: no machine path in the cache
        before = len(built)
        a5 = build.runtime_library("a5sim", "host_build_graph")
        assert [n.split("-")[0] for n in built[before:] if n.endswith(".o")] == ["variant"]  # core object shared
        before = len(built)
        extras = build.runtime_extras()
        assert [n.split("-")[0] for n in built[before:]] == ["extras", extras.name]  # one object, one library
        extras_unity = next((tmp_path / "fresh" / "runtime" / "obj").glob("extras-*.cpp")).read_text()
        assert extras_unity.split() == [w for n in build.EXTRAS_SOURCES for w in ("#include", f'"{n}"')]
        assert build.runtime_extras() == extras and len(built) == before + 2
    for path, identity in ((lib, "a2a3sim/tensormap_and_ringbuffer"), (a5, "a5sim/host_build_graph")):
        assert native.load(path).identity == identity  # the variant object carries the pair
    lines = tty.getvalue().splitlines()
    assert lines[0].startswith("pypto: building sim runtime for a2a3sim/tensormap_and_ringbuffer (one-time, ~")
    assert lines[2].startswith("pypto: building sim runtime extras (comm tasks, DFX) (one-time, ~")
    assert len(lines) == 3  # one line per library actually built


def test_no_progress_line_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = io.StringIO()
    monkeypatch.setattr("sys.stderr", quiet)
    build._progress("pypto: building sim runtime")
    assert quiet.getvalue() == ""


def _twice():
    """A one-kernel program (y = x + x) for the build tests below."""
    import pypto.language as pl

    @pl.program
    class Twice:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
              ) -> pl.Tensor[[16, 16], pl.FP32]:
            t: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])
            return pl.store(pl.add(t, t), [0, 0], y)

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
                 ) -> pl.Tensor[[16, 16], pl.FP32]:
            y = self.k(x, y)
            return y

    return Twice


@needs_gxx
def test_background_prebuild_fills_the_cache_but_writes_no_so_into_the_artifact(tmp_path: Path) -> None:
    """A compile's prebuild only warms the build cache; the artifact's .so copies come with the first run."""
    import numpy as np

    from pypto import ir
    from pypto.artifact import load_artifact

    with build.use_cache_dir(tmp_path / "cache"):
        compiled = ir.compile(_twice(), output_dir=tmp_path / "out", platform="a2a3sim", dump_passes=False)
        build._prebuild_artifact(Path(compiled.output_dir), "a2a3sim")
        assert not list(Path(compiled.output_dir).rglob("*.so*"))
        assert list((tmp_path / "cache").rglob("*.so"))
        built = build.build_artifact(load_artifact(compiled.output_dir), "a2a3sim")
        assert built.orchestration.is_file() and list(Path(compiled.output_dir).rglob("*.so"))
    x = np.ones((16, 16), np.float32)
    assert np.allclose(compiled(x), 2 * x)


def test_once_rebuilds_a_cached_object_whose_digest_does_not_match(tmp_path: Path) -> None:
    """A truncated cached object is never handed out (it was dlopened before: SIGBUS)."""
    out = tmp_path / "lib.so"
    tmp = cachefs.temp_for(out)
    tmp.write_bytes(b"whole object")
    cachefs.publish(tmp, out)
    out.write_bytes(b"who")  # truncated behind the cache's back
    calls: list[int] = []

    def rebuild() -> Path:
        calls.append(1)
        t = cachefs.temp_for(out)
        t.write_bytes(b"whole object")
        return cachefs.publish(t, out)

    assert build._once(out, rebuild, "test object") == out
    assert calls == [1] and out.read_bytes() == b"whole object" and cachefs.verified(out)
    assert build._once(out, rebuild, "test object") == out and calls == [1]  # verified: reused


@needs_gxx
def test_built_objects_do_not_depend_on_where_the_artifact_lives(tmp_path: Path) -> None:
    """The cache key holds no path, so neither may the object (``__FILE__`` in PTO2_SCOPE, for one)."""
    from pypto import ir
    from pypto.artifact import load_artifact

    blobs = []
    for where in ("a/deeper/dir", "b"):
        with build.use_cache_dir(tmp_path / where / "cache"):
            compiled = ir.compile(_twice(), output_dir=tmp_path / where / "out", platform="a2a3sim",
                                  dump_passes=False)
            built = build.build_artifact(load_artifact(compiled.output_dir), "a2a3sim")
            blobs.append(built.orchestration.read_bytes())
    assert blobs[0] == blobs[1]


def test_a_jit_call_starts_the_core_before_compiling_and_only_on_a_miss(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    from types import SimpleNamespace

    import numpy as np

    import pypto.language as pl
    from pypto.jit import decorator
    from pypto.runtime import RunConfig

    @pl.jit
    def twice(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), pl.load(a, [0, 0], [16, 16])), [0, 0], out)
        return out

    order: list[str] = []
    monkeypatch.setattr(build, "prebuild_core", lambda: order.append("core"))
    monkeypatch.setattr(twice, "_compile", lambda metas, scalars, cfg: order.append("compile") or SimpleNamespace(output_dir=tmp_path))
    monkeypatch.setattr(decorator.disk_cache, "lookup", lambda *a, **k: None)
    a = np.ones((16, 16), np.float32)
    twice.compile(a, np.zeros_like(a), config=RunConfig(platform="a2a3sim"))
    twice.compile(a, np.zeros_like(a), config=RunConfig(platform="a2a3sim"))  # in-process hit: nothing
    twice.compile(a, np.zeros_like(a), config=RunConfig(platform="a2a3"))  # hardware: no sim runtime here
    assert order == ["core", "compile", "compile"]
