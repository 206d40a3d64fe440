"""Exit codes tell the truth (finding D4): user mistakes are exit 3 with a located message, never
"internal error ... this is a pypto bug"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from relkit import EXAMPLES, Outcome, cli, env_for, needs_gxx

HELLO = str(EXAMPLES / "beginner" / "01_hello_world.py")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return env_for(tmp_path / "cache", tmp_path / "build")


def _user_error(out: Outcome, *needles: str) -> None:
    assert out.code == 3, out.describe()
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr, out.describe()
    for n in needles:
        assert n in out.stderr, out.describe()


@pytest.mark.parametrize(("source", "needles"), [
    ("import pypto.language as pl\ndef f(:\n    pass\n", ["bad.py:2:7: error: invalid Python syntax in bad.py: SyntaxError: invalid syntax"]),
    ("import pypto.language as pl\nif True:\npass\n", ["bad.py:3:1: error: invalid Python syntax in bad.py: IndentationError"]),
    ("import pypto.language as pl\nprint(1, x=2, x=3)\n", ["bad.py:2:", "keyword argument repeated"]),
    ("import pypto.language as pl\nimport no_such_module_xyz\n",
     ["bad.py:2:1: error:", "no module named 'no_such_module_xyz'"]),
    ("import pypto.language as pl\nVALUE = 1 / 0\n", ["bad.py:2:", "ZeroDivisionError"]),
], ids=["syntax", "indentation", "repeated-keyword", "import", "raises-at-import"])
def test_broken_user_file_is_a_located_user_error(tmp_path: Path, env: dict[str, str], source: str,
                                                  needles: list[str]) -> None:
    (tmp_path / "bad.py").write_text(source)
    _user_error(cli(["compile", "bad.py"], env, tmp_path), *needles)


def test_bf16_shape_spec_is_a_user_error(tmp_path: Path, env: dict[str, str]) -> None:
    args = ["compile", HELLO, "--skip-ptoas"] + [f"--shape={p}=128x128:bf16" for p in ("a", "b", "out")]
    _user_error(cli(args, env, tmp_path), "dtype BF16 has no numpy equivalent")


def test_truncated_pto_is_a_located_user_error(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "t.pto").write_text("module {\n  func.func @k(%arg0: !pto.ptr<f32>) {\n")
    out = cli(["run-pto", "t.pto", "--arg", "arg0=64x64:f32:in"], env, tmp_path)
    _user_error(out, "t.pto:2:", "malformed PTO file")


@pytest.mark.parametrize("cache", ["afile/cache", "/proc/pypto-no-such-dir"], ids=["under-a-file", "proc"])
def test_unusable_cache_dir_is_a_user_error(tmp_path: Path, env: dict[str, str], cache: str) -> None:
    (tmp_path / "afile").write_text("")
    out = cli(["compile", HELLO, "--run"], {**env, "PYPTO_CACHE_DIR": str(tmp_path / cache)}, tmp_path)
    _user_error(out, "cache directory", cache)


@pytest.mark.parametrize("target", ["afile/sub", "/proc/pypto-no-such-dir"], ids=["under-a-file", "proc"])
def test_unusable_output_path_is_a_user_error(tmp_path: Path, env: dict[str, str], target: str) -> None:
    (tmp_path / "afile").write_text("")
    out = cli(["compile", HELLO, "--skip-ptoas", "-o", target], env, tmp_path)
    _user_error(out, "cannot create the output directory")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_output_dir_is_a_user_error(tmp_path: Path, env: dict[str, str]) -> None:
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    _user_error(cli(["compile", HELLO, "--skip-ptoas", "-o", str(ro / "out")], env, tmp_path))


@needs_gxx
@pytest.mark.sim
def test_run_time_out_of_bounds_is_a_user_error(tmp_path: Path, env: dict[str, str]) -> None:
    """A SHAPES/--shape spec smaller than the kernel's loop walks: a kernel fault, exit 3, no signal."""
    target = f"{EXAMPLES / 'beginner' / '02_elementwise.py'}::chunked_add"
    shapes = [f"--shape={p}=128x128:f32" for p in ("a", "b", "out")]
    out = cli(["run", target, *shapes], env, tmp_path)
    _user_error(out, "kernel fault in task 0 (kernel 'chunked_add", "GM out of bounds: tensor 'a'")


def test_sample_dtype_against_an_annotated_dtype_is_a_user_error(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "k.py").write_text('''\
import pypto.language as pl


@pl.jit
def twice(x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(x, x)
    return out


SHAPES = {"twice": {"x": "64x64:int8", "out": "64x64:f32"}}
''')
    out = cli(["compile", "k.py::twice", "--skip-ptoas"], env, tmp_path)
    _user_error(out, "sample shape of 'x' for kernel 'twice' has dtype int8, but the kernel declares FP32")
    shapes = ["--shape=x=32x32:f32", "--shape=out=64x64:f32"]
    out = cli(["compile", "k.py::twice", "--skip-ptoas", *shapes], env, tmp_path)
    _user_error(out, "sample shape of 'x' for kernel 'twice' is [32, 32], but the kernel declares [64, 64]")
