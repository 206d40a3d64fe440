"""The edit-run loop, counted in processes started: a warm re-run of an unchanged ``@pl.program`` (or
``@pl.jit`` kernel) in a fresh interpreter starts no ptoas and no g++; editing one kernel re-assembles and rebuilds that kernel
only (also when the edit moves the source lines of the kernels below it); ``pypto.runtime.run(program,
...)`` of an unchanged program compiles once per process, and not at all in a later process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from rt_marks import needs_gxx

from pypto.toolchain.ptoas import find_ptoas

pytestmark = [needs_gxx, pytest.mark.sim, pytest.mark.ptoas,
              pytest.mark.skipif(find_ptoas() is None, reason="needs the pinned ptoas")]

# Two kernels and an orchestration; every process the script starts is recorded.
PROGRAM = textwrap.dedent('''
    import json, subprocess, sys
    spawned = []
    _init = subprocess.Popen.__init__
    def _spy(self, args, *a, **k):
        spawned.append([str(x) for x in (args if isinstance(args, (list, tuple)) else [args])])
        _init(self, args, *a, **k)
    subprocess.Popen.__init__ = _spy

    import numpy as np
    import pypto
    import pypto.language as pl
    from pypto.runtime import RunConfig, run

    @pl.program
    class TwoStep:
        @pl.function(type=pl.FunctionType.InCore)
        def scale(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
                  ) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(x, [0, 0], [64, 64])
            y = pl.store(pl.mul(t, 2.0), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.InCore)
        def shift(self, y: pl.Tensor[[64, 64], pl.FP32], z: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
                  ) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(y, [0, 0], [64, 64])
            z = pl.store(pl.add(t, 1.0), [0, 0], z)
            return z

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 64], pl.FP32], z: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
                 ) -> pl.Tensor[[64, 64], pl.FP32]:
            y = pl.create_tensor([64, 64], dtype=pl.FP32)
            y = self.scale(x, y)
            z = self.shift(y, z)
            return z

    x = np.ones((64, 64), dtype=np.float32)
    z = np.zeros_like(x)
    MODE = sys.argv[1]
    if MODE == "compile":
        compiled = pypto.ir.compile(TwoStep, platform="a2a3sim", dump_passes=False)
        compiled(x, z)
        dirs = [str(compiled.output_dir)]
    else:
        cfg = RunConfig(platform="a2a3sim")
        first = run(TwoStep, x, z, config=cfg)
        z2 = np.zeros_like(x)
        second = run(TwoStep, x, z2, config=cfg)
        assert np.array_equal(z, z2)
        dirs = [str(first.output_dir), str(second.output_dir)]
    print(json.dumps({"z": float(z[1, 1]), "spawned": spawned, "dirs": dirs, "pydantic": "pydantic" in sys.modules}))
''')


def _run(script: Path, cache: Path, cwd: Path, mode: str = "compile") -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_")}
    env["PYPTO_CACHE_DIR"] = str(cache)
    proc = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _tools(spawned: list[list[str]]) -> dict[str, list[list[str]]]:
    """ptoas and g++ starts (the ptoas shim is a script named ``ptoas``)."""
    out: dict[str, list[list[str]]] = {"ptoas": [], "g++": []}
    for argv in spawned:
        name = Path(argv[0]).name
        if name in out:
            out[name].append(argv)
    return out


def _sources(builds: list[list[str]]) -> list[str]:
    """The sources g++ compiled (a ``g++ --version`` names none)."""
    return sorted(Path(arg).stem for argv in builds for arg in argv if arg.endswith(".cpp"))


def _locs(artifact: str) -> list[int]:
    """The source lines the ``loc(...)`` of ``ptoas/scale.pto`` name."""
    import re

    return [int(n) for n in re.findall(r'loc\("[^"]*":(\d+):', (Path(artifact) / "ptoas" / "scale.pto").read_text())]


@pytest.fixture
def workspace(tmp_path: Path, sim_cache: Path) -> tuple[Path, Path]:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "sim").symlink_to(sim_cache, target_is_directory=True)  # this session's runtime library
    script = tmp_path / "two_step.py"
    script.write_text(PROGRAM)
    return script, cache


def test_warm_rerun_starts_no_tool_and_a_kernel_edit_rebuilds_that_kernel(workspace, tmp_path):
    script, cache = workspace
    cold = _run(script, cache, tmp_path)
    assert cold["z"] == 3.0
    tools = _tools(cold["spawned"])
    assert len(tools["ptoas"]) == 1 and {"scale", "shift", "main"} <= set(_sources(tools["g++"]))

    warm = _run(script, cache, tmp_path)  # a fresh interpreter, nothing changed
    assert warm["z"] == 3.0 and warm["spawned"] == []
    assert warm["dirs"] != cold["dirs"]  # a new artifact directory, made without any tool

    script.write_text(PROGRAM.replace("pl.add(t, 1.0)", "pl.add(t, 5.0)"))  # edit the second kernel only
    edited = _run(script, cache, tmp_path)
    assert edited["z"] == 7.0
    tools = _tools(edited["spawned"])
    assert len(tools["ptoas"]) == 1 and "ptoas/shift.pto" in tools["ptoas"][0]  # that unit alone
    assert _sources(tools["g++"]) == ["shift"]  # neither the other kernel nor the orchestration
    assert len(tools["g++"]) == 1 and len(edited["spawned"]) == 2

    text = script.read_text()  # an edit of the first kernel that moves every line below it
    script.write_text(text.replace("t = pl.load(x, [0, 0], [64, 64])", "t = pl.load(x, [0, 0], [64, 64])\n"
                                   "        t = pl.mul(t, 1.0)", 1))
    moved = _run(script, cache, tmp_path)
    assert moved["z"] == 7.0
    tools = _tools(moved["spawned"])
    assert len(tools["ptoas"]) == 1 and "ptoas/scale.pto" in tools["ptoas"][0]  # shift's loc lines moved: no matter
    assert _sources(tools["g++"]) == ["scale"]


def test_run_of_an_unchanged_program_compiles_once_per_process(workspace, tmp_path):
    script, cache = workspace
    first = _run(script, cache, tmp_path, mode="run")
    assert first["z"] == 3.0 and len(set(first["dirs"])) == 1  # the second run() reused the first build
    second = _run(script, cache, tmp_path, mode="run")
    assert second["z"] == 3.0 and second["spawned"] == []
    assert not second["pydantic"]  # no compile at all: the artifact came from the on-disk cache
    assert len(set(second["dirs"])) == 1 and second["dirs"] != first["dirs"]

    script.write_text(PROGRAM.replace("@pl.program", "\n@pl.program", 1))  # every line moves down by one
    moved = _run(script, cache, tmp_path, mode="run")
    assert moved["pydantic"]  # a different Program (its spans): compiled, not taken from the cache
    assert _locs(first["dirs"][0]) and _locs(moved["dirs"][0]) == [n + 1 for n in _locs(first["dirs"][0])]
    script.write_text(PROGRAM.replace("pl.add(t, 1.0)", "pl.add(t, 5.0)"))
    assert _run(script, cache, tmp_path, mode="run")["z"] == 7.0


JIT = textwrap.dedent('''
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

    a = np.ones((128, 128), np.float32)
    out = np.zeros_like(a)
    add(a, a, out)
    print(json.dumps({"out": float(out[0, 0]), "spawned": spawned}))
''')


def test_jit_warm_call_starts_no_tool_and_an_edit_rebuilds_its_kernel(workspace, tmp_path):
    _, cache = workspace
    script = tmp_path / "hello.py"
    script.write_text(JIT)
    assert _run(script, cache, tmp_path)["out"] == 2.0
    warm = _run(script, cache, tmp_path)
    assert warm["out"] == 2.0 and warm["spawned"] == []
    script.write_text(JIT.replace("out[:] = pl.add(a, b)", "out[:] = pl.mul(pl.add(a, b), 3.0)"))
    edited = _run(script, cache, tmp_path)
    assert edited["out"] == 6.0
    tools = _tools(edited["spawned"])
    assert len(tools["ptoas"]) == 1 and len(tools["g++"]) == 1  # the kernel: the orchestration is unchanged
    assert _sources(tools["g++"]) == ["add_incore_0"]


def _gxx_shim(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose PATH starts with a ``g++`` that logs its argv, then runs the real one."""
    import shutil

    real = shutil.which("g++")
    assert real is not None
    bin_dir, log = tmp_path / "shim-bin", tmp_path / "gxx.log"
    bin_dir.mkdir()
    shim = bin_dir / "g++"
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}, log


