"""Counts the documentation blocks the session executed and prints the figure at the end.

``test_runnable_blocks.py`` records each block it ran (pass or fail) through the ``executed_blocks``
fixture; the summary line ``docs: N runnable blocks executed (M marked in docs/)`` shows both, so a
run that skipped or deselected blocks says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_blocks import collect

DOCS = Path(__file__).resolve().parents[2] / "docs"
_EXECUTED = pytest.StashKey[list]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_EXECUTED] = []


@pytest.fixture
def executed_blocks(request: pytest.FixtureRequest) -> list:
    return request.config.stash[_EXECUTED]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    ran = config.stash.get(_EXECUTED, None)
    if ran is None:
        return
    marked = len(collect(DOCS)[0])
    terminalreporter.write_line(f"docs: {len(ran)} runnable blocks executed ({marked} marked in docs/)")
