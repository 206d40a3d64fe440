"""What is installed, what each platform needs, what is missing and how to get it.

``doctor()`` is read-only. ``verify_toolchain()`` checks the installed pieces against the manifest:
the ptoas distribution's version, and the sha256 of its installed files against the wheel's RECORD
(proof the files are those pip unpacked; that the wheel itself had the manifest's sha256 is enforced
at install time by ``pip install --require-hashes``, and can be checked here with ``wheel=``), the
g++ major version, and the presence of the simulator's include directory.
"""

from __future__ import annotations

import base64
import hashlib
import platform as _host
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

import pypto
from pypto.errors import ToolchainError
from pypto.toolchain.manifest import Manifest
from pypto.toolchain.platforms import PLATFORMS
from pypto.toolchain.settings import Settings, subprocess_env

SIM_INCLUDE = Path(pypto.__file__).resolve().parent / "runtime" / "sim" / "include"
_TIMEOUT = 30


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: ``name`` is ok or not, with details and how to fix it."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass(frozen=True, slots=True)
class PlatformStatus:
    """Whether a platform can be compiled for and run here."""

    platform: str
    backend: str
    needs: tuple[str, ...]
    missing: tuple[str, ...]
    how: tuple[str, ...]

    @property
    def ready(self) -> bool:
        """Nothing is missing."""
        return not self.missing


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """The whole doctor result."""

    checks: tuple[Check, ...]
    platforms: tuple[PlatformStatus, ...]
    selected_platform: str
    info: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """The selected platform has everything it needs."""
        return all(p.ready for p in self.platforms if p.platform == self.selected_platform)

    def to_json(self) -> dict:
        """A JSON-serialisable dict."""
        return {
            "ok": self.ok,
            "selected_platform": self.selected_platform,
            "info": self.info,
            "checks": [asdict(c) for c in self.checks],
            "platforms": [{**asdict(p), "ready": p.ready} for p in self.platforms],
        }


def _run(argv: list[str]) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT, env=subprocess_env())
    except (OSError, subprocess.TimeoutExpired):
        return None


def gxx_major(exe: str = "g++") -> int | None:
    """The major version of ``exe`` (``g++ -dumpversion``), or None if it does not run."""
    proc = _run([exe, "-dumpversion"])
    if proc is None or proc.returncode != 0:
        return None
    match = re.match(r"(\d+)", proc.stdout.strip())
    return int(match.group(1)) if match else None


def check_python(manifest: Manifest) -> Check:
    """The interpreter version against the manifest's image Python."""
    return Check("python", True, f"{_host.python_version()} (images use {manifest.python.version})")


def check_pypto() -> Check:
    """The pypto package itself."""
    return Check("pypto", True, f"{pypto.__version__} at {Path(pypto.__file__).resolve().parent}")


def check_ptoas(settings: Settings, manifest: Manifest) -> Check:
    """Find ptoas (``PTOAS_ROOT``, the pinned wheel via its shim, or PATH) and run ``--version``."""
    from pypto.toolchain.ptoas import find_ptoas, installed_wheel

    fix = f"pip install '{manifest.ptoas.requirement}' (or set PTOAS_ROOT to a ptoas release dir)"
    try:
        path = find_ptoas(settings.ptoas_root, settings.cache_dir)
    except ToolchainError as exc:
        return Check("ptoas", False, str(exc).splitlines()[0], fix)
    if path is None:
        return Check("ptoas", False, "not found (no PTOAS_ROOT, no ptoas wheel, nothing on PATH)", fix)
    proc = _run([str(path), "--version"])
    if proc is None or proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["no output"])[-1] if proc else "could not start"
        return Check("ptoas", False, f"{path} does not run: {detail}; repro: {path} --version", fix)
    llvm = _ptoas_version(proc.stdout + proc.stderr)
    install = installed_wheel() if settings.ptoas_root is None else None
    if install is None:
        return Check("ptoas", True, f"usable at {path} (not the pinned wheel; version unknown, LLVM {llvm})")
    ok = install.version == manifest.ptoas.version
    detail = f"{install.version} usable at {path} (LLVM {llvm}; manifest pins {manifest.ptoas.version})"
    return Check("ptoas", ok, detail, "" if ok else fix)


