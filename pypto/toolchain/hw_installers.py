"""The user-supplied pieces of a ``hw`` image (CANN installers, simpler archive), checked against the manifest.

Nothing is downloaded: a hw build refuses, before it starts, a missing installer directory or
file, a sha256 that differs from the manifest, a manifest that pins none, or a simpler archive made
from another commit than the manifest's.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pypto.errors import ToolchainError
from pypto.toolchain.manifest import Manifest

HW_BUILD = "python -m pypto.toolchain.images build --flavor hw --toolchain {version} --installers <dir>"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def hw_required(manifest: Manifest) -> list[tuple[str, str, str]]:
    """(file name, expected sha256, manifest key) of every installer a hw image needs."""
    cann = manifest.hardware.cann
    need = [(cann.toolkit_installer, cann.toolkit_sha256, "hardware.cann.toolkit_sha256")]
    for backend, name in sorted(cann.kernels_installer.items()):
        if name:
            need.append((name, cann.kernels_sha256.get(backend, ""), f"hardware.cann.kernels_sha256.{backend}"))
    return need


def _simpler_archive(manifest: Manifest, installers: Path, problems: list[str]) -> Path | None:
    import tarfile

    commit = manifest.hardware.simpler.commit
    if not commit:
        problems.append(f"the manifest pins no simpler commit (set hardware.simpler.commit in {manifest.path})")
        return None
    path = installers / f"simpler-{commit}.tar.gz"
    if not path.is_file():
        problems.append(f"missing {path.name}: create it in a simpler checkout with "
                        f"`git archive --format=tar.gz -o {path.name} {commit}`")
        return None
    with tarfile.open(path) as tar:
        embedded = tar.pax_headers.get("comment", "")
    if embedded != commit:
        problems.append(f"{path.name} was archived from commit '{embedded or 'unknown'}', expected {commit} "
                        "(use `git archive`, which records the commit)")
    return path


def check_installers(manifest: Manifest, installers: Path | None) -> tuple[list[str], Path]:
    """Check the user-supplied CANN installers and simpler archive against the manifest.

    Returns the SHA256SUMS lines and the simpler archive; raises ToolchainError listing every problem.
    """
    if installers is None or not installers.is_dir():
        names = ", ".join(n for n, _, _ in hw_required(manifest))
        raise ToolchainError(
            f"A hw image needs the CANN installers and a simpler archive, supplied by you: {names}, "
            f"simpler-<commit>.tar.gz" + (f" (directory {installers} does not exist)" if installers else ""),
            hint=f"put them in one directory and run: {HW_BUILD.format(version=manifest.version)}",
        )
    problems: list[str] = []
    sums = []
    for name, expected, key in hw_required(manifest):
        path = installers / name
        if not expected:
            problems.append(f"the manifest pins no sha256 for {name} (set {key} in {manifest.path})")
        elif not path.is_file():
            problems.append(f"missing {path}")
        elif (actual := _sha256(path)) != expected:
            problems.append(f"{path} has sha256 {actual}, the manifest ({key}) expects {expected}")
        else:
            sums.append(f"{expected}  {name}")
    simpler = _simpler_archive(manifest, installers, problems)
    if problems:
        raise ToolchainError(f"Refusing to build the hw image for toolchain {manifest.version}:\n  - "
                             + "\n  - ".join(problems),
                             hint="supply exactly the installers the manifest pins; nothing is downloaded")
    assert simpler is not None
    return sums, simpler
