"""End to end through the DSL: a warm second process starts no ptoas or g++ (jit disk cache + build cache);
artifacts bound to another platform or runtime are rejected by a ChipWorker with the upstream messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from rt_marks import needs_gxx

import pypto.language as pl
from pypto import ir
from pypto.runtime import ChipWorker, RunConfig
from pypto.toolchain.ptoas import find_ptoas

pytestmark = [needs_gxx, pytest.mark.sim, pytest.mark.ptoas,
              pytest.mark.skipif(find_ptoas() is None, reason="needs the pinned ptoas")]

# A @pl.jit kernel run in a fresh interpreter; every process it spawns is recorded.
SCRIPT = textwrap.dedent('''
    import json, subprocess, sys
    spawned = []
    _init = subprocess.Popen.__init__
    def _spy(self, args, *a, **k):
        spawned.append([str(x) for x in (args if isinstance(args, (list, tuple)) else [args])])
        _init(self, args, *a, **k)
    subprocess.Popen.__init__ = _spy

    import numpy as np
    import pypto.language as pl

    @pl.jit
    def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, b)
        return out

    a = np.arange(128 * 128, dtype=np.float32).reshape(128, 128)
    b = np.full((128, 128), 0.5, np.float32)
    out = np.zeros_like(a)
    add(a, b, out)
    print(json.dumps({"ok": bool(np.array_equal(out, a + b)), "spawned": spawned,
                      "pydantic": "pydantic" in sys.modules}))
''')

SRC = '''
import pypto.language as pl

@pl.program
class HalfSum:
    @pl.function(type=pl.FunctionType.InCore)
    def half_sum(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Tensor[[64, 64], pl.FP32],
                 out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        tx: pl.Tile[[64, 64], pl.FP32] = pl.load(x, [0, 0], [64, 64])
        ty: pl.Tile[[64, 64], pl.FP32] = pl.load(y, [0, 0], [64, 64])
        s: pl.Tile[[64, 64], pl.FP32] = pl.mul(pl.add(tx, ty), 0.5)
        r: pl.Tensor[[64, 64], pl.FP32] = pl.store(s, [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = self.half_sum(a, b, out)
        return out
'''


def _run_script(script: Path, cache: Path, cwd: Path, extra: dict[str, str] | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_")}
    env["PYPTO_CACHE_DIR"] = str(cache)
    env.update(extra or {})
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _compilers(spawned: list[list[str]]) -> list[list[str]]:
    return [argv for argv in spawned if Path(argv[0]).name in ("g++", "gcc", "c++", "cc1plus")]


def test_second_process_starts_no_compiler(tmp_path: Path, sim_cache: Path) -> None:
    """Process 1 compiles and builds; process 2, same program, starts no subprocess; PYPTO_JIT_CACHE=0
    compiles, but takes ptoas' output from its cache; PYPTO_CACHE_MAX_MB=0 as well runs ptoas."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "sim").symlink_to(sim_cache, target_is_directory=True)  # reuse this session's runtime library
    script = tmp_path / "hello.py"
    script.write_text(SCRIPT)
    first = _run_script(script, cache, tmp_path)
    assert first["ok"]
    assert any(Path(argv[0]).name == "g++" and "-shared" in argv for argv in first["spawned"])  # kernels built
    assert any(Path(argv[0]).name == "ptoas" for argv in first["spawned"])
    assert len(list((cache / "jit").iterdir())) == 1  # one published entry
    second = _run_script(script, cache, tmp_path)
    assert second["ok"]
    # the on-disk jit cache (<cache>/jit) and the build cache: no ptoas, no g++, no subprocess at all
    assert second["spawned"] == []
    assert not second["pydantic"]  # the run path resolves the cache dir without the settings model
    third = _run_script(script, cache, tmp_path, {"PYPTO_JIT_CACHE": "0"})  # compiles: ptoas' output is cached
    assert third["ok"] and third["spawned"] == []
    fourth = _run_script(script, cache, tmp_path, {"PYPTO_JIT_CACHE": "0", "PYPTO_CACHE_MAX_MB": "0"})
    assert fourth["ok"] and {Path(argv[0]).name for argv in fourth["spawned"]} == {"ptoas"}


@pytest.fixture(scope="module")
def half_sum(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    program = pl.parse(SRC, filename="half_sum.py")
    base = tmp_path_factory.mktemp("binding")
    return {
        "a5sim": ir.compile(program, output_dir=base / "a5", platform="a5sim", dump_passes=False),
        "hbg": ir.compile(program, output_dir=base / "hbg", platform="a2a3sim", runtime="host_build_graph",
                          dump_passes=False),
    }


def _args() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    return (rng.standard_normal((64, 64), np.float32), rng.standard_normal((64, 64), np.float32),
            np.zeros((64, 64), np.float32))


def test_a5sim_program_rejected_by_a2a3sim_worker(half_sum: dict[str, object]) -> None:
    compiled = half_sum["a5sim"]
    a, b, out = _args()
    message = ("CompiledProgram.platform='a5sim' does not match ChipWorker.platform='a2a3sim'. Compile for the "
               "matching platform, or construct ChipWorker(config=RunConfig(platform='a5sim')).")
    with ChipWorker(RunConfig(platform="a2a3sim")) as worker:
        with pytest.raises(ValueError) as exc:
            worker.run(compiled, a, b, out)
        assert str(exc.value) == message
        with pytest.raises(ValueError) as exc:
            worker.register(compiled)
        assert str(exc.value) == message
        assert worker.host_dlopen_count == 0
    with ChipWorker(RunConfig(platform="a5sim")) as worker:
        worker.run(compiled, a, b, out)
    np.testing.assert_allclose(out, (a + b) * 0.5, rtol=1e-6, atol=1e-6)


def test_program_rejected_by_a_worker_on_another_runtime(half_sum: dict[str, object]) -> None:
    compiled = half_sum["hbg"]
    a, b, out = _args()
    with ChipWorker(RunConfig(platform="a2a3sim")) as worker, pytest.raises(ValueError) as exc:
        worker.register(compiled)
    assert str(exc.value) == ("CompiledProgram requires runtime='host_build_graph' but ChipWorker was constructed "
                              "with runtime='tensormap_and_ringbuffer'. Construct ChipWorker(..., "
                              "runtime='host_build_graph').")
    with ChipWorker(RunConfig(platform="a2a3sim"), runtime="host_build_graph") as worker:
        worker.register(compiled)(a, b, out)
    np.testing.assert_allclose(out, (a + b) * 0.5, rtol=1e-6, atol=1e-6)

