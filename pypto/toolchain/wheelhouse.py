"""Hash-locked wheelhouse for pypto images: write the lock, download and verify the wheels on the host.

Images cannot reach PyPI at build time, so every wheel is downloaded here, checked against its
sha256, and installed in the image with ``pip install --no-index --require-hashes``.

    python -m pypto.toolchain.wheelhouse lock  [--toolchain VERSION]            # rewrite docker/requirements.lock
    python -m pypto.toolchain.wheelhouse fetch [--toolchain VERSION] --dest DIR  # fill DIR, print {file: sha256}

The versions come from the toolchain manifest (``[image.wheels]``, ``[image.torch_wheels]``,
``[ptoas]``, ``[python]``, ``[base_image].suite``); the lock adds the hashes. ptoas is pinned by the
manifest's own sha256. Every pin is exact, local version included (``torch==2.13.0+cpu``), so pip
never resolves another build of a package.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pypto.errors import ToolchainError
from pypto.toolchain.manifest import Manifest, load_manifest

_PACKAGE_REPO = Path(__file__).resolve().parents[2]
# Highest glibc of each base suite: wheels tagged above it would not load in the image.
SUITE_GLIBC = {"bullseye": 31, "bookworm": 36, "trixie": 41, "jammy": 35, "noble": 39}
_LOCK_LINE = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+) \\\n\s+--hash=sha256:([0-9a-f]{64})$", re.M)


def find_checkout() -> Path:
    """The pypto source checkout image builds read (``docker/``, ``toolchains/``, ``examples/``).

    The checkout this module was imported from (editable install, or ``python -m`` from the repo
    root), else the current directory when it is one (a regular install run from a clone).
    """
    for cand in (_PACKAGE_REPO, Path.cwd()):
        if (cand / "docker" / "sim.Dockerfile").is_file() and (cand / "toolchains").is_dir():
            return cand
    raise ToolchainError(
        "Image builds need a pypto source checkout (docker/sim.Dockerfile, toolchains/); "
        f"neither {_PACKAGE_REPO} nor the current directory {Path.cwd()} is one",
        hint="clone the pypto repository and run the build from its root directory",
    )


def lock_path() -> Path:
    return find_checkout() / "docker" / "requirements.lock"


@dataclass(frozen=True)
class Pin:
    """One wheel: normalized name, exact version, expected sha256."""

    name: str
    version: str
    sha256: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version} \\\n    --hash=sha256:{self.sha256}"


def normalize(name: str) -> str:
    """PEP 503 name normalization."""
    return re.sub(r"[-_.]+", "-", name).lower()


def target_args(manifest: Manifest) -> list[str]:
    """pip download flags selecting wheels for the image's interpreter and glibc."""
    py = manifest.python.version
    suite = manifest.base_image.suite
    if suite not in SUITE_GLIBC:
        raise ToolchainError(f"Unknown base suite '{suite}'", hint=f"add its glibc to SUITE_GLIBC in {__file__}")
    plats = [f"manylinux_2_{m}_x86_64" for m in range(SUITE_GLIBC[suite], 16, -1)]
    plats += ["manylinux2014_x86_64", "linux_x86_64"]
    abi = "cp" + py.replace(".", "")
    args = ["--only-binary=:all:", "--no-deps", "--python-version", py, "--implementation", "cp"]
    args += [x for a in (abi, "abi3", "none") for x in ("--abi", a)]
    return args + [x for p in plats for x in ("--platform", p)]


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def pip_download(reqs: list[str], dest: Path, manifest: Manifest, require_hashes: bool) -> None:
    """Run ``pip download`` into ``dest``; raise with a repro command on failure."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(reqs) + "\n")
    argv = [sys.executable, "-m", "pip", "download", "-q", "-d", str(dest), *target_args(manifest), "-r", f.name]
    if require_hashes:
        argv.append("--require-hashes")
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainError("pip download of the image wheels failed", stderr=proc.stderr.strip()[-4000:],
                             repro=shlex.join(argv), hint=f"requirements were: {', '.join(reqs)}")
    Path(f.name).unlink()


def wheel_file(dest: Path, name: str, version: str) -> Path:
    """The downloaded wheel for name==version in ``dest``."""
    stem = re.sub(r"[-_.]+", "_", name).lower()
    for p in sorted(dest.glob("*.whl")):
        parts = p.name.split("-")
        if re.sub(r"[-_.]+", "_", parts[0]).lower() == stem and parts[1] == version:
            return p
    raise ToolchainError(f"{name}=={version} was not downloaded into {dest}")


def ptoas_pin(manifest: Manifest) -> Pin:
    return Pin("ptoas", manifest.ptoas.version, manifest.ptoas.sha256)


def all_wheels(manifest: Manifest) -> dict[str, str]:
    """Every wheel of every flavor, normalized name -> version (what the lock covers)."""
    return {normalize(k): v for k, v in manifest.image.flavor_wheels(with_torch=True).items()}


def write_lock(manifest: Manifest, out: Path | None = None) -> list[Pin]:
    """Download every ``[image.wheels]`` and ``[image.torch_wheels]`` pin, hash it, write the lock."""
    out = out or lock_path()
    wheels = all_wheels(manifest)
    with tempfile.TemporaryDirectory() as tmp:
        pip_download([f"{n}=={v}" for n, v in sorted(wheels.items())], Path(tmp), manifest, False)
        pins = [Pin(n, v, sha256_of(wheel_file(Path(tmp), n, v))) for n, v in sorted(wheels.items())]
    source = manifest.path.name if manifest.path else f"{manifest.version}.toml"
    header = [
        f"# Wheels for pypto images, from toolchains/{source} [image.wheels] and [image.torch_wheels].",
        "# Generated by `python -m pypto.toolchain.wheelhouse lock`; do not edit. ptoas is pinned by the manifest.",
        f"# Target: {' '.join(target_args(manifest)[2:8])} (base {manifest.base_image.suite})",
    ]
    out.write_text("\n".join(header + [p.requirement for p in pins]) + "\n")
    return pins


def read_lock(manifest: Manifest, path: Path | None = None) -> list[Pin]:
    """Parse the lock and check it covers exactly the manifest's wheel versions."""
    path = path or lock_path()
    if not path.is_file():
        raise ToolchainError(f"{path} is missing", hint="create it with: python -m pypto.toolchain.wheelhouse lock")
    pins = [Pin(normalize(n), v, h) for n, v, h in _LOCK_LINE.findall(path.read_text())]
    want = all_wheels(manifest)
    have = {p.name: p.version for p in pins}
    if want != have:
        diff = sorted(set(want.items()) ^ set(have.items()))
        raise ToolchainError(
            f"{path} does not match the manifest's [image.wheels]/[image.torch_wheels] (differences: {diff})",
            hint="regenerate it with: python -m pypto.toolchain.wheelhouse lock",
        )
    return pins


