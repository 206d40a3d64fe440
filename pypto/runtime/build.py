"""g++ builds for the simulation platforms: the runtime library, kernel and orchestration ``.so`` files.

Every build is cached by a content key (sources, flags, simulator headers, compiler version), so a
second run with unchanged inputs starts no compiler. Cached objects are content addressed and are
what gets ``dlopen``ed; the copies written into the artifact directory (``kernels/<ct>/<f>.so``,
``orchestration/<o>.so``) are for inspection.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shlex
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pypto.artifact.directory import ArtifactInfo, KernelSpec
from pypto.errors import StorageError, ToolchainError
from pypto.runtime import kernel_pch as pch
from pypto.toolchain import cachefs
from pypto.toolchain.platforms import CORE_MACROS, HARDWARE_PLATFORMS

SIM_DIR = Path(__file__).parent / "sim"
INCLUDE_DIR = SIM_DIR / "include"
SRC_DIR = SIM_DIR / "src"
GXX = "g++"
KERNEL_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-D__CPU_SIM")
ORCH_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-pthread")
# -O1: the runtime is task bookkeeping, not tile math; per-call dispatch measured the same as at -O2
# (~29 us for a registered 128x128 add), and the one-time build takes ~25 % less CPU.
# Hidden visibility: a runtime library exports only its C API (sim_capi.h); see below.
RUNTIME_FLAGS = ("-std=c++17", "-O1", "-pthread", "-fPIC", "-fvisibility=hidden", "-shared")
# A runtime library is the core (workers, scheduler, orchestrator ops, tensor map: one unity object,
# ~2 s of CPU, shared by all four libraries, so the common headers, ~0.5 s, are parsed once) plus
# variant.cpp, the only object built per (platform, runtime) (the macros below, ~0.1 s). Comm tasks
# and DFX recording are the extras (sim/src/sim_extras.h): one more library (~1.1 s of CPU), shared
# by all four, built (once) and loaded only when a run asks for DFX or a worker gets a comm context,
# so a plain first run compiles about a fifth less. Splitting the core into two parallel objects
# measured slower on 2 loaded cores (a first run is bound by its total CPU; each object parses the
# headers again). Several runtime libraries load into one process with RTLD_GLOBAL, so every object
# is built with hidden visibility (a library's calls stay inside it; otherwise the first library
# loaded would serve every library's internal calls, and with them its own extras pointer) and every
# library is linked with -z defs: the extras import nothing from the core (the core hands them the
# functions they call), so they bind to no runtime library.
VARIANT_SOURCE = "variant.cpp"
EXTRAS_SOURCES = ("comm.cpp", "comm_combine.cpp", "dfx.cpp", "extras.cpp")
LINK_FLAGS = ("-Wl,-z,defs",)
CORE_FLAGS = {core: (macro,) for core, macro in CORE_MACROS.items()}
PLATFORM_FLAGS = {"a2a3sim": (), "a5sim": ("-DPTO_SIM_ARCH_A5",)}
RUNTIME_MACROS = {"tensormap_and_ringbuffer": (), "host_build_graph": ("-DPTO_SIM_RUNTIME_HBG",)}

_cache_override: list[Path] = []


@contextlib.contextmanager
def use_cache_dir(path: Path) -> Iterator[Path]:
    """Build into ``path`` instead of the settings' cache dir while the context is active."""
    _cache_override.append(Path(path))
    try:
        yield Path(path)
    finally:
        _cache_override.pop()


def cache_root() -> Path:
    """``<cache_dir>/sim``: the override if one is active, else the settings' cache dir."""
    if _cache_override:
        return _cache_override[-1]
    return _settings_cache_dir() / "sim"


@functools.lru_cache(maxsize=1)
def _settings_cache_dir() -> Path:
    from pypto.toolchain.settings import cache_dir

    return cache_dir()  # light: no pydantic import on the run path


