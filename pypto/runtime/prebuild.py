"""Prebuild the simulation runtime into the install: ``python -m pypto.runtime.prebuild``.

A first run on a fresh cache builds the sim runtime library (~2-3 s of CPU) before anything can run.
An install (a docker image, a CI job, a post-install step; ``pip install`` itself builds nothing) can
build it once ahead of time into ``pypto/runtime/sim/prebuilt`` (or ``--dir``, then point
``PYPTO_PREBUILT_DIR`` at it): every later run, whatever its cache dir, finds the library there and
builds only its kernels. The objects carry the same content keys as the cache's (sources, headers,
flags, compiler), so a prebuilt library is used only where the cache would hold the very same bytes;
after a g++ upgrade or a source change the cache builds its own again. The directory is read only at
run time; a damaged object in it is skipped (its digest no longer matches), never an error.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pypto.runtime import build

RUNTIMES = tuple(build.RUNTIME_MACROS)
PLATFORMS = tuple(build.PLATFORM_FLAGS)


def prebuild(dest: Path, platforms: tuple[str, ...] = PLATFORMS, runtimes: tuple[str, ...] = RUNTIMES,
             extras: bool = True) -> list[Path]:
    """Build the runtime libraries of every (platform, runtime) (and the extras) into ``dest``; their paths."""
    with build.use_cache_dir(Path(dest)):
        libs = [build.runtime_library(p, r) for p in platforms for r in runtimes]
        if extras:
            libs.append(build.runtime_extras())
    return libs


def prebuild_pch(dest: Path, platforms: tuple[str, ...] = PLATFORMS) -> list[Path]:
    """Build the kernel precompiled header of every platform into ``dest`` (:mod:`pypto.runtime.kernel_pch`);
    the headers (a ``.gch`` beside each); a platform whose g++ cannot precompile it is left out."""
    with build.use_cache_dir(Path(dest)):
        return [h for h in (build.kernel_pch(p) for p in platforms) if h is not None]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pypto.runtime.prebuild", description=__doc__.split("\n", 1)[0])
    ap.add_argument("--dir", type=Path, default=None,
                    help="where to build (default: PYPTO_PREBUILT_DIR, else pypto/runtime/sim/prebuilt)")
    ap.add_argument("--platform", action="append", choices=PLATFORMS, help="only this platform (repeatable)")
    ap.add_argument("--runtime", action="append", choices=RUNTIMES, help="only this runtime (repeatable)")
    ap.add_argument("--no-extras", action="store_true", help="skip the extras library (comm tasks, DFX)")
    ap.add_argument("--no-pch", action="store_true", help="skip the kernels' precompiled header (~38 MB a platform)")
    args = ap.parse_args(argv)
    dest = args.dir or build.prebuilt_dir() or build.PREBUILT_DIR
    start = time.perf_counter()
    libs = prebuild(dest, tuple(args.platform or PLATFORMS), tuple(args.runtime or RUNTIMES), not args.no_extras)
    headers = [] if args.no_pch else prebuild_pch(dest, tuple(args.platform or PLATFORMS))
    for path in (*libs, *headers):
        print(path)
    print(f"prebuilt {len(libs)} runtime libraries and {len(headers)} kernel precompiled headers into {dest} "
          f"in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
