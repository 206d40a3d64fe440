"""Locating ptoas: PTOAS_ROOT, the pinned wheel through its library shim, PATH; clear errors."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pypto.errors import ToolchainError
from pypto.toolchain import ptoas


def _script(path: Path, body: str = "echo ptoas-stub") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize("rel", ["ptoas", "ptoas.sh", "bin/ptoas"])
def test_ptoas_root_candidates(tmp_path, rel):
    exe = _script(tmp_path / rel)
    assert ptoas.find_ptoas(str(tmp_path)) == exe


def test_ptoas_root_without_binary_names_what_was_tried(tmp_path):
    with pytest.raises(ToolchainError) as ei:
        ptoas.find_ptoas(str(tmp_path))
    msg = str(ei.value)
    assert f"PTOAS_ROOT is set to '{tmp_path}' but no executable ptoas was found there" in msg
    assert str(tmp_path / "bin" / "ptoas") in msg and "unset PTOAS_ROOT" in msg


def test_require_ptoas_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setattr(ptoas, "installed_wheel", lambda: None)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolchainError) as ei:
        ptoas.require_ptoas(None, tmp_path)
    assert "ptoas binary not found" in str(ei.value) and "pip install 'ptoas==" in str(ei.value)


def test_elf_needed_reads_the_dynamic_section():
    needed = ptoas.elf_needed(Path(sys.executable).resolve())
    assert any(n.startswith("libc.so") or n.startswith("libpython") for n in needed)
    with pytest.raises(ToolchainError, match="not an ELF64"):
        ptoas.elf_needed(Path(__file__))


def test_pinned_wheel_shim_runs_and_is_stable(tmp_path):
    install = ptoas.installed_wheel()
    if install is None:
        pytest.skip("the pinned ptoas wheel is not installed")
    first = ptoas.find_ptoas(None, tmp_path)
    assert first is not None and first.parent.parent == tmp_path / "ptoas-shim"
    assert ptoas.find_ptoas(None, tmp_path) == first  # built once, then reused
    assert install.record_hash  # the shim key comes from the wheel's RECORD, not mtimes
    proc = subprocess.run([str(first), "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "LLVM" in proc.stdout
    links = os.listdir(first.parent / "lib")
    assert links and all((first.parent / "lib" / n).is_symlink() for n in links)


def test_the_shim_starts_no_probe_per_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether ptoas may run with randomization off is asked once per process (no process started) and
    baked into the wrapper, whose shim dir is keyed by the answer: a call starts setarch (when allowed) and
    ptoas, never ``uname`` or a trial ``setarch ... true``."""
    install = ptoas.PtoasInstall(binary=Path("/opt/ptoas/bin/ptoas"), libs=Path("/opt/ptoas.libs"), version="0.1.1",
                                 record_hash="abc")
    off = ptoas._shim_script(install, tmp_path / "shim", no_aslr=True)
    plain = ptoas._shim_script(install, tmp_path / "shim", no_aslr=False)
    assert f"setarch {os.uname().machine} -R" in off and "setarch" not in plain
    assert not any(word in text for text in (off, plain) for word in ("uname", "true", "if "))
    assert ptoas._shim_key(install, True) != ptoas._shim_key(install, False)
    started: list[object] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    ptoas.no_aslr_allowed.cache_clear()
    try:
        assert isinstance(ptoas.no_aslr_allowed(), bool) and started == []
        assert ptoas.no_aslr_allowed.cache_info().currsize == 1  # once per process
    finally:
        ptoas.no_aslr_allowed.cache_clear()


def test_the_shim_really_turns_randomization_off(tmp_path: Path) -> None:
    """Where allowed, the wrapper's command line runs its child with ADDR_NO_RANDOMIZE set."""
    if not ptoas.no_aslr_allowed():
        pytest.skip("this kernel (or its seccomp profile) does not let setarch -R turn randomization off")
    install = ptoas.PtoasInstall(binary=Path("/bin/cat"), libs=tmp_path, version="0", record_hash="x")
    wrapper = _script(tmp_path / "w", ptoas._shim_script(install, tmp_path, no_aslr=True).split("\n", 1)[1])
    proc = subprocess.run([str(wrapper), "/proc/self/personality"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and int(proc.stdout, 16) & ptoas.ADDR_NO_RANDOMIZE


def test_the_shims_default_dir_is_the_cache_dir_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pypto.toolchain.ptoas import default_cache_dir
    from pypto.toolchain.settings import resolve_settings

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == resolve_settings().cache_dir == tmp_path / "xdg" / "pypto"
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"


def test_no_argument_reads_the_ptoas_root_setting(monkeypatch, tmp_path):
    exe = _script(tmp_path / "bin" / "ptoas")
    monkeypatch.setenv("PTOAS_ROOT", str(tmp_path))
    assert ptoas.find_ptoas() == exe
    assert ptoas.require_ptoas() == exe