def check_platform(platform: str, info: ArtifactInfo | None = None) -> None:
    """Only the simulation platforms build here; a hardware platform names what it would need."""
    if platform in PLATFORM_FLAGS:
        return
    if info is not None and platform in HARDWARE_PLATFORMS:
        from pypto.runtime.hardware import require_hardware_toolchain
        from pypto.toolchain.settings import Settings

        settings = Settings()
        require_hardware_toolchain(
            info, platform, settings.ascend_home_path,
            how=f"use RunConfig(platform='{platform}sim') to simulate, or run inside the hw image "
                f"(python -m pypto.toolchain.images build --flavor hw --installers DIR; see `pypto doctor`)")
    raise ToolchainError(
        f"platform '{platform}' cannot run on this machine: only a2a3sim and a5sim are simulated",
        hint="use RunConfig(platform='a2a3sim') or 'a5sim'; hardware platforms need CANN and a device",
    )


@functools.lru_cache(maxsize=1)
def compiler_id() -> str:
    """``g++ --version`` first line (part of every cache key).

    Remembered on disk per compiler binary (path, size, mtime), so a process whose builds are all
    cached starts no g++ at all.
    """
    exe = shutil.which(GXX)
    if exe is None:
        raise ToolchainError(f"{GXX} not found on PATH", hint="install it, e.g. `apt-get install g++`")
    real = Path(exe).resolve()
    st = real.stat()
    stamp = cache_root() / "compiler" / _key(str(real), str(st.st_size), str(st.st_mtime_ns))
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for known in (stamp, _prebuilt(stamp)):
            if known is not None and cachefs.verified(known):
                return known.read_text()
    from pypto.toolchain.procs import run_tool
    from pypto.toolchain.settings import tool_timeout

    out = run_tool([exe, "--version"], tool="g++ --version", timeout=tool_timeout("build_timeout_s"),
                   setting="build_timeout_s", repro=f"{exe} --version").stdout
    ident = out.splitlines()[0] if out else exe
    with contextlib.suppress(OSError):
        stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp = cachefs.temp_for(stamp)
        tmp.write_text(ident)
        cachefs.publish(tmp, stamp)
    return ident


def _tree_hash(root: Path, suffixes: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in suffixes):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def header_hash() -> str:
    """Hash of every simulator header (tile ISA + runtime ABI)."""
    return _tree_hash(INCLUDE_DIR, (".h", ".hpp"))


