"""A pytest plugin that runs upstream PyPTO's ``tests/st/runtime`` programs on pypto's simulators.

Load it with ``-p pypto_st_plugin --noconftest`` and this folder on ``PYTHONPATH`` (see
``benchmarks/_compat_st.py``): it puts our ``harness`` package ahead of upstream's, registers the
command-line options upstream's tests read (``--platform`` as a comma list, ``--device``,
``--strategy``, ``--codegen-only``, ``--save-kernels``/``--kernels-dir``, ``--dump-passes`` and the
diagnostic flags; the scheduling options of upstream's device pool are accepted and ignored), and
gives the fixtures ``test_config``, ``test_runner``, ``device_ids``, ``optimization_strategy`` and
``tensor_shape``. A parametrized variant whose ``platform`` is outside ``--platform`` (or outside
the item's ``@pytest.mark.platforms(...)``) is deselected, as upstream's conftest does. A test whose
marker names none of the ``--platform`` ids is deselected before anything runs, even when its module's own
``pytest_generate_tests`` refuses the session's platforms with a ``pytest.UsageError`` (a file upstream runs
on one hardware platform only); each such test is named on a ``pypto-st restricted: <nodeid> -> <ids>``
line, which ``benchmarks/_compat_st.py`` reads to list the file as not run rather than as a failure.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if sys.path[:1] != [_HERE]:
    sys.path.insert(0, _HERE)  # our harness package before any other 'harness' on the path

from harness.core.harness import ALL_PLATFORM_IDS  # noqa: E402
from harness.core.test_runner import TestRunner  # noqa: E402

from pypto.runtime.runner import RunConfig  # noqa: E402

STANDARD_SHAPES = [(64, 64), (128, 128), (256, 256)]
_IGNORED_VALUE_OPTIONS = ("--precompile-workers", "--task-max-time", "--task-queue-timeout", "--task-submit-device",
                          "--execute-batch-size", "--pypto-log-level", "--runtime-log-level",
                          "--chip-swimlane-level")
_FLAGS = ("--save-kernels", "--codegen-only", "--execute-via-task-submit", "--analyze-auto-scopes-for-deps",
          "--enable-chip-swimlane", "--enable-dep-gen", "--enable-pmu", "--enable-scope-stats")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pypto-st", "upstream system tests on pypto")
    group.addoption("--platform", default="a2a3sim", help="comma list of platforms to keep (default a2a3sim)")
    group.addoption("--device", default="0", help="device id, or a comma list / range such as 0-3")
    group.addoption("--strategy", default="Default", help="optimization strategy name")
    group.addoption("--memory-planner", default=None, help="accepted; the compile uses pypto's planner")
    group.addoption("--kernels-dir", default=None, help="with --save-kernels: keep each case's artifact here")
    group.addoption("--dump-passes", action="store_true", default=False, help="dump IR after every pass")
    group.addoption("--dump-args", type=int, default=0, help="dump kernel arguments (0, 1 or 2)")
    for flag in _FLAGS:
        group.addoption(flag, action="store_true", default=False, help="as upstream's option of this name")
    for opt in _IGNORED_VALUE_OPTIONS:
        group.addoption(opt, default=None, help="accepted and ignored (upstream's device pool)")


def parse_platforms(raw: str | None) -> tuple[str, ...]:
    """The platform ids of a ``--platform`` value, in order (an unknown id is a usage error)."""
    ids = tuple(p.strip() for p in str(raw or "").split(",") if p.strip())
    unknown = [p for p in ids if p not in ALL_PLATFORM_IDS]
    if unknown:
        raise pytest.UsageError(f"--platform: unknown platform(s) {unknown}; choose from {list(ALL_PLATFORM_IDS)}")
    return ids


def parse_devices(raw: str | int) -> list[int]:
    """``0``, ``0,2`` or ``0-3`` as a list of device ids."""
    out: list[int] = []
    for part in str(raw).split(","):
        lo, _, hi = part.strip().partition("-")
        out += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    return out


@pytest.fixture(scope="session")
def test_config(request: pytest.FixtureRequest) -> RunConfig:
    opt = request.config.getoption
    platforms = parse_platforms(opt("--platform"))
    kernels_dir = opt("--kernels-dir") if opt("--save-kernels") else None
    return RunConfig(platform=platforms[0] if platforms else "a2a3sim", device_id=parse_devices(opt("--device"))[0],
                     save_kernels=opt("--save-kernels"), save_kernels_dir=kernels_dir,
                     dump_passes=opt("--dump-passes"), codegen_only=opt("--codegen-only"),
                     enable_dump_args=opt("--dump-args"), enable_pmu=int(opt("--enable-pmu")),
                     enable_dep_gen=opt("--enable-dep-gen"), enable_scope_stats=opt("--enable-scope-stats"),
                     analyze_auto_scopes_for_deps=opt("--analyze-auto-scopes-for-deps"))


@pytest.fixture(scope="session")
def device_ids(request: pytest.FixtureRequest) -> list[int]:
    return parse_devices(request.config.getoption("--device"))


@pytest.fixture(scope="session")
def test_runner(test_config: RunConfig) -> TestRunner:
    return TestRunner(test_config)


@pytest.fixture
def optimization_strategy(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--strategy")


@pytest.fixture(params=STANDARD_SHAPES)
def tensor_shape(request: pytest.FixtureRequest) -> list[int]:
    return list(request.param)


@pytest.fixture(autouse=True)
def _artifacts_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A case that compiles without an output_dir writes under its own temporary directory."""
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", os.fspath(tmp_path / "build_output"))


RESTRICTED = "pypto-st restricted:"


def _marker_ids(node: pytest.Item | pytest.Metafunc) -> tuple[str, ...] | None:
    """The ids of the node's ``platforms`` marker (function, class or module), None without one."""
    holder = node.definition if isinstance(node, pytest.Metafunc) else node
    marker = next(holder.iter_markers(name="platforms"), None)
    return None if marker is None else tuple(str(a) for a in marker.args)


def _excluded(config: pytest.Config, ids: tuple[str, ...] | None) -> bool:
    cli = set(parse_platforms(config.getoption("--platform")) or ALL_PLATFORM_IDS)
    return ids is not None and not cli & set(ids)


@pytest.hookimpl(wrapper=True)
def pytest_generate_tests(metafunc: pytest.Metafunc):
    """A module's own generator that refuses our platforms is moot for a test its marker excludes anyway."""
    try:
        return (yield)
    except pytest.UsageError:
        if _excluded(metafunc.config, _marker_ids(metafunc)):
            return None  # deselected in pytest_collection_modifyitems, never run
        raise


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "platforms(*ids): platforms this test may run on")
    for name in ("a2a3", "a5", "hardware", "sim", "slow", "distributed"):
        config.addinivalue_line("markers", f"{name}: upstream marker (accepted)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep an item only where its platform (parameter or marker) is among ``--platform``."""
    cli = set(parse_platforms(config.getoption("--platform")) or ALL_PLATFORM_IDS)
    keep, drop = [], []
    for item in items:
        marker = next(item.iter_markers(name="platforms"), None)
        allowed = cli & (set(marker.args) if marker is not None else set(ALL_PLATFORM_IDS))
        platform = getattr(item, "callspec", None) and item.callspec.params.get("platform")
        (keep if (platform in allowed if platform else allowed) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for item in drop:
        ids = _marker_ids(item)
        if reporter is not None and _excluded(config, ids):
            reporter.write_line(f"{RESTRICTED} {item.nodeid} -> {','.join(ids or ())}")
