"""Hardware platforms (a2a3, a5): the kernel/orchestration build commands and what they need.

Nothing here can run on a machine without CANN and a device, but the path is complete up to the
commands: :func:`build_plan` lists every command a hardware build runs (``ccec`` for each kernel,
``ld.lld`` to keep the ``kernel_entry`` text, the aarch64 g++ for the orchestration), and
:func:`require_hardware_toolchain` fails with a message naming each missing piece, the commands,
and how to get a hardware image.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.errors import ToolchainError
from pypto.toolchain.platforms import CORE_MACROS, PLATFORMS

# ccec AICore arch per (platform, core type); a2a3 = dav-c220, a5 = dav-c310
_ARCH = {("a2a3", "aiv"): "dav-c220-vec", ("a2a3", "aic"): "dav-c220-cube",
         ("a5", "aiv"): "dav-c310-vec", ("a5", "aic"): "dav-c310-cube"}
ORCH_CXX = "aarch64-target-linux-gnu-g++"


@dataclass(frozen=True, slots=True)
class HardwareCommand:
    """One step of a hardware build."""

    what: str
    argv: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.what}:\n    {shlex.join(self.argv)}"


def kernel_commands(source: Path, platform: str, core_type: str, cann: Path) -> list[HardwareCommand]:
    """ccec compile + ld.lld link of one kernel wrapper ``.cpp`` into ``<source>.o``."""
    obj = source.with_suffix(".o")
    inc = [f"-I{cann / 'include'}", f"-I{cann / 'include' / 'pto'}"]
    compile_cmd = ("ccec", "-c", "-O3", "-x", "cce", "--cce-aicore-only",
                   f"--cce-aicore-arch={_ARCH[(platform, core_type)]}", CORE_MACROS[core_type], *inc,
                   str(source), "-o", str(obj.with_suffix(".tmp.o")))
    link_cmd = ("ld.lld", "-e", "kernel_entry", str(obj.with_suffix(".tmp.o")), "-o", str(obj))
    return [HardwareCommand(f"compile kernel {source.stem} ({core_type})", compile_cmd),
            HardwareCommand(f"link kernel {source.stem}", link_cmd)]


def orchestration_command(source: Path, cann: Path) -> HardwareCommand:
    """The aarch64 cross-compile of the orchestration (it runs on the AICPU)."""
    argv = (ORCH_CXX, "-shared", "-fPIC", "-O3", "-g", "-std=c++17", "-fno-gnu-unique",
            "-Wl,--build-id=sha1", "-pthread", f"-I{cann / 'include'}", str(source),
            "-o", str(source.with_suffix(".so")))
    return HardwareCommand(f"compile orchestration {source.stem}", argv)


def build_plan(info: Any, platform: str, cann: Path) -> list[HardwareCommand]:
    """Every command a hardware build of the artifact ``info`` (an ArtifactInfo) runs."""
    arch = PLATFORMS[platform].arch
    plan: list[HardwareCommand] = []
    for k in info.kernels:
        plan += kernel_commands(Path(k.source), arch, k.core_type, cann)
    plan.append(orchestration_command(Path(info.orchestration), cann))
    return plan


def missing_pieces(cann: Path | None) -> list[str]:
    """What a hardware build needs that this machine lacks."""
    missing = []
    if cann is None or not cann.is_dir():
        missing.append("CANN (set ASCEND_HOME_PATH to the CANN install dir)")
    for tool in ("ccec", "ld.lld", ORCH_CXX):
        if shutil.which(tool) is None:
            missing.append(f"{tool} (on PATH)")
    missing.append("an Ascend device and its driver (hardware platforms cannot be simulated)")
    return missing


def require_hardware_toolchain(info: Any, platform: str, cann: Path | None, how: str) -> None:
    """Raise a ToolchainError naming what is missing and the commands the build would run."""
    plan = build_plan(info, platform, cann or Path("$ASCEND_HOME_PATH"))
    lines = [f"platform '{platform}' needs the hardware toolchain; missing:"]
    lines += [f"  - {m}" for m in missing_pieces(cann)]
    lines.append("the build would run:")
    lines += [f"  {c}" for c in plan]
    raise ToolchainError("\n".join(lines), hint=how)
