"""Whether this machine has Ascend NPU device nodes (it decides if onboard platforms can run)."""

from __future__ import annotations

import glob

DEVICE_GLOBS = ("/dev/davinci*", "/dev/npu*", "/dev/ascend*")


def is_hardware_available() -> bool:
    """True when any Ascend device node exists."""
    return any(glob.glob(pattern) for pattern in DEVICE_GLOBS)
