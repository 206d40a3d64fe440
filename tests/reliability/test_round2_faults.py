"""Faults of the machine, round 2 (findings A1, A11, D2, D1, B1, A2, A12): a full or read-only disk is a
user error naming the path, a damaged ptoas shim heals, hung tools meet a deadline and leave no
process behind, huge shapes are refused before anything is allocated, Ctrl-C exits 130.

Full and read-only file systems are small tmpfs mounts (root ignores file modes, so chmod cannot make
EACCES); the tests skip where mounting is not permitted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from relkit import KERNEL_SCRIPT, REPO, Outcome, cli, env_for, needs_gxx, run

PTO_ADD = REPO / "tests" / "sim_isa" / "pto" / "kernel_add_128x128_f32.pto"
PTO_ARGS = ["--arg", "x=128x128:f32:in", "--arg", "y=128x128:in", "--arg", "z=128x128:f32:out"]


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "64k", read_only: bool = False) -> Iterator[Path]:
    """A small tmpfs mounted at ``where`` (read-only on request), unmounted afterwards."""
    where.mkdir(parents=True, exist_ok=True)
    opts = f"size={size}" + (",ro" if read_only else "")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip() or proc.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def case(tmp_path: Path) -> Path:
    (tmp_path / "add.py").write_text(KERNEL_SCRIPT)
    return tmp_path


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One warm cache for the tests that do not need a cold one (the runtime library builds once)."""
    return tmp_path_factory.mktemp("faults-cache")


def _env(case: Path, cache: Path | None = None, **extra: str) -> dict[str, str]:
    return env_for(cache or case / "cache", case / "build", **extra)


def _user_error(out: Outcome, *needles: str) -> None:
    assert out.code == 3, out.describe()
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr, out.describe()
    for needle in needles:
        assert needle.lower() in out.stderr.lower(), out.describe()


