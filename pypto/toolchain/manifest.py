"""Toolchain manifests: ``toolchains/<version>.toml``, the single source of truth for pinned pieces.

A manifest pins the ptoas wheel (version, file, sha256, dialect, argv), the simulator's tile-ISA
and runtime ABI versions, the hardware pieces the user supplies (CANN installers, simpler commit),
the base image, Python and compiler versions, the supported platforms/backends/runtimes and the
Python wheels installed into images. The wheel ships them as ``pypto/_toolchains``; an editable
install reads ``<repo>/toolchains``.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from pypto.errors import SettingsError, ToolchainError
from pypto.toolchain.platforms import BACKEND_DEFAULT_SIM, PLATFORMS, RUNTIMES

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
OptionalSha256 = Annotated[str, Field(pattern=r"^([0-9a-f]{64})?$")]
USER_SUPPLIED = "user-supplied"
_PACKAGE_DIR = Path(__file__).resolve().parent.parent / "_toolchains"
_REPO_DIR = Path(__file__).resolve().parent.parent.parent / "toolchains"


class _Pin(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PtoasPin(_Pin):
    """The ptoas assembler wheel and how to call it."""

    version: str
    source: Literal["pypi"]
    index_url: str
    wheel: str
    sha256: Sha256
    dialect: str
    argv: tuple[str, ...]
    """Arguments after the executable; ``{input}`` and ``{output}`` are substituted."""
    insert_sync_flag: str
    arch: str
    glibc_floor: str

    @property
    def requirement(self) -> str:
        """The pip requirement line, e.g. ``ptoas==<version>``."""
        return f"ptoas=={self.version}"

    def command(self, exe: str | Path, src: str | Path, out: str | Path, insert_sync: bool = False) -> list[str]:
        """The full argv for assembling ``src`` into ``out``."""
        args = [a.format(input=src, output=out) for a in self.argv]
        return [str(exe), *args, *([self.insert_sync_flag] if insert_sync else [])]


class SimPin(_Pin):
    """The CPU simulator: tile-ISA header and runtime ABI versions, kernel compiler."""

    isa_version: str
    runtime_abi: str
    compiler: str
    compiler_min_version: str
    cxx_std: str
    opt_level: str


class CannPin(_Pin):
    """CANN (hardware kernel compiler and runtime); installers are supplied by the user."""

    supplied_by: Literal["user-supplied"]
    version: str
    toolkit_installer: str
    toolkit_sha256: OptionalSha256
    kernels_installer: dict[str, str]
    kernels_sha256: dict[str, OptionalSha256]


class SimplerPin(_Pin):
    """The upstream ``simpler`` runtime for hardware images; the user supplies the checkout."""

    supplied_by: Literal["user-supplied"]
    repository: str
    commit: Annotated[str, Field(pattern=r"^([0-9a-f]{7,40})?$")]


class HardwarePin(_Pin):
    """Pieces only hardware images (``a2a3``, ``a5``) contain."""

    supplied_by: Literal["user-supplied"]
    kernel_compiler: str
    cann: CannPin
    simpler: SimplerPin


class BaseImagePin(_Pin):
    """Base OS of the images: a registry reference (+ digest) or a debootstrap rootfs."""

    distribution: str
    suite: str
    debootstrap_variant: str
    mirror: str
    reference: str
    digest: Annotated[str, Field(pattern=r"^(sha256:[0-9a-f]{64})?$")]


class PythonPin(_Pin):
    """Interpreter version inside images."""

    version: Annotated[str, Field(pattern=r"^3\.\d+$")]


class CompilersPin(_Pin):
    """Host compilers; ``gxx`` is a minimum, e.g. ``>=12``."""

    gxx: Annotated[str, Field(pattern=r"^>=\d+$")]

    @property
    def gxx_min(self) -> int:
        """Minimum g++ major version."""
        return int(self.gxx[2:])


class SupportPin(_Pin):
    """What this toolchain can target."""

    platforms: tuple[str, ...]
    backends: tuple[str, ...]
    runtimes: tuple[str, ...]

    @model_validator(mode="after")
    def _known(self) -> SupportPin:
        unknown = [p for p in self.platforms if p not in PLATFORMS]
        unknown += [b for b in self.backends if b not in BACKEND_DEFAULT_SIM]
        unknown += [r for r in self.runtimes if r not in RUNTIMES]
        if unknown:
            raise ValueError(f"unknown names: {', '.join(unknown)}")
        missing = [PLATFORMS[p].backend for p in self.platforms if PLATFORMS[p].backend not in self.backends]
        if missing:
            raise ValueError(f"platforms need backends that are not listed: {', '.join(sorted(set(missing)))}")
        return self


class ImagePin(_Pin):
    """Python wheels installed into images (name -> version); hashes live in the image lock file."""

    wheels: dict[str, str]
    """Every image flavor."""
    torch_wheels: dict[str, str] = Field(default_factory=dict)
    """CPU torch and its dependencies: the ``sim`` (and ``hw``) images; ``sim-slim`` leaves them out."""

    def flavor_wheels(self, with_torch: bool) -> dict[str, str]:
        """The wheels of one flavor (name -> version)."""
        return {**self.wheels, **(self.torch_wheels if with_torch else {})}


class Manifest(_Pin):
    """One toolchain version, as read from ``toolchains/<version>.toml``."""

    schema_version: int = Field(alias="schema")
    version: Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")]
    description: str
    ptoas: PtoasPin
    sim: SimPin
    hardware: HardwarePin
    base_image: BaseImagePin
    python: PythonPin
    compilers: CompilersPin
    support: SupportPin
    image: ImagePin
    _path: Path | None = PrivateAttr(default=None)
    _sha256: str = PrivateAttr(default="")

    @field_validator("schema_version")
    @classmethod
    def _schema(cls, value: int) -> int:
        if value != 1:
            raise ValueError(f"unsupported manifest schema {value} (this pypto reads schema 1)")
        return value

    @property
    def path(self) -> Path | None:
        """The file this manifest was read from."""
        return self._path

    @property
    def sha256(self) -> str:
        """sha256 of the manifest file's bytes (images carry it as a label)."""
        return self._sha256

    def flat(self) -> dict[str, Any]:
        """Every pinned value under a dotted key, e.g. ``ptoas.sha256`` or ``support.platforms``."""
        return _flatten(self.model_dump(by_alias=True, mode="json"))


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def manifest_dir() -> Path:
    """``pypto/_toolchains`` in an installed wheel, else ``<repo>/toolchains`` (editable install)."""
    for cand in (_PACKAGE_DIR, _REPO_DIR):
        if cand.is_dir() and any(cand.glob("*.toml")):
            return cand
    raise ToolchainError(
        f"No toolchain manifests found (looked in {_PACKAGE_DIR} and {_REPO_DIR})",
        hint="reinstall pypto (the wheel ships pypto/_toolchains), or restore toolchains/*.toml in the checkout",
    )


