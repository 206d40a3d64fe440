"""benchmarks/upstream_compat.py: which example scripts it runs, and the environment it runs them in."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).resolve().parents[2] / "benchmarks" / "upstream_compat.py"


@pytest.fixture(scope="module")
def compat():
    spec = importlib.util.spec_from_file_location("upstream_compat", RUNNER)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _tree(root: Path) -> Path:
    (root / "docs" / "en" / "user").mkdir(parents=True)
    ex = root / "examples" / "group"
    ex.mkdir(parents=True)
    (ex / "hw.py").write_text('from pypto.runtime import RunConfig\ncfg = RunConfig(platform="a2a3")\n')
    (ex / "cli.py").write_text('import argparse\nap = argparse.ArgumentParser()\n'
                               'ap.add_argument("-p", "--platform", default="a5")\n')
    (ex / "comment.py").write_text('# pass RunConfig(platform="a5") to target a device\n'
                                   'import os, sys\nprint(os.environ.get("PYPTO_RUN_HW_ON_SIM", "-"),\n'
                                   '      os.environ["PYPTO_PLATFORM"], os.environ["PYPTO_PROG_BUILD_DIR"])\n')
    (root / "examples" / "distributed").mkdir()
    (root / "examples" / "distributed" / "d.py").write_text("raise SystemExit(1)\n")
    return root


def test_hardware_platforms_in_code_not_comments_turn_on_run_hw_on_sim(compat, tmp_path: Path) -> None:
    cases = {c.name: c for c in compat.example_cases(_tree(tmp_path), distributed=False)}
    assert set(cases) == {"examples/group/comment.py", "examples/group/hw.py", "examples/group/cli.py"}
    assert cases["examples/group/hw.py"].hw_on_sim and not cases["examples/group/comment.py"].hw_on_sim
    assert cases["examples/group/cli.py"].hw_on_sim  # an argparse --platform defaulting to hardware


def test_a_case_runs_with_the_platform_and_a_private_build_dir(compat, tmp_path: Path) -> None:
    root = _tree(tmp_path)
    case = next(c for c in compat.example_cases(root, distributed=False) if c.name.endswith("comment.py"))
    out = compat.run_case(case, "a5sim", 60, root)
    assert out.ok, out.tail
    flag, platform, build = out.tail.split()
    assert (flag, platform) == ("-", "a5sim")
    assert not build.startswith(str(root))  # nothing is written into the upstream checkout


def test_distributed_cases_include_their_variants_and_annotated_hw_defaults(compat, tmp_path: Path) -> None:
    root = _tree(tmp_path)
    dist = root / "examples" / "distributed"
    (dist / "06_put_get.py").write_text("print('x')\n")
    (dist / "k.py").write_text('def serve(platform: str = "a2a3") -> None:\n    pass\n')
    names = {c.name: c for c in compat.example_cases(root, distributed=True)}
    assert "examples/distributed/06_put_get.py --mode get" in names
    assert names["examples/distributed/06_put_get.py --mode get"].argv[-2:] == ["--mode", "get"]
    assert names["examples/distributed/k.py"].hw_on_sim
    assert not any(n.startswith("examples/distributed/") for n in
                   (c.name for c in compat.example_cases(root, distributed=False)))
