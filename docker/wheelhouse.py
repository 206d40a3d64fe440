#!/usr/bin/env python3
"""Hash-locked wheelhouse for pypto images: write the lock, download and verify the wheels on the host.

Images cannot reach PyPI at build time, so every wheel is downloaded here, checked against its
sha256, and installed in the image with ``pip install --no-index --require-hashes``.

    python docker/wheelhouse.py lock  [--toolchain VERSION]           # rewrite docker/requirements.lock
    python docker/wheelhouse.py fetch [--toolchain VERSION] --dest DIR  # fill DIR, print {file: sha256}

The versions come from the toolchain manifest (``[image.wheels]``, ``[ptoas]``, ``[python]``,
``[base_image].suite``); the lock adds the hashes. ptoas is pinned by the manifest's own sha256.
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
import tomllib
from dataclasses import dataclass
from pathlib import Path

DOCKER_DIR = Path(__file__).resolve().parent
REPO = DOCKER_DIR.parent
LOCK = DOCKER_DIR / "requirements.lock"
# Highest glibc of each base suite: wheels tagged above it would not load in the image.
SUITE_GLIBC = {"bullseye": 31, "bookworm": 36, "trixie": 41, "jammy": 35, "noble": 39}
_LOCK_LINE = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+) \\\n\s+--hash=sha256:([0-9a-f]{64})$", re.M)


class WheelhouseError(Exception):
    """A lock or download problem; the message says how to fix it."""


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


def load_manifest(version: str | None) -> tuple[dict, Path]:
    """Read ``toolchains/<version>.toml`` (newest when None) as plain data."""
    tdir = REPO / "toolchains"
    paths = sorted(tdir.glob("*.toml"), key=lambda p: tuple(int(x) for x in re.findall(r"\d+", p.stem)))
    if version:
        paths = [p for p in paths if p.stem == version]
    if not paths:
        raise WheelhouseError(f"no toolchain manifest {version or '*'}.toml in {tdir}")
    return tomllib.loads(paths[-1].read_text()), paths[-1]


def target_args(manifest: dict) -> list[str]:
    """pip download flags selecting wheels for the image's interpreter and glibc."""
    py = manifest["python"]["version"]
    suite = manifest["base_image"]["suite"]
    if suite not in SUITE_GLIBC:
        raise WheelhouseError(f"unknown base suite '{suite}'; add its glibc to SUITE_GLIBC in {__file__}")
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


def pip_download(reqs: list[str], dest: Path, manifest: dict, require_hashes: bool) -> None:
    """Run ``pip download`` into ``dest``; raise with a repro command on failure."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(reqs) + "\n")
    argv = [sys.executable, "-m", "pip", "download", "-q", "-d", str(dest), *target_args(manifest), "-r", f.name]
    if require_hashes:
        argv.append("--require-hashes")
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise WheelhouseError(f"pip download failed:\n{proc.stderr.strip()}\nrepro: {shlex.join(argv)}")
    Path(f.name).unlink()


def wheel_file(dest: Path, name: str, version: str) -> Path:
    """The downloaded wheel for name==version in ``dest``."""
    stem = re.sub(r"[-_.]+", "_", name).lower()
    for p in sorted(dest.glob("*.whl")):
        parts = p.name.split("-")
        if re.sub(r"[-_.]+", "_", parts[0]).lower() == stem and parts[1] == version:
            return p
    raise WheelhouseError(f"{name}=={version} was not downloaded into {dest}")


def ptoas_pin(manifest: dict) -> Pin:
    p = manifest["ptoas"]
    return Pin("ptoas", p["version"], p["sha256"])


def write_lock(manifest: dict, source: Path, out: Path = LOCK) -> list[Pin]:
    """Download every ``[image.wheels]`` pin, hash it and write the lock file."""
    wheels = {normalize(k): v for k, v in manifest["image"]["wheels"].items()}
    with tempfile.TemporaryDirectory() as tmp:
        pip_download([f"{n}=={v}" for n, v in sorted(wheels.items())], Path(tmp), manifest, False)
        pins = [Pin(n, v, sha256_of(wheel_file(Path(tmp), n, v))) for n, v in sorted(wheels.items())]
    header = [
        f"# Wheels for pypto images, from {source.parent.name}/{source.name} [image.wheels].",
        "# Generated by `python docker/wheelhouse.py lock`; do not edit. ptoas is pinned by the manifest.",
        f"# Target: {' '.join(target_args(manifest)[2:8])} (base {manifest['base_image']['suite']})",
    ]
    out.write_text("\n".join(header + [p.requirement for p in pins]) + "\n")
    return pins


def read_lock(manifest: dict, path: Path = LOCK) -> list[Pin]:
    """Parse the lock and check it covers exactly the manifest's wheel versions."""
    if not path.is_file():
        raise WheelhouseError(f"{path} is missing; create it with: python docker/wheelhouse.py lock")
    pins = [Pin(normalize(n), v, h) for n, v, h in _LOCK_LINE.findall(path.read_text())]
    want = {normalize(k): v for k, v in manifest["image"]["wheels"].items()}
    have = {p.name: p.version for p in pins}
    if want != have:
        diff = sorted(set(want.items()) ^ set(have.items()))
        raise WheelhouseError(
            f"{path} does not match the manifest's [image.wheels] (differences: {diff}); "
            "regenerate it with: python docker/wheelhouse.py lock"
        )
    return pins


def fetch(manifest: dict, dest: Path, lock: Path = LOCK) -> dict[str, str]:
    """Make ``dest`` hold every locked wheel plus ptoas, each verified; return {file name: sha256}."""
    pins = read_lock(manifest, lock) + [ptoas_pin(manifest)]
    dest.mkdir(parents=True, exist_ok=True)
    missing = []
    for pin in pins:
        try:
            wheel_file(dest, pin.name, pin.version)
        except WheelhouseError:
            missing.append(pin.requirement.replace("\\\n    ", ""))
    if missing:
        pip_download(missing, dest, manifest, True)
    files: dict[str, str] = {}
    for pin in pins:
        path = wheel_file(dest, pin.name, pin.version)
        digest = sha256_of(path)
        if digest != pin.sha256:
            raise WheelhouseError(
                f"{path} has sha256 {digest}, expected {pin.sha256} ({pin.name}=={pin.version}); "
                f"delete it and fetch again"
            )
        files[path.name] = digest
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["lock", "fetch"])
    parser.add_argument("--toolchain", help="toolchain version (default: newest manifest)")
    parser.add_argument("--dest", type=Path, help="wheelhouse directory for fetch")
    parser.add_argument("--lock", type=Path, default=LOCK)
    args = parser.parse_args(argv)
    try:
        manifest, source = load_manifest(args.toolchain)
        if args.command == "lock":
            pins = write_lock(manifest, source, args.lock)
            print(f"wrote {args.lock} ({len(pins)} wheels)", file=sys.stderr)
            return 0
        if args.dest is None:
            parser.error("fetch needs --dest DIR")
        print(json.dumps(fetch(manifest, args.dest, args.lock), indent=1, sort_keys=True))
        return 0
    except WheelhouseError as exc:
        print(f"wheelhouse: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
