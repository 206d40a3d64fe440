"""Upstream's ``pypto.runtime.kernel_compiler``: :class:`KernelCompiler` for one kernel source.

On the simulation platforms a kernel is a host shared object built by g++ against the simulator's
tile-ISA headers (:func:`pypto.runtime.pto_isa_include_dir`), cached by content like every build.
"""

from __future__ import annotations

from pathlib import Path

from pypto.artifact.directory import KernelSpec
from pypto.runtime import build
from pypto.runtime.worker import RUNTIMES


class KernelCompiler:
    """Builds kernels for ``platform`` (``a2a3sim``/``a5sim``; a hardware platform fails naming CANN)."""

    def __init__(self, platform: str = "a2a3sim") -> None:
        build.check_platform(platform)
        self.platform = platform

    def get_kernel_include_dirs(self, runtime_name: str) -> list[str]:
        """Include directories of a kernel of ``runtime_name`` (the simulator's headers serve both runtimes)."""
        if runtime_name not in RUNTIMES:
            raise ValueError(f"unknown runtime {runtime_name!r}; use one of {', '.join(RUNTIMES)}")
        return [str(build.INCLUDE_DIR)]

    def compile_incore(self, source_path: str, core_type: str = "aiv", pto_isa_root: str | None = None,
                       runtime_name: str | None = None, extra_include_dirs: list[str] | None = None,
                       build_dir: str | None = None) -> bytes:
        """Build ``source_path`` for ``core_type`` (``aiv``/``aic``) and return the built object's bytes.

        ``pto_isa_root`` and ``runtime_name`` add their include directories; ``build_dir`` (optional)
        receives a copy of the object as ``<stem>.so``.
        """
        incs = [Path(d) for d in (extra_include_dirs or [])]
        if pto_isa_root:
            incs.append(Path(pto_isa_root) / "include")
        if runtime_name:
            incs += [Path(d) for d in self.get_kernel_include_dirs(runtime_name)]
        src = Path(source_path)
        built = build.build_kernel(KernelSpec(0, src.stem, src, core_type, tuple(incs)), self.platform, sidecars=False)
        data = built.read_bytes()
        if build_dir is not None:
            Path(build_dir).mkdir(parents=True, exist_ok=True)
            (Path(build_dir) / f"{src.stem}.so").write_bytes(data)
        return data


__all__ = ["KernelCompiler"]