def flavor_pins(manifest: Manifest, with_torch: bool, lock: Path | None = None) -> list[Pin]:
    """The locked pins one flavor installs, plus ptoas."""
    names = {normalize(n) for n in manifest.image.flavor_wheels(with_torch)}
    return [p for p in read_lock(manifest, lock) if p.name in names] + [ptoas_pin(manifest)]


def fetch(manifest: Manifest, dest: Path, *, with_torch: bool = True, lock: Path | None = None) -> dict[str, str]:
    """Make ``dest`` hold every wheel of the flavor, each verified; return {file name: sha256}."""
    pins = flavor_pins(manifest, with_torch, lock)
    dest.mkdir(parents=True, exist_ok=True)
    missing = []
    for pin in pins:
        try:
            wheel_file(dest, pin.name, pin.version)
        except ToolchainError:
            missing.append(pin.requirement.replace("\\\n    ", ""))
    if missing:
        pip_download(missing, dest, manifest, True)
    files: dict[str, str] = {}
    for pin in pins:
        path = wheel_file(dest, pin.name, pin.version)
        digest = sha256_of(path)
        if digest != pin.sha256:
            raise ToolchainError(f"{path} has sha256 {digest}, expected {pin.sha256} ({pin.name}=={pin.version})",
                                 hint=f"delete {path} and build again (it is downloaded anew)")
        files[path.name] = digest
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pypto.toolchain.wheelhouse", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["lock", "fetch"])
    parser.add_argument("--toolchain", help="toolchain version (default: newest manifest)")
    parser.add_argument("--dest", type=Path, help="wheelhouse directory for fetch")
    parser.add_argument("--no-torch", action="store_true", help="fetch: only the sim-slim wheels")
    parser.add_argument("--lock", type=Path, help="lock file (default: docker/requirements.lock)")
    args = parser.parse_args(argv)
    try:
        manifest = load_manifest(args.toolchain)
        if args.command == "lock":
            pins = write_lock(manifest, args.lock)
            print(f"wrote {args.lock or lock_path()} ({len(pins)} wheels)", file=sys.stderr)
            return 0
        if args.dest is None:
            parser.error("fetch needs --dest DIR")
        print(json.dumps(fetch(manifest, args.dest, with_torch=not args.no_torch, lock=args.lock), indent=1,
                         sort_keys=True))
        return 0
    except ToolchainError as exc:
        print(f"wheelhouse: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
