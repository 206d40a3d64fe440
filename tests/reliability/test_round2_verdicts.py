"""A success is a checked success (findings C1, C4, N1, A4 of round 2).

``pypto run`` compares the outputs with the file's golden. NaN in a golden element still means "don't
care" for that element, but a golden that compares nothing (NaN everywhere, or returning None) is not a
pass: it is an explicit "not checked" verdict and exit 3. Tolerances and seeds are checked up front
(usage errors, exit 2), and a mismatch reports the real max error over the compared elements.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from relkit import Outcome, cli, env_for, needs_gxx

KERNEL = '''\
import numpy as np
import pypto.language as pl


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


SHAPES = {{"add": {{"a": "64x64:f32", "b": "64x64:f32", "out": "64x64:f32"}}}}
{golden}
'''

GOLDENS = {
    "right": "def golden_add(a, b, out):\n    return a + b\n",
    "wrong": "def golden_add(a, b, out):\n    return a - b\n",
    "all_nan": "def golden_add(a, b, out):\n    return np.full_like(a, np.nan)\n",
    "some_nan": "def golden_add(a, b, out):\n    g = a + b\n    g[:8] = np.nan\n    return g\n",
    "none": "def golden_add(a, b, out):\n    out[:] = a - b\n",
    "absent": "",
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")  # one runtime build for the module


@pytest.fixture
def env(tmp_path: Path, cache: Path) -> dict[str, str]:
    return env_for(cache, tmp_path / "build")


def _run(tmp_path: Path, env: dict[str, str], golden: str, *extra: str) -> Outcome:
    (tmp_path / "k.py").write_text(KERNEL.format(golden=GOLDENS[golden]))
    return cli(["run", "k.py", "-o", str(tmp_path / "o"), *extra], env, tmp_path)


def _inputs(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The CLI's seeded inputs of ``add`` (In parameters in order, standard normal, f32)."""
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))  # type: ignore[return-value]


@needs_gxx
def test_C1_all_nan_golden_is_not_a_pass(tmp_path: Path, env: dict[str, str]) -> None:
    out = _run(tmp_path, env, "all_nan", "--json")
    assert out.code == 3, out.describe()
    data = json.loads(out.stdout)
    assert data["passed"] is False and data["checked"] is False and data["max_error"] is None
    assert data["verdict"].startswith("not checked: the golden is NaN everywhere (4096 elements)")
    assert "error: not checked" in out.stderr and "internal error" not in out.stderr


@needs_gxx
def test_C1_nan_elements_stay_dont_care(tmp_path: Path, env: dict[str, str]) -> None:
    out = _run(tmp_path, env, "some_nan")
    assert out.code == 0, out.describe()
    assert "passed: 3584 of 4096 elements within rtol=1e-05, atol=1e-05" in out.stdout, out.describe()


@needs_gxx
def test_C4_golden_returning_none_is_not_checked(tmp_path: Path, env: dict[str, str]) -> None:
    out = _run(tmp_path, env, "none")
    assert out.code == 3, out.describe()
    assert "error: not checked: golden_add() returned None" in out.stderr, out.describe()
    assert "passed" not in out.stdout, out.describe()


@needs_gxx
def test_C4_no_golden_says_not_checked_and_succeeds(tmp_path: Path, env: dict[str, str]) -> None:
    """Without a golden the user asked for no check: exit 0, but the verdict says nothing was compared."""
    out = _run(tmp_path, env, "absent", "--json")
    assert out.code == 0, out.describe()
    data = json.loads(out.stdout)
    assert data["checked"] is False and "passed" not in data
    assert data["verdict"] == "not checked: k.py defines no golden_add (or golden) to compare the outputs with"


@needs_gxx
def test_N1_finite_wrong_golden_reports_the_real_max_error(tmp_path: Path, env: dict[str, str]) -> None:
    out = _run(tmp_path, env, "wrong", "--json")
    assert out.code == 3, out.describe()
    data = json.loads(out.stdout)
    a, b = _inputs()
    expected = float(np.max(np.abs((a + b).astype(np.float64) - (a - b).astype(np.float64))))
    assert data["passed"] is False and data["checked"] is True
    assert data["max_error"] == pytest.approx(expected, rel=1e-6), data
    assert "outputs do not match the golden: output 0: 4096 of 4096 elements out of tolerance" in data["verdict"]


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--atol", "nan", "nan is not a finite number >= 0"), ("--rtol", "nan", "nan is not a finite number >= 0"),
    ("--atol", "inf", "inf is not a finite number >= 0"), ("--rtol", "-1", "-1.0 is not a finite number >= 0"),
    ("--atol", "-0.5", "-0.5 is not a finite number >= 0"), ("--seed", "-5", "-5 is not in the range x>=0"),
])
def test_N1_A4_bad_tolerances_and_seeds_are_usage_errors(tmp_path: Path, env: dict[str, str], option: str,
                                                         value: str, message: str) -> None:
    out = _run(tmp_path, env, "right", option, value)
    assert out.code == 2, out.describe()
    assert message in out.stderr and "RuntimeWarning" not in out.stderr and "internal error" not in out.stderr
    assert not (tmp_path / "o").exists()


def test_A4_run_pto_negative_seed_is_a_usage_error(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "k.pto").write_text("module {}\n")
    out = cli(["run-pto", "k.pto", "--arg", "x=4x4:f32", "--seed", "-5"], env, tmp_path)
    assert out.code == 2 and "-5 is not in the range x>=0" in out.stderr, out.describe()


def test_compare_counts_what_it_compared() -> None:
    """The harness behind ``pypto run`` and ``pypto.runtime.run(golden=...)``."""
    from pypto.flows.harness import check_outputs, compare

    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    golden = a.copy()
    golden[0, :] = np.nan
    result = check_outputs([a], [golden], 1e-5, 1e-5)
    assert (result.compared, result.total, result.problem, result.max_error) == (12, 16, None, 0.0)
    assert compare([a], [golden], 1e-5, 1e-5) == (0.0,)
    wrong = golden + 0.5
    wrong[3, 3] += 2.0
    result = check_outputs([a], [wrong], 1e-5, 1e-5)
    assert result.max_error == pytest.approx(2.5) and "12 of 16 elements out of tolerance" in result.mismatch
    with pytest.raises(AssertionError, match="NaN everywhere"):
        compare([a], [np.full_like(a, np.nan)], 1e-5, 1e-5)
    with pytest.raises(ValueError, match="atol must be a finite number >= 0, got nan"):
        compare([a], [a], 1e-5, float("nan"))
    with pytest.raises(AssertionError, match=r"output 0: the golden's shape \[3\] does not fit the output's \[4, 4\]"):
        compare([a], [np.zeros(3)], 1e-5, 1e-5)