def manifest_states() -> tuple[str, ...]:
    """``<path>:<size>:<mtime_ns>`` of every manifest in the directory :func:`manifest_dir` picks, sorted.

    One directory scan per candidate (the settings cache key reads it on every ``ir.compile``); raises
    :func:`manifest_dir`'s ToolchainError when no candidate holds a manifest.
    """
    for cand in (_PACKAGE_DIR, _REPO_DIR):
        try:
            with os.scandir(cand) as entries:
                found = [e for e in entries if e.name.endswith(".toml")]
        except OSError:
            continue
        if found:
            return tuple(sorted(f"{e.path}:{st.st_size}:{st.st_mtime_ns}" for e in found for st in (e.stat(),)))
    manifest_dir()  # raises
    return ()


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def list_manifests() -> list[str]:
    """Available toolchain versions, oldest first."""
    return sorted((p.stem for p in manifest_dir().glob("*.toml")), key=_version_key)


def latest_version() -> str:
    """The newest toolchain version (the default ``toolchain`` setting)."""
    return list_manifests()[-1]


def manifest_path(version: str | None = None) -> Path:
    """Path of ``<version>.toml``; unknown versions raise SettingsError listing the available ones."""
    version = version or latest_version()
    path = manifest_dir() / f"{version}.toml"
    if not path.is_file():
        available = ", ".join(list_manifests())
        raise SettingsError(
            f"Unknown toolchain '{version}': available toolchains are {available}",
            hint=f"use one of {available} (`pypto toolchain list`)",
        )
    return path


def manifest_sha256(version: str | None = None) -> str:
    """sha256 of the manifest file's bytes."""
    return hashlib.sha256(manifest_path(version).read_bytes()).hexdigest()


def load_manifest(version: str | None = None) -> Manifest:
    """Load and validate a manifest (the newest when ``version`` is None); cached per file."""
    path = manifest_path(version)
    return _load(path, path.stat().st_mtime_ns)


@lru_cache(maxsize=16)
def _load(path: Path, _mtime: int) -> Manifest:
    data = path.read_bytes()
    try:
        manifest = Manifest.model_validate(tomllib.loads(data.decode()))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ToolchainError(f"Toolchain manifest {path} is invalid:\n{exc}",
                             hint="fix the file; every field is described in pypto/toolchain/manifest.py") from exc
    if manifest.version != path.stem:
        raise ToolchainError(f"Toolchain manifest {path} declares version {manifest.version}; "
                             f"the file name says {path.stem}", hint="make the file name and `version` agree")
    manifest._path = path
    manifest._sha256 = hashlib.sha256(data).hexdigest()
    return manifest


def get_value(manifest: Manifest, key: str) -> Any:
    """One pinned value by dotted key; unknown keys raise a UserError listing close matches."""
    flat = manifest.flat()
    if key in flat:
        return flat[key]
    prefix = {k: v for k, v in flat.items() if k.startswith(f"{key}.")}
    if prefix:
        return prefix
    from pypto.errors import UserError

    near = [k for k in flat if key.split(".")[-1] in k][:8] or sorted(flat)[:8]
    raise UserError(f"Toolchain {manifest.version} has no key '{key}'", hint=f"try one of: {', '.join(near)}")