def _key(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def compile_so(argv: list[str], out: Path, what: str, cwd: Path | None = None) -> Path:
    """Run g++ (``argv`` without ``-o``; in ``cwd`` when given) into a private temp file, then publish it as ``out``.

    The object appears complete or not at all, with its sha256 recorded next to it (see
    :mod:`pypto.toolchain.cachefs`); temp files of earlier killed builds in the folder are removed.
    """
    from pypto.toolchain.procs import run_tool
    from pypto.toolchain.settings import tool_timeout
    from pypto.toolchain.storage import disk_full_text, storage_problem

    cachefs.ensure_dir(out.parent)
    cachefs.clean_orphans(out.parent)
    tmp = cachefs.temp_for(out)
    cmd = [*argv, "-o", os.fspath(tmp)]
    repro = shlex.join([*argv, "-o", os.fspath(out)])
    if cwd is not None:
        repro = f"cd {shlex.quote(os.fspath(cwd))} && {repro}"
    try:
        proc = run_tool(cmd, tool=f"g++ (building {what})", timeout=tool_timeout("build_timeout_s"),
                        setting="build_timeout_s", repro=repro, cwd=cwd)
    except OSError as exc:
        raise ToolchainError(f"cannot run {argv[0]}: {exc}", repro=repro,
                             hint="install it, e.g. `apt-get install g++`") from exc
    except BaseException:  # past the deadline, or interrupted: the killed g++ may have left its output
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if proc.returncode != 0:
        with contextlib.suppress(OSError):
            tmp.unlink()
        full = storage_problem(out.parent, tempfile.gettempdir()) or disk_full_text(proc.stderr, out.parent)
        if full is not None:  # g++/as report a full disk as a short write or an assembler assertion
            raise StorageError(full.path, f"{full.cause}; g++ could not build {what}", errno=full.errno) from None
        raise ToolchainError(f"compilation failed: g++ could not build {what}", stderr=proc.stderr, repro=repro)
    try:
        return cachefs.publish(tmp, out)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise StorageError(out.parent, f"the build cache directory is not usable: {exc.strerror or exc}",
                           errno=exc.errno, hint="set PYPTO_CACHE_DIR (or cache_dir in the config file) to a "
                                                 "writable directory with free space") from exc


def _reuse(out: Path, what: str) -> bool:
    """True when a cached object can be used as is; a corrupt one is removed (with a warning)."""
    if cachefs.verified(out):
        return True
    cachefs.discard(out, f"cached {what}")
    return False


def runtime_library(platform: str, runtime: str) -> Path:
    """The runtime ``.so`` for (platform, runtime), built once per header/source hash and compiler.

    A build already under way in this process (:func:`prebuild_runtime`) is waited for, not repeated.
    """
    check_platform(platform)
    out, _ = _runtime_target(platform, runtime)
    return _once(out, lambda: _build_runtime(platform, runtime, out), f"{platform}/{runtime} runtime library")


def runtime_extras() -> Path:
    """The extras ``.so`` (comm tasks, DFX recording), one for every runtime library, built once when first needed.

    A build already under way in this process (:func:`prebuild_extras`) is waited for, not repeated.
    """
    out = _extras_target()
    return _once(out, lambda: _build_extras(out), "runtime extras library")


def prebuild_extras() -> None:
    """Start building the extras library in the background (a compile for a DFX run); never raises."""
    _submit_background(runtime_extras)


def prebuild_runtime(platform: str, runtime: str) -> None:
    """Start building the runtime library in the background (e.g. while a compile runs); never raises.

    The first run on a fresh cache then overlaps this one-time g++ build with ptoas and the kernel
    builds; :func:`runtime_library` waits for it (and reports its error, if any).
    """
    if platform in PLATFORM_FLAGS and runtime in RUNTIME_MACROS:
        _submit_background(runtime_library, platform, runtime)


def prebuild_core() -> None:
    """Start compiling the runtime's core object in the background; never raises.

    The core is the same for every platform and runtime, so this can start before either is resolved
    (a ``@pl.jit`` call does it first thing); the library build later joins the object in flight.
    """
    units = dict(runtime_units())
    if "core" in units:
        out = _object_target("core", units["core"], ())
        if not (cachefs.verified(out) or _prebuilt(out)):  # a warm cache starts no thread
            _submit_background(_runtime_object, "core", units["core"], ())


def prebuild_artifact(root: Path, platform: str) -> None:
    """Start building an artifact's kernels and orchestration in the background; never raises."""
    if platform in PLATFORM_FLAGS:
        _submit_background(_prebuild_artifact, Path(root), platform)


def _prebuild_artifact(root: Path, platform: str) -> None:
    from pypto.artifact import load_artifact

    build_artifact(load_artifact(root), platform, sidecars=False)  # a compile leaves no .so in the artifact


def _quietly(fn: Callable[..., object], *args: object) -> None:
    with contextlib.suppress(Exception):  # the foreground build reports the error with its context
        fn(*args)


# Background builders (each starts its own g++ jobs); builds in flight by output path, so a
# foreground request for the same file waits for the running build instead of starting another.
_BACKGROUND = ThreadPoolExecutor(max_workers=4, thread_name_prefix="pypto-prebuild")  # they wait on g++
_inflight: dict[Path, Future[Path]] = {}
_background_jobs: set[Future[None]] = set()


def _submit_background(fn: Callable[..., object], *args: object) -> None:
    fut = _BACKGROUND.submit(_quietly, fn, *args)
    with _inflight_lock:
        _background_jobs.add(fut)
    fut.add_done_callback(_forget_background)


def _forget_background(fut: Future[None]) -> None:
    with _inflight_lock:
        _background_jobs.discard(fut)


def wait_background() -> None:
    """Wait for every background build of this process (before a fork: no build thread may hold a lock)."""
    with _inflight_lock:
        jobs = list(_background_jobs)
    for fut in jobs:
        fut.result()
_inflight_lock = threading.Lock()


PREBUILT_DIR = SIM_DIR / "prebuilt"  # the install's own runtime objects: python -m pypto.runtime.prebuild


def prebuilt_dir() -> Path | None:
    """Where the install keeps prebuilt runtime objects (read only here): the ``prebuilt_dir`` setting
    (``PYPTO_PREBUILT_DIR``; ``none``: no prebuilt objects), else ``pypto/runtime/sim/prebuilt``; None while a :func:`use_cache_dir` override is
    active (tests that build into a private cache see only it)."""
    if _cache_override:
        return None
    from pypto.toolchain.settings import resolve_field

    where: str | None = resolve_field("prebuilt_dir")
    if where is None:
        return PREBUILT_DIR
    return None if where.strip().lower() == "none" else Path(where)


def _prebuilt(out: Path) -> Path | None:
    """The install's verified copy of cache object ``out`` (same key, so the same bytes), else None."""
    cand = _prebuilt_path(out)
    return cand if cand is not None and cachefs.verified(cand) else None


def _prebuilt_path(out: Path) -> Path | None:
    """Where the install's copy of cache object ``out`` would be (unchecked), or None without a prebuilt dir."""
    root = prebuilt_dir()
    if root is None:
        return None
    try:
        return root / out.relative_to(cache_root())
    except ValueError:
        return None


def _once(out: Path, build: Callable[[], Path], what: str = "build output") -> Path:
    """``out`` if a verified copy exists (in the cache, else the install's prebuilt one), else ``build()``,
    run once however many threads ask at once."""
    if cachefs.verified(out):  # memoized by (inode, size, mtime): cheap on every later call
        return out
    found = _prebuilt(out)
    if found is not None:
        return found
    with _inflight_lock:
        fut = _inflight.get(out)
        owner = fut is None
        if owner:
            fut = _inflight[out] = Future()
    if not owner:
        return fut.result()
    try:
        result = out if _reuse(out, what) else build()
    except BaseException as exc:
        fut.set_exception(exc)
        raise
    else:
        fut.set_result(result)
        return result
    finally:
        with _inflight_lock:
            _inflight.pop(out, None)


def _runtime_target(platform: str, runtime: str) -> tuple[Path, str]:
    variant = (*PLATFORM_FLAGS[platform], *RUNTIME_MACROS[runtime])
    key = _key(platform, runtime, header_hash(), _src_hash(), *RUNTIME_FLAGS, *LINK_FLAGS, VARIANT_SOURCE,
               *EXTRAS_SOURCES, *variant, compiler_id())
    return cache_root() / "runtime" / f"libpto_sim_{platform}_{runtime}_{key}.so", key


def _extras_target() -> Path:
    key = _key("extras", header_hash(), _src_hash(), *RUNTIME_FLAGS, *LINK_FLAGS, *EXTRAS_SOURCES, compiler_id())
    return cache_root() / "runtime" / f"libpto_sim_extras_{key}.so"


@functools.lru_cache(maxsize=1)
def _src_hash() -> str:
    return _tree_hash(SRC_DIR, (".h", ".cpp"))


def runtime_units() -> list[tuple[str, tuple[Path, ...]]]:
    """(unit, sources) of a runtime library's objects: ``core`` (every source but the variant and the extras
    ones) and ``variant``."""
    srcs = sorted(SRC_DIR.glob("*.cpp"))
    core = tuple(p for p in srcs if p.name != VARIANT_SOURCE and p.name not in EXTRAS_SOURCES)
    return [(name, group) for name, group in (("core", core), ("variant", (SRC_DIR / VARIANT_SOURCE,))) if group]


def extras_units() -> list[tuple[str, tuple[Path, ...]]]:
    """(unit, sources) of the extras library's objects: ``extras`` (comm tasks and DFX recording)."""
    return [("extras", tuple(SRC_DIR / name for name in EXTRAS_SOURCES))]


def _build_runtime(platform: str, runtime: str, out: Path) -> Path:
    """Compile the runtime's objects with parallel g++ jobs and link them (a progress line on a TTY)."""
    variant = (*PLATFORM_FLAGS[platform], *RUNTIME_MACROS[runtime])
    units = [(name, group, variant if name == "variant" else ()) for name, group in runtime_units()]
    return _build_library(units, out, f"the {platform}/{runtime} simulation runtime",
                          f"sim runtime for {platform}/{runtime}", "build_seconds", ("-ldl",))


def _build_extras(out: Path) -> Path:
    units = [(name, group, ()) for name, group in extras_units()]
    return _build_library(units, out, "the simulation runtime's extras (comm tasks, DFX)",
                          "sim runtime extras (comm tasks, DFX)", "extras_build_seconds", ())


def _build_library(units: list[tuple[str, tuple[Path, ...], tuple[str, ...]]], out: Path, what: str, label: str,
                   timing: str, libs: tuple[str, ...]) -> Path:
    """Compile ``units`` (name, sources, extra flags) with parallel g++ jobs and link them into ``out``."""
    start = time.perf_counter()
    _progress(f"pypto: building {label} (one-time, ~{_expected_seconds(timing):.0f} s)")
    with ThreadPoolExecutor(max_workers=max(1, min(len(units), os.cpu_count() or 1))) as pool:
        objs = [f.result() for f in [pool.submit(_runtime_object, *unit) for unit in units]]
    argv = [GXX, *RUNTIME_FLAGS, *LINK_FLAGS, *map(os.fspath, objs), *libs]
    lib = compile_so(argv, out, what)
    _remember_seconds(timing, time.perf_counter() - start)
    return lib


def _runtime_object(unit: str, srcs: tuple[Path, ...], extra: tuple[str, ...]) -> Path:
    """One object from ``srcs`` (several: a unity source that includes them, written next to it)."""
    flags = [f for f in RUNTIME_FLAGS if f != "-shared"]
    out = _object_target(unit, srcs, extra)
    what = f"runtime object {', '.join(s.name for s in srcs)}"
    return _once(out, lambda: _compile_object(out, srcs, flags, extra), what)  # one g++ per object in flight


def _object_target(unit: str, srcs: tuple[Path, ...], extra: tuple[str, ...]) -> Path:
    flags = [f for f in RUNTIME_FLAGS if f != "-shared"]
    key = _key(unit, *(s.name for s in srcs), _src_hash(), header_hash(), *flags, *extra, compiler_id())
    return cache_root() / "runtime" / "obj" / f"{unit}-{key}.o"


def _compile_object(out: Path, srcs: tuple[Path, ...], flags: list[str], extra: tuple[str, ...]) -> Path:
    names = [s.name for s in srcs]
    src = srcs[0]
    if len(srcs) > 1:
        src = out.with_suffix(".cpp")
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = src.with_name(f"{src.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text("".join(f'#include "{n}"\n' for n in names))
        os.replace(tmp, src)
    argv = [GXX, *flags, *extra, "-I", os.fspath(INCLUDE_DIR), "-I", os.fspath(SRC_DIR), "-c", os.fspath(src)]
    return compile_so(argv, out, f"runtime source {', '.join(names)}")


def _seconds_file(name: str) -> Path:
    return cache_root() / "runtime" / name


def _expected_seconds(name: str) -> float:
    with contextlib.suppress(OSError, ValueError):
        return max(1.0, float(_seconds_file(name).read_text()))
    return 2.0


def _remember_seconds(name: str, seconds: float) -> None:
    with contextlib.suppress(OSError):
        _seconds_file(name).write_text(f"{seconds:.1f}\n")


def _progress(line: str) -> None:
    """One status line on stderr while a person waits (only on a terminal: logs and CI stay clean)."""
    stream = sys.stderr
    if getattr(stream, "isatty", lambda: False)():
        print(line, file=stream, flush=True)


def kernel_argv(source: Path, platform: str, core_type: str, include_dirs: tuple[Path, ...] = ()) -> list[str]:
    """g++ command (without ``-o``) for one kernel wrapper ``.cpp``."""
    incs = [arg for d in (INCLUDE_DIR, *include_dirs) for arg in ("-I", os.fspath(d))]
    return [GXX, *KERNEL_FLAGS, *CORE_FLAGS[core_type], *PLATFORM_FLAGS[platform], *incs, os.fspath(source)]


def orchestration_argv(source: Path) -> list[str]:
    """g++ command (without ``-o``) for an orchestration ``.cpp``."""
    return [GXX, *ORCH_FLAGS, "-I", os.fspath(INCLUDE_DIR), os.fspath(source)]


def kernel_pch(platform: str, build: bool = True) -> Path | None:
    """The header to ``-include`` in a kernel build for ``platform`` (its ``.gch`` verified, built once per key
    when missing and ``build``), or None (:mod:`pypto.runtime.kernel_pch`)."""
    flags = (*(f for f in KERNEL_FLAGS if f != "-shared"), *PLATFORM_FLAGS[platform])
    key = _key("pch", *flags, os.fspath(INCLUDE_DIR), pch.PRELUDE, header_hash(), compiler_id())
    hpp = cache_root() / f"pch-{platform}" / f"prelude-{key}.hpp"
    argv = [GXX, *flags, "-I", os.fspath(INCLUDE_DIR), "-x", "c++-header", os.fspath(hpp)]
    make = (lambda gch: compile_so(argv, gch, f"the kernel precompiled header for {platform}")) if build else None
    return pch.header(hpp, make, lambda: _prebuilt_path(hpp))


def prebuild_pch(platform: str) -> None:
    """Verify the kernel precompiled header in the background while a program compiles, and on a fresh cache
    (no kernel built yet: this run builds them all) build it; never raises. Elsewhere a missing one is built
    by the first kernel build that wants it, so a compile whose kernels are all cached starts no g++."""
    if platform in PLATFORM_FLAGS:
        folder = cache_root() / f"kernels-{platform}"
        fresh = not (folder.is_dir() and any(e.name.endswith(".so") for e in os.scandir(folder)))
        _submit_background(kernel_pch, platform, fresh)


def _compile_kernel(argv: list[str], source: Path, out: Path, what: str, header: Callable[[], Path | None]) -> Path:
    """g++ of a cached build from the source's directory, with the precompiled prelude when ``header`` gives one;
    a build that fails with it is redone without it."""
    plain = [*argv[:-1], source.name]
    hpp = header()
    if hpp is None:
        return compile_so(plain, out, what, source.parent)
    try:
        return compile_so([*argv[:-1], "-include", os.fspath(hpp), source.name], out, what, source.parent)
    except ToolchainError:
        built = compile_so(plain, out, what, source.parent)
        pch.reject(hpp)
        return built


def _cached_build(argv: list[str], source: Path, sidecar: Path | None, kind: str, what: str,
                  header: Callable[[bytes], Path | None] = lambda text: None) -> Path:
    for _ in range(3):
        text = source.read_bytes()
        key = _key(kind, text, *argv[1:-1], header_hash(), compiler_id())
        out = cache_root() / kind / f"{source.stem}-{key}.so"
        if _reuse(out, what):
            cachefs.mark_used(out)
            break
        # built from the source's own directory by its bare name: __FILE__ (PTO2_SCOPE's location) and the
        # object are then the same wherever the artifact lives, as the cache key (no path in it) assumes
        _once(out, functools.partial(_compile_kernel, argv, source, out, what, functools.partial(header, text)), what)
        if source.read_bytes() == text:
            prune(out.parent, keep=out)
            break
        cachefs.discard(out, what, "was built from a source that changed during the build")  # never a wrong key
    else:
        raise ToolchainError(f"{what}: the source kept changing while it was being built",
                             hint="another process is rewriting this artifact directory; compile into separate dirs")
    if sidecar is not None:
        _write_sidecar(out, sidecar, key)
    return out


def prune(folder: Path, keep: Path | None = None, max_bytes: int | None = None) -> int:
    """Bound a kernel or orchestration cache folder (:func:`pypto.toolchain.cachefs.prune_lru` of its
    ``.so`` objects) to ``max_bytes``, default the ``cache_max_mb`` setting (PYPTO_CACHE_MAX_MB); ``keep``
    (the object just built) stays. Run after each build; returns how many objects went."""
    if max_bytes is None:
        from pypto.toolchain.settings import cache_max_mb

        max_bytes = cache_max_mb() * 1024 * 1024
    return cachefs.prune_lru(folder, ".so", max_bytes, keep)


def _write_sidecar(built: Path, sidecar: Path, key: str) -> None:
    stamp = sidecar.with_name(sidecar.name + ".key")
    with contextlib.suppress(OSError):
        if stamp.is_file() and stamp.read_text() == key and sidecar.is_file():
            return
        tmp = cachefs.temp_for(sidecar)
        shutil.copyfile(built, tmp)
        os.replace(tmp, sidecar)  # concurrent runs of one artifact dir each see a whole file
        tmp = cachefs.temp_for(stamp)
        tmp.write_text(key)
        os.replace(tmp, stamp)


def build_kernel(spec: KernelSpec, platform: str, sidecars: bool = True) -> Path:
    """Build (or reuse) one kernel; returns the content-addressed ``.so`` to load.

    ``sidecars``: also copy it into the artifact (``kernels/<ct>/<f>.so``, for inspection).
    """
    check_platform(platform)
    if spec.core_type not in CORE_FLAGS:
        raise ToolchainError(f"kernel '{spec.name}': core_type must be 'aiv' or 'aic', got '{spec.core_type}'")
    if not spec.source.is_file():
        raise FileNotFoundError(f"kernel '{spec.name}': source {spec.source} does not exist")
    argv = kernel_argv(spec.source, platform, spec.core_type, spec.include_dirs)

    def header(text: bytes) -> Path | None:
        return kernel_pch(platform) if pch.eligible(text, spec.source, spec.include_dirs) else None

    return _cached_build(argv, spec.source, spec.source.with_suffix(".so") if sidecars else None, f"kernels-{platform}",
                         f"kernel '{spec.name}' ({spec.source})", header)


def build_orchestration(source: Path, sidecars: bool = True) -> Path:
    """Build (or reuse) the orchestration ``.so``."""
    if not source.is_file():
        raise FileNotFoundError(f"orchestration source {source} does not exist")
    return _cached_build(orchestration_argv(source), source, source.with_suffix(".so") if sidecars else None,
                         "orchestration",
                         f"orchestration {source}")


@dataclass(frozen=True, slots=True)
class BuiltProgram:
    """Loadable objects of one artifact for one platform."""

    orchestration: Path
    kernels: tuple[tuple[KernelSpec, Path], ...]


def build_artifact(info: ArtifactInfo, platform: str, jobs: int = 2, sidecars: bool = True) -> BuiltProgram:
    """Build every kernel and the orchestration of an artifact (in parallel on cold caches).

    ``sidecars=False`` fills only the build cache (a compile's background prebuild): the artifact
    directory gets its ``.so`` copies when it is run.
    """
    check_platform(platform, info)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        orch = pool.submit(build_orchestration, info.orchestration, sidecars)
        kernels = [(k, pool.submit(build_kernel, k, platform, sidecars)) for k in info.kernels]
        return BuiltProgram(orch.result(), tuple((k, f.result()) for k, f in kernels))
