"""Start-up: ``import pypto.language`` and the CLI import torch only when the user's program does.

torch costs 1.3-2 s to import here; a kernel author's edit-run loop pays it only if their own code
imports it. Each check runs in a fresh interpreter and reads ``sys.modules`` at exit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROGRAM = textwrap.dedent('''
    {imports}
    import pypto.language as pl

    @pl.program
    class Twice:
        @pl.function(type=pl.FunctionType.InCore)
        def twice(self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]
                  ) -> pl.Tensor[[32, 32], pl.FP32]:
            y = pl.store(pl.add(pl.load(x, [0, 0], [32, 32]), pl.load(x, [0, 0], [32, 32])), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]
                 ) -> pl.Tensor[[32, 32], pl.FP32]:
            y = self.twice(x, y)
            return y

    def golden(x, y):
        return x + x
''')

CLI = ("import sys, atexit\n"
       "atexit.register(lambda: print('TORCH', 'torch' in sys.modules, file=sys.stderr))\n"
       "from pypto.cli.main import main\n"
       "sys.exit(main(sys.argv[1:]))\n")


def _torch_loaded(args: list[str], cwd: Path) -> bool:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_")}
    env["PYPTO_PROG_BUILD_DIR"] = str(cwd / "build")
    proc = subprocess.run([sys.executable, "-c", CLI, *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    marks = [line for line in proc.stderr.splitlines() if line.startswith("TORCH ")]
    assert marks, proc.stderr
    return marks[-1] == "TORCH True"


def test_import_pypto_language_does_not_import_torch():
    code = "import sys, pypto.language, pypto.runtime; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_cli_help_does_not_import_torch(tmp_path):
    assert not _torch_loaded(["--help"], tmp_path)


def test_cli_compile_imports_torch_only_for_a_program_that_does(tmp_path):
    (tmp_path / "plain.py").write_text(PROGRAM.format(imports="import numpy as np"))
    (tmp_path / "uses_torch.py").write_text(PROGRAM.format(imports="import torch"))
    assert not _torch_loaded(["compile", "plain.py", "--skip-ptoas", "--dump-passes", "none"], tmp_path)
    pytest.importorskip("torch")
    assert _torch_loaded(["compile", "uses_torch.py", "--skip-ptoas", "--dump-passes", "none"], tmp_path)


@pytest.mark.sim
@pytest.mark.ptoas
def test_cli_run_does_not_import_torch(tmp_path):
    import shutil

    from pypto.toolchain.ptoas import find_ptoas

    if shutil.which("g++") is None or find_ptoas() is None:
        pytest.skip("needs g++ and the pinned ptoas")
    (tmp_path / "plain.py").write_text(PROGRAM.format(imports="import numpy as np"))
    assert not _torch_loaded(["run", "plain.py"], tmp_path)


@pytest.mark.sim
@pytest.mark.ptoas
def test_library_compile_and_run_do_not_import_torch(tmp_path):
    """``import pypto.language``, ``ir.compile`` (ptoas included) and ``pypto.runtime.run`` of a program
    whose own code does not import torch leave torch out of ``sys.modules``."""
    import shutil

    from pypto.toolchain.ptoas import find_ptoas

    if shutil.which("g++") is None or find_ptoas() is None:
        pytest.skip("needs g++ and the pinned ptoas")
    tail = textwrap.dedent('''
        import sys
        import pypto
        from pypto.runtime import RunConfig, run
        x = np.ones((32, 32), np.float32)
        y = np.zeros_like(x)
        compiled = pypto.ir.compile(Twice, platform="a2a3sim", dump_passes=False)
        assert "torch" not in sys.modules, "ir.compile imported torch"
        run(Twice, x, y, golden=golden, config=RunConfig(platform="a2a3sim"))
        print("TORCH", "torch" in sys.modules)
    ''')
    (tmp_path / "plain.py").write_text(PROGRAM.format(imports="import numpy as np") + tail)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_")}
    env.update(PYPTO_PROG_BUILD_DIR=str(tmp_path / "build"), PYPTO_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "plain.py"], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "TORCH False"
