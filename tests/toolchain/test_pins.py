"""Pinned values live only in toolchains/*.toml: nothing else in the repository may copy them.

Dockerfiles, nox sessions, CI scripts and code read pins through ``load_manifest()`` or
``pypto toolchain show --get KEY``. Allowed to mention them: the manifests, tests, READMEs, and
pyproject.toml's ``ptoas==`` requirement (pip needs it statically; test_manifest checks it agrees).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from pypto.toolchain.manifest import Manifest, list_manifests, load_manifest

REPO = Path(__file__).resolve().parents[2]
ALLOWED_DIRS = ("toolchains/", "tests/")
# Known copies in files owned by others, to be replaced by manifest reads (reported to the lead).
PENDING: dict[str, str] = {
}


def _patterns(m: Manifest) -> dict[str, re.Pattern[str]]:
    esc = re.escape
    version = esc(m.ptoas.version)
    found = {
        "ptoas.sha256": esc(m.ptoas.sha256),
        "ptoas.wheel": esc(m.ptoas.wheel),
        "ptoas requirement": rf"ptoas\s*==\s*{version}\b|ptoas-{version}-|PTOAS_VERSION\s*[:=]\s*['\"]?{version}",
        "base_image.reference": esc(m.base_image.reference),
        "base_image.suite": rf"(?i:suite)\W{{1,3}}{esc(m.base_image.suite)}\b|debian:{esc(m.base_image.suite)}\b",
        "hardware.cann.version": esc(m.hardware.cann.version),
        "hardware.cann.toolkit_installer": esc(m.hardware.cann.toolkit_installer),
        "sim.isa_version": rf"\b{esc(m.sim.isa_version)}\b",
        "sim.runtime_abi": rf"\b{esc(m.sim.runtime_abi)}\b",
    }
    optional = {"hardware.cann.toolkit_sha256": m.hardware.cann.toolkit_sha256,
                "hardware.simpler.commit": m.hardware.simpler.commit,
                "base_image.digest": m.base_image.digest}
    found.update({k: esc(v) for k, v in optional.items() if v})
    return {k: re.compile(v) for k, v in found.items()}


def _repo_files() -> list[str]:
    proc = subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("not a git checkout")
    return sorted(set(proc.stdout.split()))


def _allowed(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return rel.startswith(ALLOWED_DIRS) or name.upper().startswith("README") or rel == "pyproject.toml"


def _text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192] or len(data) > 2_000_000:
        return None
    return data.decode("utf-8", errors="replace")


def _copies() -> list[str]:
    patterns = {k: p for v in list_manifests() for k, p in _patterns(load_manifest(v)).items()}
    hits = []
    for rel in _repo_files():
        if _allowed(rel) or rel in PENDING:
            continue
        text = _text(REPO / rel)
        if text is None:
            continue
        for key, pattern in patterns.items():
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                hits.append(f"{rel}:{line}: {key} ({match.group(0)!r})")
    return hits


def test_pinned_values_only_in_manifests() -> None:
    hits = _copies()
    assert not hits, "pinned values copied outside toolchains/*.toml; read them from the manifest instead:\n" + \
        "\n".join(hits)


def test_pending_exceptions_still_exist() -> None:
    for rel in PENDING:
        if not (REPO / rel).is_file():
            pytest.fail(f"{rel} is gone; remove it from PENDING")


def test_patterns_catch_copies() -> None:
    m = load_manifest()
    pats = _patterns(m)
    samples = {
        "ptoas.sha256": f"ARG PTOAS_SHA256={m.ptoas.sha256}",
        "ptoas requirement": f"pip install ptoas=={m.ptoas.version}",
        "base_image.suite": f"debootstrap --variant=minbase --suite {m.base_image.suite}",
        "base_image.reference": f"FROM {m.base_image.reference}",
        "hardware.cann.version": f"CANN_VERSION={m.hardware.cann.version}",
        "sim.isa_version": f'#define PYPTO_SIM_ISA "{m.sim.isa_version}"',
    }
    for key, sample in samples.items():
        assert pats[key].search(sample), key
    assert not pats["base_image.suite"].search('SUITE_GLIBC = {"bullseye": 31, "bookworm": 36}')
