"""Config files, directory settings and unknown variables (findings C5, A3, A10, A13 of round 2, and the
silently ignored ``PYPTO_*`` typo).

A malformed or undecodable config file is a settings error (exit 3) naming the file, whichever way it
was found; relative directory settings are resolved against the working directory when settings are
resolved (ptoas and g++ run elsewhere); a ``.py`` path that is a directory says so; an unknown
``PYPTO_*`` variable is warned about once, with the closest setting.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from relkit import Outcome, cli, env_for

KERNEL = '''\
import pypto.language as pl


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


SHAPES = {"add": {"a": "64x64:f32", "b": "64x64:f32", "out": "64x64:f32"}}
'''
GARBAGE = bytes(range(128, 256)) * 2  # not UTF-8 anywhere


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return env_for(tmp_path / "cache", tmp_path / "build")


@pytest.fixture
def case(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "add.py").write_text(KERNEL)
    return work


def _settings_error(out: Outcome, *needles: str) -> None:
    assert out.code == 3, out.describe()
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr, out.describe()
    for needle in needles:
        assert needle in out.stderr, out.describe()


def test_C5_malformed_pyproject_is_a_settings_error(case: Path, env: dict[str, str]) -> None:
    (case / "pyproject.toml").write_text('[tool.pypto]\nplatform = "bogus"\n[[[\n')
    out = cli(["compile", "add.py", "-o", "X", "--skip-ptoas"], env, case)
    _settings_error(out, f"Cannot read config file {case / 'pyproject.toml'}", "line 3")
    assert not (case / "X").exists()


def test_C5_wellformed_pyproject_without_pypto_table_is_fine(case: Path, env: dict[str, str]) -> None:
    (case / "pyproject.toml").write_text('[project]\nname = "mine"\n')
    out = cli(["compile", "add.py", "-o", "X", "--skip-ptoas"], env, case)
    assert out.code == 0, out.describe()
    (case / "pyproject.toml").write_text('[tool.pypto]\nplatform = "bogus"\n')
    _settings_error(cli(["compile", "add.py", "-o", "X", "--skip-ptoas"], env, case), "Invalid platform 'bogus'")


@pytest.mark.parametrize("how", ["--config", "pypto.toml", "pyproject.toml"])
def test_A3_undecodable_config_file_is_exit_3(case: Path, env: dict[str, str], how: str) -> None:
    name = "bad.toml" if how == "--config" else how
    (case / name).write_bytes(GARBAGE)
    args = ["--config", name] if how == "--config" else []
    out = cli([*args, "compile", "add.py", "-o", "X", "--skip-ptoas"], env, case)
    _settings_error(out, "Cannot read config file", name, "not UTF-8 text")


@pytest.mark.skipif(shutil.which("g++") is None, reason="the sample run needs g++")
def test_A10_relative_cache_dir_is_resolved_against_the_cwd(case: Path, env: dict[str, str]) -> None:
    out = cli(["compile", "add.py", "-o", str(case.parent / "o")], {**env, "PYPTO_CACHE_DIR": "relative/cache"}, case)
    assert out.code == 0, out.describe()
    assert (case / "relative" / "cache" / "ptoas-shim").is_dir() and (case.parent / "o" / "kernel_config.py").is_file()
    out = cli(["settings", "--json"], {**env, "PYPTO_CACHE_DIR": "relative/cache", "PTOAS_ROOT": "rel/ptoas"}, case)
    assert out.code == 0, out.describe()
    rows = {r["name"]: r["value"] for r in json.loads(out.stdout)["settings"]}
    assert rows.get("cache_dir") == str(case / "relative" / "cache"), out.describe()
    assert rows.get("ptoas_root") == str(case / "rel" / "ptoas"), out.describe()


def test_A13_a_directory_named_py_is_a_clear_error(case: Path, env: dict[str, str]) -> None:
    (case / "dir.py").mkdir()
    out = cli(["compile", "dir.py"], env, case)
    _settings_error(out, f"error: {case / 'dir.py'}: is a directory, not a Python file")
    assert "<frozen" not in out.stderr


def test_unknown_pypto_variable_warns_once_with_the_closest_setting(case: Path, env: dict[str, str]) -> None:
    extra = {"PYPTO_PLATFROM": "a5sim", "PYPTO_NOTHING_LIKE_IT": "1", "PYPTO_EXP_SWEEP": "1",
             "PYPTO_VERIFY_LEVEL": "basic"}
    out = cli(["compile", "add.py", "-o", "X", "--skip-ptoas"], {**env, **extra}, case)
    assert out.code == 0, out.describe()
    warnings = [json.loads(line) for line in out.stderr.splitlines()
                if line.startswith("{") and "is not a pypto setting" in line]
    assert [w["variable"] for w in warnings] == ["PYPTO_NOTHING_LIKE_IT", "PYPTO_PLATFROM"], out.describe()
    assert "did you mean PYPTO_PLATFORM?" in warnings[1]["event"] and warnings[1]["level"] == "warning"
    assert "`pypto settings` lists the known ones" in warnings[0]["event"]
