"""Names that generated ``kernel_config.py`` files import (``ArgDirection as _D``)."""

from __future__ import annotations

import os
from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pypto.runtime.artifact import ArtifactInfo


class ArgDirection(IntEnum):
    """Direction of an argument in a callable signature (tensors only; scalars are implied)."""

    SCALAR = 0
    IN = 1
    OUT = 2
    INOUT = 3


def load_kernel_config(output_dir: str | os.PathLike[str]) -> ArtifactInfo:
    """Parse ``<output_dir>/kernel_config.py`` (and ``compiled_meta.json``) of an artifact."""
    from pypto.runtime.artifact import load_artifact

    return load_artifact(output_dir)
