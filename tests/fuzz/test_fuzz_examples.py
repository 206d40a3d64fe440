"""Mutation fuzzing of the example kernels through the ``pypto`` CLI.

Property: every mutated program either compiles (and, when run, matches its golden) with exit 0, or is
refused with exit 2, 3 or 4 and a message — never exit 1 (an internal error), a signal or a hang.

The suite runs a bounded, derandomized set (``FUZZ_EXAMPLES``, default 200; most cases are
``pypto compile`` — with or without ``--skip-ptoas``, which a ``@pl.jit`` target does not honour, so
ptoas assembles them all — and one in ten is ``pypto run``: built with g++, run on the simulator and
compared with its golden); ``nox -s fuzz`` runs a longer one with a fresh seed (``FUZZ_EXAMPLES``,
``FUZZ_SEED``).
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import mutations as mut
import pytest
from forkclient import ForkClient
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "200"))
SEED = int(os.environ.get("FUZZ_SEED", "20261201"))
TIMEOUT = float(os.environ.get("FUZZ_TIMEOUT", "120"))
TARGETS = mut.corpus()
MODES = ["skip_ptoas"] * 14 + ["ptoas"] * 4 + ["run"] * 2


class Server(ForkClient):
    def __init__(self, root: Path) -> None:
        super().__init__({"PYPTO_CACHE_DIR": str(root / "cache"), "PYPTO_PROG_BUILD_DIR": str(root / "build"),
                          "PYPTO_LOG_FORMAT": "json", "PYPTO_LOG_LEVEL": "warning"})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "cases").mkdir()
    # examples import _common from their parent's parent: cases/<case>/<file>.py -> cases/_common.py
    (root / "cases" / "_common.py").write_text((REPO / "examples" / "_common.py").read_text())
    srv = Server(root)
    yield srv, root
    srv.close()
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(OUTCOMES.items()))
    print(f"\nfuzz outcomes ({sum(OUTCOMES.values())} cases): {summary}")


cases = st.tuples(
    st.sampled_from(range(len(TARGETS))),
    st.lists(st.sampled_from(sorted(mut.MUTATORS)), min_size=1, max_size=2),
    st.integers(min_value=0, max_value=2**32 - 1),
    st.sampled_from(MODES),
)
_count = iter(range(10**9))
OUTCOMES: Counter[str] = Counter()


@pytest.mark.sim
@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, derandomize="FUZZ_SEED" not in os.environ, database=None,
          suppress_health_check=list(HealthCheck))
@given(case=cases)
def test_mutated_examples_never_crash(server: tuple[Server, Path], case: tuple[int, list[str], int, str]) -> None:
    srv, root = server
    index, names, rng_seed, mode = case
    target = TARGETS[index]
    text = mut.mutate(target, names, rng_seed)
    cdir = root / "cases" / f"c{next(_count):04d}"
    cdir.mkdir()
    src = cdir / target.path.name
    src.write_text(text)
    spec = f"{src}::{target.kernel}"
    argv = (["run", spec] if mode == "run" else
            ["compile", spec, "-o", str(cdir / "out")] + (["--skip-ptoas"] if mode == "skip_ptoas" else []))
    res = srv.run(argv, cdir, TIMEOUT)
    OUTCOMES[f"{mode} {res['status']} {res['code']}"] += 1
    what = (f"{target.path.name}::{target.kernel} mutated by {names} (seed {rng_seed}), `pypto {' '.join(argv)}`"
            f" -> {res['status']} {res['code']}\n{res['stderr'][-2500:]}")
    assert res["status"] == "exit", what
    assert res["code"] in (0, 2, 3, 4), what
    assert "internal error" not in res["stderr"] and "Traceback" not in res["stderr"], what
    if res["code"] != 0:
        assert res["stderr"].strip(), what
    shutil.rmtree(cdir, ignore_errors=True)  # passing cases leave nothing behind (failures are kept)
