"""Kept for artifacts written by earlier pypto versions: their ``kernel_config.py`` imports
``ArgDirection`` from here. New artifacts import it from :mod:`pypto.artifact.kernel_config`."""

from __future__ import annotations

from pypto.artifact.kernel_config import ArgDirection

__all__ = ["ArgDirection"]
