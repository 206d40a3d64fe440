"""Every distinct upstream pass dump (7 kernels x 50 dumps, deduplicated into ``dumps/``) parses,
prints back byte-identically and re-parses to a structurally equal program."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pypto.language as pl
from pypto.ir.printer import python_print
from pypto.ir.structural import structural_diff

DUMPS = sorted((Path(__file__).parent / "dumps").glob("*/*.py.txt"))


@pytest.mark.parametrize("path", DUMPS, ids=[f"{p.parent.name}/{p.name[:-7]}" for p in DUMPS])
def test_dump_round_trips_exactly(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    program = pl.parse(text, filename=path.name)
    printed = python_print(program)
    assert printed == text
    assert structural_diff(program, pl.parse(printed)) is None


def test_corpus_covers_all_kernels() -> None:
    assert len({p.parent.name for p in DUMPS}) == 7
    assert len(DUMPS) >= 60


def test_full_upstream_reference_when_available() -> None:
    """Set PYPTO_UPSTREAM_REFERENCE to the upstream artifact dir to check all 350 original files."""
    root = os.environ.get("PYPTO_UPSTREAM_REFERENCE")
    if not root:
        pytest.skip("PYPTO_UPSTREAM_REFERENCE not set")
    files = sorted(Path(root).glob("*/passes_dump/*.py"))
    assert files
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert python_print(pl.parse(text, filename=str(f))) == text, f
