"""N-D GM tensors in kernels: ptoas 0.1.1's views and windows are 2-D, so a packed (row-major) tensor of
rank > 2 is viewed as ``[prod(leading dims), last dim]`` and each N-D window becomes the 2-D window of the
same elements. A window is expressible when, before its last axis, it is 1 along every axis up to some
axis k and covers every axis after k up to the second-to-last (``[1, 1, R, C]``, ``[2, 16, C]`` of
``[., 16, C]``); anything else is a located error naming the window.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pypto.codegen.pto_types import TOOLCHAIN
from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Expr, as_int
from pypto.ir.types import TensorType

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen
    from pypto.codegen.pto_values import GmView


def flat_shape(cg: KernelCodegen, name: str, t: TensorType) -> list:
    """``[rows, cols]`` of a rank > 2 tensor viewed flat; the dims between the first and the last must be
    constants (the first may be a run-time one) and the strides packed."""
    dims = [as_int(d) if not isinstance(d, int) else d for d in t.shape[:-1]]
    stride = t.view.stride if t.view is not None else None
    packed = stride is None or [as_int(s) if not isinstance(s, int) else s for s in stride] == \
        [math.prod(t.shape[i + 1:]) if all(isinstance(d, int) for d in t.shape[i + 1:]) else None
         for i in range(len(t.shape))]
    if any(d is None for d in dims[1:]) or not packed:
        raise cg.error(f"kernel '{cg.func.name}': tensor '{name}' has rank {len(t.shape)} with "
                       f"{'dynamic dims after the first' if packed else 'non-packed strides'}; the {TOOLCHAIN} "
                       "codegen views an N-D tensor as 2-D, which needs constant dims between the first and the "
                       "last and row-major strides", hint="reshape the tensor to 2-D in the orchestration")
    return [flat_rows(t.shape), t.shape[-1]]


def flat_rows(nd: tuple | list) -> object:
    """Rows of the 2-D view of an N-D shape: the product of its dims before the last (an expression
    when the first is a run-time dim)."""
    rest = math.prod(nd[1:-1])
    return nd[0] * rest if isinstance(nd[0], int) else _mul(nd[0], rest)


def _expr(v: object) -> Expr:
    return ConstInt(v, DataType.INDEX) if isinstance(v, int) else v  # type: ignore[return-value]


def _mul(a: object, k: int) -> object:
    if k == 1:
        return a
    return a * k if isinstance(a, int) else BinaryExpr(BinOp.Mul, _expr(a), ConstInt(k, DataType.INDEX),
                                                        DataType.INDEX)


def _add(a: object, b: object) -> object:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if a == 0:
        return b
    if b == 0:
        return a
    return BinaryExpr(BinOp.Add, _expr(a), _expr(b), DataType.INDEX)


def flat_window(cg: KernelCodegen, view: GmView, offsets: list, sizes: list) -> tuple[list, list]:
    """The 2-D ``(offsets, sizes)`` of an N-D window of a flattened view (a lower-rank window fills the
    last axes)."""
    nd = list(view.nd)
    sizes = [1] * (len(nd) - len(sizes)) + list(sizes)
    if len(offsets) != len(nd):
        raise cg.error(f"window rank {len(offsets)} does not match tensor rank {len(nd)}")
    lead = [as_int(s) if not isinstance(s, int) else s for s in sizes[:-1]]
    k = next((i for i, s in enumerate(lead) if s != 1), len(lead))
    dynamic = k == len(lead) - 1 and lead[k] is None  # a run-time row count on the second-to-last axis
    if dynamic:
        lead[k] = sizes[-2]
    elif any(s is None for s in lead) or any(lead[j] != nd[j] for j in range(k + 1, len(lead))):
        raise cg.error(f"the window {sizes} of a {nd} tensor is not one block of rows of its 2-D view; the "
                       f"{TOOLCHAIN} codegen handles N-D windows that are 1 along the leading axes and then cover "
                       "the remaining axes before the last one",
                       hint="slice a window of that form, or reshape the tensor to 2-D in the orchestration")
    row: object = 0
    for i, off in enumerate(offsets[:-1]):
        row = _add(row, _mul(off, math.prod(nd[i + 1:-1])))
    rows = sizes[-2] if dynamic else math.prod(lead)  # type: ignore[arg-type]
    return [row, offsets[-1]], [rows, sizes[-1]]
