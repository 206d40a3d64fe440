"""Developer sessions: ``nox -l`` lists them; ``nox`` runs lint and the tests on every sim platform.

Sessions run in the current environment (``python=False``): install once with
``pip install -e '.[dev]'`` and everything works offline. Select with short ids or tags, e.g.
``nox -s "tests(a5sim)"``, ``nox -k a2a3sim``, ``nox -t docker``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"  # session `requires`
nox.options.sessions = ["lint", "tests"]
nox.options.reuse_venv = "yes"

ROOT = Path(__file__).resolve().parent
SIM_PLATFORMS = [nox.param(p, id=p, tags=[p, "sim"]) for p in ("a2a3sim", "a5sim")]


def _require(session: nox.Session, module: str, package: str) -> None:
    if importlib.util.find_spec(module) is None:
        session.error(f"{package} is not installed in this environment: pip install -e '.[dev]' (or pip install {package})")


@nox.session(python=False, tags=["tests"])
@nox.parametrize("platform", SIM_PLATFORMS)
def tests(session: nox.Session, platform: str) -> None:
    """Unit and simulation tests on one sim platform (container tests excluded: see container_tests)."""
    session.run(sys.executable, "-m", "pytest", "-q", "-m", "not container", *session.posargs,
                env={"PYPTO_PLATFORM": platform})


@nox.session(python=False, tags=["lint"])
def lint(session: nox.Session) -> None:
    """ruff over the package, tests, docker tooling and this file."""
    _require(session, "ruff", "ruff")
    session.run(sys.executable, "-m", "ruff", "check", "pypto", "tests", "docker", "noxfile.py", *session.posargs)


@nox.session(python=False, tags=["lint"])
def typecheck(session: nox.Session) -> None:
    """mypy over the package (skipped when mypy is not installed)."""
    if importlib.util.find_spec("mypy") is None:
        session.skip("mypy is not installed (pip install mypy)")
    session.run(sys.executable, "-m", "mypy", "--ignore-missing-imports", "pypto", *session.posargs)


@nox.session(python=False, tags=["docs"])
def docs(session: nox.Session) -> None:
    """Build the documentation site with ``mkdocs build --strict`` into site/; ``nox -s docs -- serve`` previews it.

    Other arguments after ``--`` go to mkdocs (``nox -s docs -- serve -a 127.0.0.1:8001``).
    """
    if importlib.util.find_spec("mkdocs") is None:
        session.error("mkdocs is not installed in this environment: pip install -e '.[docs]'")
    args = list(session.posargs)
    if args[:1] == ["serve"]:
        session.run(sys.executable, "-m", "mkdocs", "serve", "--strict", "-f", str(ROOT / "mkdocs.yml"), *args[1:])
        return
    session.run(sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                "-d", str(ROOT / "site"), *args)


@nox.session(python=False, tags=["docker"])
@nox.parametrize("flavor", [nox.param("sim", id="sim"), nox.param("sim-slim", id="sim-slim")])
def images(session: nox.Session, flavor: str) -> None:
    """Build (or reuse, by content-hash tag) the toolchain image; needs a running Docker engine."""
    session.run(sys.executable, "-m", "pypto.toolchain.images", "build", "--flavor", flavor, *session.posargs)


@nox.session(python=False, tags=["docker"], requires=["images(sim)"])
def container_tests(session: nox.Session) -> None:
    """Compile/run in the image, launcher isolation and ownership, refusal of mismatched images."""
    session.run(sys.executable, "-m", "pytest", "-q", "tests/container", "-m", "container", *session.posargs)


@nox.session(python=False, tags=["examples"])
@nox.parametrize("platform", SIM_PLATFORMS)
def examples(session: nox.Session, platform: str) -> None:
    """Run every examples/<group>/*.py script on one sim platform (passed as its argument)."""
    scripts = sorted(p for p in (ROOT / "examples").glob("*/*.py") if not p.name.startswith("_"))
    if not scripts:
        session.skip("no examples yet")
    for script in scripts:
        session.run(sys.executable, str(script), platform, *session.posargs, env={"PYPTO_PLATFORM": platform})


@nox.session(python=False, tags=["examples", "sweep"])
def sweep(session: nox.Session) -> None:
    """``pypto sweep`` over examples/ on both sim platforms (compile and run each kernel; Dask when installed)."""
    executor = "dask" if importlib.util.find_spec("distributed") else "local"
    session.run(sys.executable, "-m", "pypto", "sweep", str(ROOT / "examples"), "--platform", "a2a3sim",
                "--platform", "a5sim", "--run", "--executor", executor, "--workers", "2",
                "--results", str(ROOT / "build_output" / "sweep-results.jsonl"), *session.posargs)


@nox.session(python=False, tags=["bench"])
def bench(session: nox.Session) -> None:
    """Benchmarks under benchmarks/ (pytest-benchmark files, else plain scripts)."""
    bench_dir = ROOT / "benchmarks"
    tests_ = sorted(bench_dir.glob("test_*.py")) + sorted(bench_dir.glob("*_test.py"))
    if tests_:
        session.run(sys.executable, "-m", "pytest", "-q", *map(str, tests_), *session.posargs)
        return
    scripts = sorted(p for p in bench_dir.glob("*.py") if not p.name.startswith("_"))
    if not scripts:
        session.skip("no benchmarks yet")
    for script in scripts:
        session.run(sys.executable, str(script), *session.posargs)


@nox.session(python=False, tags=["fuzz"])
@nox.parametrize("target", [nox.param("kernels", id="kernels"), nox.param("cli", id="cli")])
def fuzz(session: nox.Session, target: str) -> None:
    """Fuzzing through the CLI, longer than the suite's bounded runs (``nox -s fuzz`` runs both).

    ``fuzz(kernels)``: ``FUZZ_EXAMPLES`` mutated example kernels (default 2000) from seed ``FUZZ_SEED``.
    ``fuzz(cli)``: ``CLI_FUZZ_EXAMPLES`` drawn argument vectors and environments for every subcommand
    (default 1000) from seed ``CLI_FUZZ_SEED`` (tests/reliability/test_cli_property.py). A seed
    defaults to a fresh one, printed so a failure can be replayed. No case may exit 1, print a
    traceback, die of a signal or hang (nor, for the CLI, create files outside the dirs it names).
    """
    import os
    import random

    prefix, default, tests_ = (("FUZZ", "2000", "tests/fuzz") if target == "kernels" else
                               ("CLI_FUZZ", "1000", "tests/reliability/test_cli_property.py"))
    seed = os.environ.get(f"{prefix}_SEED") or str(random.SystemRandom().randrange(2**31))
    examples = os.environ.get(f"{prefix}_EXAMPLES", default)
    session.log(f"fuzz({target}): {examples} cases, {prefix}_SEED={seed}")
    session.run(sys.executable, "-m", "pytest", "-q", "-s", tests_, *session.posargs,
                env={f"{prefix}_SEED": seed, f"{prefix}_EXAMPLES": examples})


@nox.session(python=False, tags=["upstream"])
@nox.parametrize("platform", SIM_PLATFORMS)
def upstream(session: nox.Session, platform: str) -> None:
    """Upstream PyPTO's manual blocks and example scripts against this pypto (needs a checkout:
    ``nox -s "upstream(a2a3sim)" -- --upstream DIR``)."""
    session.run(sys.executable, str(ROOT / "benchmarks" / "upstream_compat.py"), "--platform", platform,
                *session.posargs)
