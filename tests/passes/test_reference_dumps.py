"""Our pipeline on each upstream 00_frontend program vs the upstream dumps (needs pl.parse)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto.ir.structural import structural_diff
from pypto.passes import get_pass
from pypto.passes.context import PassContext
from pypto.passes.pipelines import DEFAULT, OWN_SLOTS

REF = Path(__file__).parent / "reference"
KERNELS = sorted(p.name for p in REF.iterdir())
CHECKED = sorted({int(p.name[:2]) for p in REF.glob("*/*.py.txt")} - {0})


def _parse():
    pl = pytest.importorskip("pypto.language")
    if not hasattr(pl, "parse"):
        pytest.skip("pypto.language.parse is not available yet")
    return pl.parse


@pytest.mark.parametrize("kernel", KERNELS)
def test_pipeline_matches_reference_dumps(kernel):
    parse = _parse()
    program = parse((REF / kernel / "00_frontend.py.txt").read_text())
    expected = {n: REF / kernel for n in CHECKED}
    with PassContext():
        index = 0  # the upstream dump number: our own slots (OWN_SLOTS) have none
        for name in DEFAULT:
            program = get_pass(name)().run(program)
            if name in OWN_SLOTS:
                continue
            index += 1
            if index in expected:
                path = next(expected[index].glob(f"{index:02d}_after_*.py.txt"))
                want = parse(path.read_text())
                diff = structural_diff(program, want)
                assert diff is None, f"{kernel}: after {name} ({path.name}): {diff}"


@pytest.mark.parametrize("kernel", KERNELS)
def test_roundtrip_verification_with_dumps(kernel, tmp_path):
    parse = _parse()
    from pypto.ir import PassDumpLevel, VerificationLevel
    from pypto.passes.manager import run_pipeline

    program = parse((REF / kernel / "00_frontend.py.txt").read_text())
    ctx = PassContext(verification_level=VerificationLevel.ROUNDTRIP)
    result = run_pipeline(program, ctx=ctx, dump_level=PassDumpLevel.CONCISE, dump_dir=tmp_path)
    assert len(list(tmp_path.glob("*_after_*.py"))) == len(DEFAULT)
    assert not [d for d in result.diagnostics if d.severity.value == "warning"]