def test_warm_run_of_a_program_starts_no_gxx_even_outside_python(tmp_path):
    """Counted by a ``g++`` first on PATH (not by watching ``subprocess``): a cold ``run(program)`` builds the
    runtime library, the kernels and the orchestration; a warm re-run in a fresh interpreter starts none."""
    env_extra, log = _gxx_shim(tmp_path)
    script = tmp_path / "two_step.py"
    script.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_")}
    env.update(env_extra, PYPTO_CACHE_DIR=str(tmp_path / "cache"), PYPTO_PROG_BUILD_DIR=str(tmp_path / "build"),
               PYPTO_PREBUILT_DIR="none")  # no install-provided runtime: the cold run builds it

    def run_once() -> tuple[dict, list[str]]:
        before = log.read_text().splitlines() if log.exists() else []
        proc = subprocess.run([sys.executable, str(script), "run"], capture_output=True, text=True, cwd=tmp_path,
                              env=env, timeout=600, check=False)
        assert proc.returncode == 0, proc.stderr
        after = log.read_text().splitlines() if log.exists() else []
        return json.loads(proc.stdout.strip().splitlines()[-1]), after[len(before):]

    cold, started = run_once()
    assert cold["z"] == 3.0
    sources = {Path(arg).name for line in started for arg in line.split() if arg.endswith(".cpp")}
    assert {"scale.cpp", "shift.cpp", "main.cpp"} <= sources, started  # the kernels, the orchestration
    assert any("-c" in line.split() for line in started), started  # and the runtime library's objects
    warm, started = run_once()
    assert warm["z"] == 3.0 and started == [] and warm["spawned"] == []
