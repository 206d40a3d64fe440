"""Locate a runnable ``ptoas`` assembler; make the pinned PyPI wheel's CLI runnable with a library shim.

The pinned ptoas wheel ships its CLI linked against MLIR/LLVM shared libraries that auditwheel
renamed (``libMLIRFoo-1a2b3c4d.so``), and it names some tool libraries the wheel does not contain.
The shim is a directory of symlinks from the original library names to the renamed files (absent
ones point at an already-loaded library; with ``LD_BIND_NOW=1`` nothing from them is used) plus a
wrapper script. It is built once per wheel install into the cache directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from pypto.errors import ToolchainError

_RENAMED = re.compile(r"^(lib.+?)-[0-9a-f]{8}(\.so.*)$")
_ROOT_CANDIDATES = ("ptoas", "ptoas.sh", "bin/ptoas")


@dataclass(frozen=True, slots=True)
class PtoasInstall:
    """The ptoas wheel as installed in this interpreter: raw binary, its renamed libraries, its hash."""

    binary: Path
    libs: Path
    version: str
    record_hash: str = ""


@lru_cache(maxsize=1)
def installed_wheel() -> PtoasInstall | None:
    """Find the ``ptoas`` distribution's binary and ``ptoas.libs`` via its RECORD, or None.

    Cached per process: reading the RECORD (~1,200 entries) costs ~20 ms and the install does not
    change while pypto runs.
    """
    try:
        dist = metadata.distribution("ptoas")
    except metadata.PackageNotFoundError:
        return None
    binary = libs = None
    digest = ""
    for f in dist.files or ():
        parts = f.parts
        if parts[-1] == "ptoas" and "bin" in parts:
            binary = Path(dist.locate_file(f)).resolve()
            digest = f.hash.value if f.hash is not None else ""
        elif "ptoas.libs" in parts and libs is None:
            libs = Path(dist.locate_file(f)).resolve().parent
    if binary is None or libs is None or not binary.is_file():
        return None
    return PtoasInstall(binary=binary, libs=libs, version=dist.version, record_hash=digest)


def elf_needed(path: Path) -> list[str]:
    """DT_NEEDED entries of an ELF64 little-endian file."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ToolchainError(f"{path} is not an ELF64 little-endian executable")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(shnum):
        base = shoff + i * shentsize
        (kind,) = struct.unpack_from("<I", data, base + 4)
        offset, size = struct.unpack_from("<QQ", data, base + 0x18)
        (link,) = struct.unpack_from("<I", data, base + 0x28)
        sections.append((kind, offset, size, link))
    needed: list[str] = []
    for kind, offset, size, link in sections:
        if kind != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[link][1]
        for pos in range(offset, offset + size, 16):
            tag, val = struct.unpack_from("<qQ", data, pos)
            if tag == 0:
                break
            if tag == 1:  # DT_NEEDED
                end = data.index(b"\0", strtab + val)
                needed.append(data[strtab + val : end].decode())
    return needed


def _shim_key(install: PtoasInstall, no_aslr: bool = False) -> str:
    """Same wheel, same install location, same answer of :func:`no_aslr_allowed` -> same shim dir (no
    mtimes: image builds stay reproducible)."""
    ident = install.record_hash or str(install.binary.stat().st_size)
    text = f"{install.binary}|{install.libs}|{install.version}|{ident}" + ("|setarch-R" if no_aslr else "")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ptoas 0.1.1's memory planner walks pointer-keyed maps, so the UB addresses it assigns depend on where
# the heap lands: with address-space randomization two runs on the same .pto can give different C++.
# The shim turns randomization off for ptoas (setarch -R) where the kernel lets it (a container's
# default seccomp profile does not; there ptoas runs as is). Whether it may is asked once per process,
# without starting a process, and the answer is part of the shim's key: the wrapper itself starts only
# setarch (when allowed) and ptoas, no ``uname`` and no trial ``setarch ... true`` per call.
ADDR_NO_RANDOMIZE = 0x0040000


@lru_cache(maxsize=1)
def no_aslr_allowed() -> bool:
    """True when a child can be started with address-space randomization off (``setarch -R``): setarch is
    on PATH and this thread may set ``ADDR_NO_RANDOMIZE`` (set, then restored at once; personality is per
    thread, so no other thread's children are affected)."""
    if shutil.which("setarch") is None:
        return False
    try:
        import ctypes

        personality = ctypes.CDLL(None, use_errno=True).personality
        personality.argtypes, personality.restype = [ctypes.c_ulong], ctypes.c_int
    except (OSError, AttributeError):
        return False
    current = personality(0xFFFFFFFF)  # a query
    if current == -1 or personality(current | ADDR_NO_RANDOMIZE) == -1:
        return False
    personality(current)
    return True


def _shim_script(install: PtoasInstall, shim_dir: Path, no_aslr: bool = False) -> str:
    setarch = f'set -- setarch {os.uname().machine} -R "$@"\n' if no_aslr else ""
    return (
        "#!/bin/sh\n# ptoas with library shim (generated by pypto)\n"
        f'set -- "{install.binary}" "$@"\n'
        + setarch
        + f'LD_BIND_NOW=1 LD_LIBRARY_PATH="{shim_dir / "lib"}:{install.libs}'
        '${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" '
        'exec "$@"\n'
    )


LINKS_FILE = "links.txt"  # the shim's library link names, one a line: what a whole shim holds


