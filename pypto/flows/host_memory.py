"""How much host memory a CLI run's generated arrays take, checked before any is allocated.

``pypto run`` and ``pypto run-pto`` make seeded inputs and zeroed outputs from shape specs; a spec
like ``a=1099511627776x1:f32`` would ask numpy for terabytes. :func:`check_run_bytes` states the
bytes a run needs and refuses it (a UserError, exit 3) beyond the ``run_max_bytes`` setting (unset:
half of the physical memory). A compile never allocates: it specializes from :func:`shape_only`
stand-ins, zero-stride views that carry a shape and a dtype and own one element.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pypto.errors import UserError

INT64_MAX = (1 << 63) - 1
COPIES = 2  # a run keeps each array and one copy (the golden's inputs / the saved inputs)


def too_large(shape: Sequence[int], itemsize: int) -> str | None:
    """Why a tensor of ``shape`` cannot exist (a dimension or its byte size past int64), or None."""
    big = [d for d in shape if d > INT64_MAX]
    if big:
        return f"dimension {big[0]} does not fit in int64 (at most {INT64_MAX})"
    nbytes = math.prod(shape) * itemsize
    if nbytes > INT64_MAX:
        return f"{nbytes} bytes do not fit in int64 (at most {INT64_MAX})"
    return None


def shape_only(shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """A read-only array of ``shape`` and ``dtype`` that allocates one element (all strides 0)."""
    return np.broadcast_to(np.zeros((), dtype), tuple(shape))


def human(nbytes: int) -> str:
    """``8.0 TiB``-style size."""
    size = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{nbytes} bytes"


def check_run_bytes(what: str, arrays: Sequence[tuple[str, Sequence[int], int]]) -> int:
    """Refuse a run whose arrays (name, shape, itemsize) need more than ``run_max_bytes``; the bytes needed."""
    from pypto.toolchain.settings import run_max_bytes

    sizes = [(name, math.prod(shape) * itemsize) for name, shape, itemsize in arrays]
    need = COPIES * sum(n for _, n in sizes)
    limit = run_max_bytes()
    if need > limit:
        biggest = ", ".join(f"{name}: {human(n)}" for name, n in sorted(sizes, key=lambda s: -s[1])[:4])
        raise UserError(f"{what} needs {need} bytes ({human(need)}) of host memory for its generated arrays "
                        f"({biggest}; each kept twice), more than the limit of {limit} bytes ({human(limit)})",
                        hint="use smaller shapes, or raise the limit with PYPTO_RUN_MAX_BYTES=<bytes> "
                             "(setting 'run_max_bytes'; unset: half of the physical memory)")
    return need
