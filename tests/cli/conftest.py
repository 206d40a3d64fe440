"""Isolate these tests from the caller's environment, config files and manifests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def clean_env(isolated_env: None) -> None:
    """No PYPTO_* variables, no config file in the working directory (see tests/conftest.py)."""
