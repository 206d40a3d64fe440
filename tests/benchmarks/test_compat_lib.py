"""benchmarks/_compat_lib.py (``upstream_compat.py --pypto-lib``): which files it runs and how it classifies them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def lib():
    return _load("_compat_lib")


MAIN = 'import sys\nif __name__ == "__main__":\n'


def _snapshot(root: Path) -> Path:
    """A fake pypto-lib: a harness module, examples that pass, fail and hang, and model files."""
    files = {
        "golden/__init__.py": "MARK = 'golden'\n",
        "examples/a/ok.py": MAIN + "    from golden import MARK\n    print(MARK, sys.argv[1:])\n",
        "examples/a/bad.py": MAIN + "    raise ValueError('tile.frob: no lowering')\n",
        "examples/b/slow.py": MAIN + "    import time\n    time.sleep(30)\n",
        "examples/b/skip_draft.py": "raise SystemExit(1)\n",
        "models/qwen3_32b/decode.py": MAIN + "    print('ok')\n",
        "models/qwen3_32b/config.py": "N = 1\n",
        "models/qwen3_14b/full.py": "# ci: no-sim\n" + MAIN + "    raise SystemExit(2)\n",
        "models/deepseek_v3_2/front.py": MAIN + "    print('ok')\n",
        "models/deepseek_v4_pro/big.py": MAIN + "    raise SystemExit(3)\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_the_ci_selection(lib, tmp_path: Path) -> None:
    assert lib.lib_files(_snapshot(tmp_path)) == [
        "examples/a/bad.py", "examples/a/ok.py", "examples/b/slow.py",
        "models/deepseek_v3_2/front.py", "models/qwen3_32b/decode.py"]


def test_pass_fail_timeout_and_the_summary_line(lib, tmp_path: Path, capsys) -> None:
    snap = _snapshot(tmp_path / "snap")
    code, outcomes = lib.main(snap, ["a2a3sim"], timeout=5, jobs=1, pattern="examples/")
    by = {o.name: o for o in outcomes}
    assert code == 1
    assert by["examples/a/ok.py"].status == "PASS" and by["examples/a/ok.py"].last_error == ""
    assert "golden ['-p', 'a2a3sim']" in by["examples/a/ok.py"].tail  # run from the copy's root, -p platform
    assert by["examples/a/bad.py"].status == "FAIL"
    assert by["examples/a/bad.py"].last_error == "ValueError: tile.frob: no lowering"
    assert by["examples/b/slow.py"].status == "TIMEOUT" and by["examples/b/slow.py"].exit_code is None
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "pypto-lib 1/3 (a2a3sim)"
    assert any(line.startswith("FAIL") and "examples/a/bad.py  | ValueError" in line for line in out)
    assert not (snap / "build_output").exists() and sorted(p.name for p in snap.iterdir()) == [
        "examples", "golden", "models"]  # the snapshot itself is left as it was


def test_the_cli_runs_both_platforms(tmp_path: Path, capsys) -> None:
    compat = _load("upstream_compat")
    snap = _snapshot(tmp_path)
    code = compat.main(["--pypto-lib", str(snap), "--platform", "both", "-k", "models/", "--timeout", "20"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out[-2:] == ["pypto-lib 2/2 (a2a3sim)", "pypto-lib 2/2 (a5sim)"]