def _shim_ok(install: PtoasInstall, shim_dir: Path, no_aslr: bool = False) -> bool:
    """The published shim is whole: the exact wrapper script, executable, and exactly the library links
    listed in ``links.txt`` (none missing, none extra), each resolving to a file."""
    wrapper = shim_dir / "ptoas"
    try:
        if wrapper.read_text() != _shim_script(install, shim_dir, no_aslr) or not os.access(wrapper, os.X_OK):
            return False
        expected = (shim_dir / LINKS_FILE).read_text().split()
        present = os.listdir(shim_dir / "lib")
    except (OSError, UnicodeDecodeError):
        return False
    lib = shim_dir / "lib"
    return bool(expected) and sorted(present) == sorted(expected) and all(
        (lib / name).is_symlink() and (lib / name).exists() for name in expected)


def build_shim(install: PtoasInstall, shim_dir: Path, no_aslr: bool = False) -> Path:
    """Create (atomically) the shim directory and return its ``ptoas`` wrapper script.

    An existing shim is checked first; a damaged one (edited, truncated, a link dangling, missing or
    extra) is removed with a warning and rebuilt.
    """
    from pypto.toolchain import cachefs

    wrapper = shim_dir / "ptoas"
    if shim_dir.exists():
        if _shim_ok(install, shim_dir, no_aslr):
            return wrapper
        trash = shim_dir.with_name(f".trash-{shim_dir.name}-{os.getpid()}")
        with contextlib.suppress(OSError):
            os.rename(shim_dir, trash)
        cachefs.discard(trash, "ptoas shim", "is damaged")
    cachefs.clean_orphans(shim_dir.parent)
    tmp = cachefs.temp_for(shim_dir)
    (tmp / "lib").mkdir(parents=True)
    renamed = {}
    for entry in os.listdir(install.libs):
        m = _RENAMED.match(entry)
        if m:
            renamed[m.group(1) + m.group(2)] = install.libs / entry
    if not renamed:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ToolchainError(f"ptoas wheel libraries not found in {install.libs}")
    filler = next((p for n, p in sorted(renamed.items()) if n.startswith("libLLVMDemangle")),
                  next(iter(renamed.values())))
    links = []
    for name in elf_needed(install.binary):
        target = renamed.get(name)
        if target is None and not name.startswith(("libMLIR", "libLLVM")):
            continue
        (tmp / "lib" / name).symlink_to(target or filler)
        links.append(name)
    (tmp / LINKS_FILE).write_text("".join(f"{n}\n" for n in sorted(set(links))))
    (tmp / "ptoas").write_text(_shim_script(install, shim_dir, no_aslr))
    (tmp / "ptoas").chmod(0o755)
    tmp.chmod(0o755)
    try:
        tmp.rename(shim_dir)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another process won the race
    return wrapper


def _runs(path: Path) -> bool:
    try:
        proc = subprocess.run([str(path), "--version"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _from_root(root: str) -> Path:
    tried = [Path(root) / c for c in _ROOT_CANDIDATES]
    for cand in tried:
        if cand.is_file() and os.access(cand, os.X_OK):
            return cand
    raise ToolchainError(
        f"PTOAS_ROOT is set to '{root}' but no executable ptoas was found there. "
        f"Tried: {', '.join(str(t) for t in tried)}",
        hint=f"unset PTOAS_ROOT to use the pinned {_pinned_requirement()} wheel, or point it at a ptoas release dir",
    )


def _pinned_requirement() -> str:
    from pypto.toolchain.manifest import load_manifest

    return load_manifest().ptoas.requirement


def default_cache_dir() -> Path:
    """Where the shim lives when the caller passes no cache dir: the ``cache_dir`` setting."""
    from pypto.toolchain.settings import cache_dir

    return cache_dir()


def find_ptoas(ptoas_root: str | None = None, cache_dir: Path | None = None) -> Path | None:
    """A runnable ptoas: ``ptoas_root`` (default: the ``ptoas_root`` setting, ``PTOAS_ROOT``) if set,
    else the pinned wheel via its shim, else PATH."""
    if ptoas_root is None:
        from pypto.toolchain.settings import ptoas_root as setting

        ptoas_root = setting()
    if ptoas_root:
        return _from_root(ptoas_root)
    install = installed_wheel()
    if install is not None:
        from pypto.toolchain.cachefs import ensure_dir
        from pypto.toolchain.storage import storage_errors

        base = ensure_dir((cache_dir or default_cache_dir()) / "ptoas-shim")
        with storage_errors(base):  # a full or read-only cache dir: a StorageError naming it
            no_aslr = no_aslr_allowed()
            return build_shim(install, base / _shim_key(install, no_aslr), no_aslr)
    on_path = shutil.which("ptoas")
    if on_path and _runs(Path(on_path)):
        return Path(on_path)
    return None


def require_ptoas(ptoas_root: str | None = None, cache_dir: Path | None = None) -> Path:
    """Like :func:`find_ptoas` but raise a ToolchainError that says how to get ptoas."""
    found = find_ptoas(ptoas_root, cache_dir)
    if found is None:
        raise ToolchainError(
            "ptoas binary not found. Set PTOAS_ROOT to the extracted release directory, "
            "or add ptoas to your PATH.",
            hint=f"pip install '{_pinned_requirement()}' (the pinned assembler; `pypto doctor` checks it), "
            "or pass skip_ptoas=True to stop at .pto",
        )
    return found
