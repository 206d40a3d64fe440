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


SHARED_REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "upstream-pypto"


def test_full_upstream_reference_when_available() -> None:
    """All 350 original upstream dumps: from PYPTO_UPSTREAM_REFERENCE, else the shared/ dir beside the repo."""
    root = os.environ.get("PYPTO_UPSTREAM_REFERENCE") or (str(SHARED_REFERENCE) if SHARED_REFERENCE.is_dir() else "")
    if not root:
        pytest.skip("no upstream reference dir (set PYPTO_UPSTREAM_REFERENCE)")
    files = sorted(Path(root).glob("*/passes_dump/*.py"))
    assert files
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert python_print(pl.parse(text, filename=str(f))) == text, f
