"""Markers shared by the runtime tests (a plain module: ``conftest`` is not importable by name)."""

import shutil

import pytest

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