def _processes_with(marker: str) -> list[int]:
    """Pids whose command line contains ``marker`` (the fake tools put a unique one there)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique ``sleep`` duration: the fake tools' children carry it; any left at the end are killed."""
    mark = f"1000.{uuid.uuid4().int % 10**9:09d}"
    yield mark
    for pid in _processes_with(mark):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _no_process_left(mark: str) -> None:
    deadline = time.monotonic() + 5
    while _processes_with(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _processes_with(mark), f"orphaned tool processes: {_processes_with(mark)}"


def _fake_ptoas(root: Path, mark: str) -> Path:
    """A ptoas that hangs: a shell that starts a long ``sleep`` child and waits for it."""
    root.mkdir()
    exe = root / "ptoas"
    exe.write_text(f"#!/bin/sh\ntouch {root}/started\nsleep {mark} &\nwait\n")
    exe.chmod(0o755)
    return root


# -- A1 / A11 / D2: a full or read-only disk ----------------------------------------------------------
@pytest.mark.parametrize("command", [["compile"], ["run"], ["compile", "--run"]], ids=["compile", "run", "compile-run"])
def test_A1_full_output_dir_is_a_user_error_naming_it(case: Path, shared_cache: Path, command: list[str]) -> None:
    with tmpfs(case / "full"):
        out = cli([*command, "add.py", "-o", "full/out"], _env(case, shared_cache), case)
        _user_error(out, "cannot write full/out", "no space left on device")
        assert not (case / "full" / "out" / "compiled_meta.json").exists()


def test_read_only_output_dir_is_a_user_error(case: Path, shared_cache: Path) -> None:
    """(Held on main too: the output dir cannot be created there.)"""
    with tmpfs(case / "ro", read_only=True):
        _user_error(cli(["compile", "add.py", "-o", "ro/out"], _env(case, shared_cache), case),
                    "ro/out", "read-only file system")


def test_A1_python_api_full_output_raises_a_storage_error(case: Path, shared_cache: Path) -> None:
    probe = case / "probe.py"
    probe.write_text(
        "import numpy as np\nimport add\nfrom pypto.errors import StorageError, UserError\n"
        "from pypto.runtime import RunConfig\n"
        "a = np.ones((64, 64), np.float32)\n"
        "try:\n    add.addmul(a, a, np.zeros_like(a), config=RunConfig(save_kernels_dir='full/jit'))\n"
        "except StorageError as exc:\n"
        "    print('STORAGE', isinstance(exc, UserError), exc.path, exc.errno)\n")
    with tmpfs(case / "full"):
        out = run([sys.executable, str(probe)], _env(case, shared_cache), case)
    assert out.code == 0 and "STORAGE True full/jit" in out.stdout and " 28" in out.stdout, out.describe()


def _unusable_cache(case: Path, read_only: bool) -> Outcome:
    with tmpfs(case / "disk", read_only=read_only):
        out = cli(["run", "add.py", "-o", "out"], _env(case, case / "disk" / "cache"), case)
    cause = "read-only file system" if read_only else "no space left on device"
    _user_error(out, str(case / "disk" / "cache"), cause)
    assert "BFD" not in out.stderr and "assertion fail" not in out.stderr, out.describe()
    return out


@needs_gxx
def test_A11_full_cache_file_system_is_a_user_error_naming_the_disk(case: Path) -> None:
    """g++/as die of the full disk (a short write, BFD assertions): the error says the disk is full."""
    _unusable_cache(case, read_only=False)


def test_read_only_cache_file_system_is_a_user_error(case: Path) -> None:
    """(Held on main too: the cache dir cannot be created there.)"""
    _unusable_cache(case, read_only=True)


@needs_gxx
@pytest.mark.sim
def test_D2_run_pto_save_on_a_full_disk_leaves_no_truncated_file(case: Path, shared_cache: Path) -> None:
    with tmpfs(case / "full"):
        (case / "full" / "filler").write_bytes(bytes(40 * 1024))  # 24 KiB left: the first .npy fits only in part
        out = cli(["run-pto", str(PTO_ADD), *PTO_ARGS, "--save", "full/save"], _env(case, shared_cache), case)
        _user_error(out, "cannot write full/save", "no space left on device")
        assert sorted(p.name for p in (case / "full").iterdir()) == ["filler"]
    ok = cli(["run-pto", str(PTO_ADD), *PTO_ARGS, "--save", "save"], _env(case, shared_cache), case)
    assert ok.code == 0, ok.describe()
    assert sorted(p.name for p in (case / "save").iterdir()) == ["x.input.npy", "y.input.npy", "z.npy"]
    (case / "save" / "z.npy").write_bytes(b"stale")
    (case / "save" / "notes.txt").write_text("mine")  # an existing --save dir: files replaced whole, others kept
    again = cli(["run-pto", str(PTO_ADD), *PTO_ARGS, "--save", "save", "--seed", "3"], _env(case, shared_cache), case)
    assert again.code == 0, again.describe()
    assert sorted(p.name for p in (case / "save").iterdir()) == ["notes.txt", "x.input.npy", "y.input.npy", "z.npy"]
    import numpy as np

    x, y, z = (np.load(case / "save" / n) for n in ("x.input.npy", "y.input.npy", "z.npy"))
    np.testing.assert_allclose(z, x + y, rtol=1e-6, atol=1e-6)


# -- D1: a damaged ptoas shim -------------------------------------------------------------------------
def test_D1_shim_missing_a_library_link_is_rebuilt(case: Path) -> None:
    from pypto.toolchain.ptoas import installed_wheel

    if installed_wheel() is None:
        pytest.skip("needs the pinned ptoas wheel (the shim is built for it)")
    env = _env(case, PYPTO_JIT_CACHE="0")
    first = cli(["compile", "add.py", "-o", "out"], env, case)
    assert first.code == 0, first.describe()
    (shim,) = (case / "cache" / "ptoas-shim").iterdir()
    links = sorted((shim / "lib").iterdir())
    victim = next(p for p in links if "AsmParser" in p.name)
    victim.unlink()
    for _ in range(2):
        again = cli(["compile", "add.py", "-o", "out"], env, case)
        assert again.code == 0, again.describe()
    assert "ptoas shim is damaged" in again.stderr or victim.is_symlink()
    assert victim.is_symlink() and victim.exists()
    assert sorted((shim / "lib").iterdir()) == links


# -- B1: deadlines of external tools ------------------------------------------------------------------
def test_B1_hung_ptoas_is_a_toolchain_error_with_limit(case: Path, shared_cache: Path, marker: str) -> None:
    fake = _fake_ptoas(case / "fakeptoas", marker)
    env = _env(case, shared_cache, PTOAS_ROOT=str(fake), PYPTO_PTOAS_TIMEOUT_S="2", PYPTO_JIT_CACHE="0")
    start = time.monotonic()
    out = cli(["compile", "add.py", "-o", "out"], env, case, timeout=90)
    assert out.code == 4, out.describe()
    assert time.monotonic() - start < 60
    for needle in ("ptoas did not finish within 2 s", "PYPTO_PTOAS_TIMEOUT_S", "ptoas_timeout_s",
                   "Repro command:", str(fake / "ptoas")):
        assert needle in out.stderr, out.describe()
    _no_process_left(marker)
    assert not (case / "out" / "compiled_meta.json").exists()


@needs_gxx
def test_B1_hung_gxx_is_a_toolchain_error_with_limit(case: Path, marker: str) -> None:
    """A g++ that answers --version but hangs building: the build deadline kills it and its children."""
    import shutil

    bin_dir = case / "fakebin"
    bin_dir.mkdir()
    gxx = bin_dir / "g++"
    gxx.write_text(f'#!/bin/sh\nif [ "$1" = --version ]; then exec {shutil.which("g++")} --version; fi\n'
                   f"sleep {marker} &\nwait\n")
    gxx.chmod(0o755)
    env = _env(case, PYPTO_BUILD_TIMEOUT_S="2", PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    out = cli(["run", "add.py", "-o", "out"], env, case, timeout=120)
    assert out.code == 4, out.describe()
    for needle in ("did not finish within 2 s", "PYPTO_BUILD_TIMEOUT_S", "Repro command:"):
        assert needle in out.stderr, out.describe()
    _no_process_left(marker)


@contextlib.contextmanager
def silent_engine() -> Iterator[int]:
    """A TCP port that accepts connections and never answers (a hung container engine)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def test_B1_silent_container_engine_is_a_toolchain_error_with_limit(case: Path) -> None:
    with silent_engine() as port:
        env = _env(case, DOCKER_HOST=f"tcp://127.0.0.1:{port}", PYPTO_DOCKER_TIMEOUT_S="2")
        start = time.monotonic()
        out = cli(["compile", "add.py", "-o", "out", "--in-container"], env, case, timeout=120)
    assert out.code == 4, out.describe()
    assert time.monotonic() - start < 45
    for needle in ("the container engine did not answer a request within 2 s", "PYPTO_DOCKER_TIMEOUT_S"):
        assert needle in out.stderr, out.describe()


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_B1_bad_timeout_setting_is_a_settings_error(case: Path, value: str) -> None:
    out = cli(["compile", "add.py", "-o", "out", "--skip-ptoas"], _env(case, PYPTO_PTOAS_TIMEOUT_S=value), case)
    _user_error(out, "ptoas_timeout_s", "PYPTO_PTOAS_TIMEOUT_S")


# -- A2: huge shapes ----------------------------------------------------------------------------------
_HUGE = "1099511627776x64"  # 2**40 rows: 256 TiB as f32, in bounds of the kernel's 64x64 window


def test_A2_compile_of_a_huge_shape_allocates_nothing(case: Path, shared_cache: Path) -> None:
    shapes = [f"--shape={p}={_HUGE}:f32" for p in ("a", "b", "out")]
    out = cli(["compile", "add.py", "-o", "out", *shapes], _env(case, shared_cache), case)
    assert out.code == 0, out.describe()
    assert (case / "out" / "compiled_meta.json").is_file()


def test_A2_run_states_the_bytes_it_needs_and_refuses(case: Path, shared_cache: Path) -> None:
    shapes = [f"--shape={p}={_HUGE}:f32" for p in ("a", "b", "out")]
    out = cli(["run", "add.py", "-o", "out", *shapes], _env(case, shared_cache), case)
    need = 2 * 3 * (1 << 40) * 64 * 4
    _user_error(out, f"needs {need} bytes", "PYPTO_RUN_MAX_BYTES")
    small = cli(["run", "add.py", "-o", "out2"], _env(case, shared_cache, PYPTO_RUN_MAX_BYTES="4096"), case)
    _user_error(small, f"needs {2 * 3 * 64 * 64 * 4} bytes", "limit of 4096 bytes")


def test_A2_dimension_past_int64_is_a_usage_error(case: Path, shared_cache: Path) -> None:
    big = "99999999999999999999999x1"
    out = cli(["compile", "add.py", "-o", "out", *[f"--shape={p}={big}:f32" for p in ("a", "b", "out")]],
              _env(case, shared_cache), case)
    assert out.code == 2 and "does not fit in int64" in out.stderr, out.describe()
    pto = cli(["run-pto", str(PTO_ADD), "--arg", f"x={big}:f32:in", *PTO_ARGS[2:]], _env(case, shared_cache), case)
    assert pto.code == 2 and "does not fit in int64" in pto.stderr, pto.describe()
    table = KERNEL_SCRIPT.replace('"a": "64x64:f32"', f'"a": "{big}:f32"')  # the same in the file's SHAPES
    assert table != KERNEL_SCRIPT
    (case / "huge.py").write_text(table)
    _user_error(cli(["compile", "huge.py", "-o", "out"], _env(case, shared_cache), case), "does not fit in int64")


def test_A2_run_pto_huge_arg_is_refused_before_allocating(case: Path, shared_cache: Path) -> None:
    out = cli(["run-pto", str(PTO_ADD), "--arg", "x=1099511627776x1:f32:in", *PTO_ARGS[2:]],
              _env(case, shared_cache), case)
    _user_error(out, f"needs {2 * ((1 << 40) * 4 + 2 * 128 * 128 * 4)} bytes", "run_max_bytes")


# -- A12: Ctrl-C --------------------------------------------------------------------------------------
def _interrupt(argv: list[str], env: dict[str, str], cwd: Path, ready: Callable[[], bool],
               sig: signal.Signals = signal.SIGINT) -> Outcome:
    """Start ``pypto argv`` with SIGINT at its default, send ``sig`` once ``ready()``, wait for the end."""
    proc = subprocess.Popen([sys.executable, "-m", "pypto", *argv], env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not ready() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "pypto ended before it could be interrupted"
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return Outcome(proc.returncode, stdout, stderr)


def _interrupted(out: Outcome) -> None:
    assert out.code == 130, out.describe()
    assert "pypto: interrupted" in out.stderr and "Aborted!" not in out.stderr, out.describe()
    assert "Traceback" not in out.stderr, out.describe()


def test_A12_ctrl_c_during_compile_exits_130(case: Path, shared_cache: Path, marker: str) -> None:
    fake = _fake_ptoas(case / "fakeptoas", marker)
    env = _env(case, shared_cache, PTOAS_ROOT=str(fake), PYPTO_JIT_CACHE="0")
    out = _interrupt(["compile", "add.py", "-o", "out"], env, case, (fake / "started").exists)
    _interrupted(out)
    _no_process_left(marker)
    assert not (case / "out" / "compiled_meta.json").exists()


def test_B1_sigterm_during_ptoas_leaves_no_tool_running(case: Path, shared_cache: Path, marker: str) -> None:
    """ptoas runs in its own process group, so pypto kills it before a SIGTERM ends pypto itself."""
    fake = _fake_ptoas(case / "fakeptoas", marker)
    env = _env(case, shared_cache, PTOAS_ROOT=str(fake), PYPTO_JIT_CACHE="0")
    out = _interrupt(["compile", "add.py", "-o", "out"], env, case, (fake / "started").exists, signal.SIGTERM)
    assert out.code == -signal.SIGTERM, out.describe()
    _no_process_left(marker)


@needs_gxx
def test_A12_ctrl_c_during_the_runtime_build_exits_130(case: Path) -> None:
    cache = case / "cold-cache"
    out = _interrupt(["run", "add.py", "-o", "out"], _env(case, cache), case,
                     lambda: bool(_processes_with(f"{cache}/sim/runtime")))  # a g++ of the runtime is running
    _interrupted(out)
    _no_process_left(str(cache))


def test_B1_container_run_forwards_tool_deadlines() -> None:
    """``--in-container`` hands the host's limits to the pypto inside, so its ptoas and g++ keep them."""
    from pypto.toolchain.docker import forwarded_env
    from pypto.toolchain.settings import override

    with override(ptoas_timeout_s=7, build_timeout_s=11, run_max_bytes=4096) as settings:
        env = forwarded_env(settings)
    assert (env["PYPTO_PTOAS_TIMEOUT_S"], env["PYPTO_BUILD_TIMEOUT_S"], env["PYPTO_RUN_MAX_BYTES"]) == ("7.0", "11.0",
                                                                                                     "4096")