def _ptoas_version(text: str) -> str | None:
    match = re.search(r"(\d+\.\d+\.\d+)", text)
    return match.group(1) if match else None


def check_gxx(manifest: Manifest) -> Check:
    """g++ on PATH with at least the manifest's major version."""
    want = manifest.compilers.gxx_min
    exe = shutil.which("g++")
    fix = f"install g++ >= {want} (Debian/Ubuntu: apt-get install g++)"
    if exe is None:
        return Check("g++", False, "not found on PATH", fix)
    major = gxx_major(exe)
    if major is None:
        return Check("g++", False, f"{exe} does not run; repro: {exe} -dumpversion", fix)
    return Check("g++", major >= want, f"{major} at {exe} (need {manifest.compilers.gxx})", "" if major >= want else fix)


def check_sim_include() -> Check:
    """The simulator's C++ include directory shipped inside pypto."""
    ok = SIM_INCLUDE.is_dir()
    return Check("sim include", ok, str(SIM_INCLUDE) if ok else f"{SIM_INCLUDE} is missing",
                 "" if ok else "reinstall pypto (the package ships pypto/runtime/sim/include)")


def check_docker(settings: Settings) -> Check:
    """Docker engine state: SDK ping when the docker package is importable, else the CLI."""
    fix = "start the Docker engine (needed only for --in-container and image builds)"
    try:
        import docker  # noqa: PLC0415
    except ImportError:
        docker = None
    if docker is not None and not hasattr(docker, "from_env"):  # a directory named docker/ shadows a missing SDK
        return Check("docker", False, f"'import docker' found {list(getattr(docker, '__path__', []))}, not the "
                     "docker SDK", "pip install 'docker>=7.0' (a pypto dependency; reinstall pypto)")
    if docker is not None:
        try:
            client = docker.from_env(timeout=5)
            client.ping()
            version = client.version().get("Version", "?")
            return Check("docker", True, f"engine {version} reachable (docker SDK)")
        except Exception as exc:  # noqa: BLE001 - any SDK failure means "engine not usable"
            return Check("docker", False, f"engine not reachable: {type(exc).__name__}: {exc}", fix)
    cli = shutil.which(settings.container_engine)
    if cli is None:
        return Check("docker", False, f"{settings.container_engine} CLI not found", fix)
    proc = _run([cli, "info", "--format", "{{.ServerVersion}}"])
    if proc is None or proc.returncode != 0:
        return Check("docker", False, f"engine not reachable; repro: {cli} info", fix)
    return Check("docker", True, f"engine {proc.stdout.strip()} reachable ({cli})")


def check_cann(settings: Settings, manifest: Manifest) -> Check:
    """CANN (``ccec`` and ASCEND_HOME_PATH) for hardware platforms."""
    home = settings.ascend_home_path
    ccec = shutil.which("ccec")
    if home is not None and home.is_dir() and ccec:
        return Check("CANN", True, f"ASCEND_HOME_PATH={home}, ccec at {ccec}")
    return Check("CANN", False, f"absent (ASCEND_HOME_PATH={home or 'unset'}, ccec {'at ' + ccec if ccec else 'not on PATH'})",
                 hw_image_hint(manifest))


def hw_image_hint(manifest: Manifest) -> str:
    """How to get a hardware toolchain: build the hw image from user-supplied installers."""
    from pypto.toolchain.images import build_command

    cann = manifest.hardware.cann
    return (
        f"build the hw image: {build_command('hw', manifest.version)}, where DIR holds the CANN {cann.version} "
        f"installers ({cann.toolkit_installer} and the kernels package for your chip) and a simpler archive "
        f"({manifest.hardware.simpler.repository}); their sha256 and commit are checked against toolchain "
        f"{manifest.version}'s manifest"
    )


