"""Every example kernel's artifact directory is byte-identical to the recorded one (speed work guard)."""

from __future__ import annotations

import json

import pytest
from artifact_digest import GOLDEN, MODES, compile_digest, example_programs

GOLDEN_DIGESTS = json.loads(GOLDEN.read_text())
PROGRAMS = list(example_programs())


def test_golden_covers_every_example_kernel():
    assert sorted(GOLDEN_DIGESTS) == sorted(f"{label} [{mode}]" for label, _ in PROGRAMS for mode in MODES)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize(("label", "program"), PROGRAMS, ids=[label for label, _ in PROGRAMS])
def test_artifact_directory_is_unchanged(label, program, mode):
    got = compile_digest(program, MODES[mode])
    want = GOLDEN_DIGESTS[f"{label} [{mode}]"]
    changed = sorted(k for k in set(got["files"]) | set(want["files"]) if got["files"].get(k) != want["files"].get(k))
    assert not changed, f"{label} [{mode}]: these artifact files changed: {changed} " \
                        f"(after a deliberate output change: python tests/artifact/artifact_digest.py --update)"
    assert (got["passes_dump"], got["dump_files"]) == (want["passes_dump"], want["dump_files"]), \
        f"{label} [{mode}]: passes_dump/ changed (after a deliberate change: " \
        f"python tests/artifact/artifact_digest.py --update)"