def _platform_status(name: str, checks: dict[str, Check], manifest: Manifest) -> PlatformStatus:
    info = PLATFORMS[name]
    needs = ("ptoas", "g++", "sim include") if info.simulated else ("ptoas", "CANN")
    if name not in manifest.support.platforms:
        return PlatformStatus(name, info.backend, needs, ("toolchain support",),
                              (f"use a toolchain that lists {name} (`pypto toolchain list`)",))
    missing = tuple(n for n in needs if not checks[n].ok)
    how = tuple(checks[n].fix for n in missing)
    return PlatformStatus(name, info.backend, needs, missing, how)


def doctor(settings: Settings, with_docker: bool = True) -> DoctorReport:
    """Inspect this machine for the settings' toolchain; never changes anything but the shim cache."""
    manifest = settings.manifest
    found = [check_python(manifest), check_pypto(), check_ptoas(settings, manifest), check_gxx(manifest),
             check_sim_include(), check_cann(settings, manifest)]
    if with_docker:
        found.append(check_docker(settings))
    by_name = {c.name: c for c in found}
    statuses = tuple(_platform_status(p, by_name, manifest) for p in PLATFORMS)
    info = {"toolchain": manifest.version, "manifest_sha256": manifest.sha256,
            "manifest": str(manifest.path), "platform": settings.platform, "runtime": settings.runtime}
    return DoctorReport(tuple(found), statuses, settings.platform, info)


def _record_hash(entry: metadata.PackagePath) -> str | None:
    if entry.hash is None or entry.hash.mode != "sha256":
        return None
    return entry.hash.value


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()


def check_ptoas_install(manifest: Manifest, all_files: bool = False) -> Check:
    """The installed ptoas distribution: version and file hashes against its RECORD."""
    fix = f"pip install --force-reinstall '{manifest.ptoas.requirement}'"
    try:
        dist = metadata.distribution("ptoas")
    except metadata.PackageNotFoundError:
        return Check("ptoas wheel", False, "ptoas is not installed in this interpreter", fix)
    if dist.version != manifest.ptoas.version:
        return Check("ptoas wheel", False, f"installed {dist.version}, manifest pins {manifest.ptoas.version}", fix)
    entries = [e for e in dist.files or () if _record_hash(e)]
    if not all_files:
        entries = [e for e in entries if e.parts[-1] == "ptoas" or "ptoas.libs" in e.parts]
    bad = [str(e) for e in entries if _file_hash(Path(dist.locate_file(e))) != _record_hash(e)]
    if not entries or bad:
        detail = "no hashed files in RECORD" if not entries else f"{len(bad)} file(s) differ from RECORD: {bad[:3]}"
        return Check("ptoas wheel", False, detail, fix)
    return Check("ptoas wheel", True, f"{dist.version}: {len(entries)} installed file(s) match the wheel RECORD")


def check_wheel_file(manifest: Manifest, wheel: Path) -> Check:
    """A downloaded ptoas wheel against the manifest's file name and sha256."""
    if not wheel.is_file():
        return Check("ptoas wheel file", False, f"{wheel} does not exist", f"pip download --no-deps '{manifest.ptoas.requirement}'")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    ok = digest == manifest.ptoas.sha256
    detail = f"{wheel.name}: sha256 {digest}" + ("" if ok else f" != manifest {manifest.ptoas.sha256}")
    return Check("ptoas wheel file", ok, detail, "" if ok else "download the wheel again from PyPI")


def verify_toolchain(settings: Settings, all_files: bool = False, wheel: Path | None = None) -> list[Check]:
    """Check installed pieces against the settings' manifest (see the module docstring)."""
    manifest = settings.manifest
    checks = [check_ptoas_install(manifest, all_files)]
    if wheel is not None:
        checks.append(check_wheel_file(manifest, wheel))
    checks += [check_gxx(manifest), check_sim_include()]
    return checks
