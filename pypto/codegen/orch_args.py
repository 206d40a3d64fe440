"""Tensor arguments of a kernel submit: the kernel reads each one with the layout its parameter declares.

The orchestration passes a tensor by its base pointer; the kernel walks it with the strides its
parameter's type gives (dense row-major unless a ``pl.TensorView`` says otherwise). Two arguments
would be read wrongly and are refused, each with the annotation that fixes it: a strided view (a
``pl.transpose``, a DN view) given to a dense parameter, and a ``tensor.slice`` window whose rows
have gaps between them in their parent (:func:`gappy_windows`) given to a dense parameter.
"""

from __future__ import annotations

from pypto.codegen.emitter import base_name
from pypto.errors import UserError
from pypto.ir.expr import Call, Var, as_int
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, Stmt, preorder
from pypto.ir.types import TensorType


def _strides(t: TensorType) -> tuple | None:
    """A tensor's strides when they differ from dense row-major (None: dense)."""
    st = t.view.stride if t.view is not None else None
    if st is None or (len(t.shape) == 2 and tuple(st) == (t.shape[1], 1)):
        return None
    return tuple(st)


def check_views(c: Call, callee: Function) -> None:
    """A kernel reads a tensor argument with the strides its parameter declares: a strided argument
    (``pl.transpose(x, 0, 1)``, a DN view) given to a dense parameter would be read in the wrong order."""
    for arg, p in zip(c.args, callee.params, strict=False):
        if not (isinstance(arg.type, TensorType) and isinstance(p.type, TensorType)):
            continue
        have, want = _strides(arg.type), _strides(p.type)
        if have is not None and have != want:
            dims = ", ".join(str(d) for d in have)
            raise UserError(f"argument '{base_name(getattr(arg, 'name', '?'))}' of '{callee.name}' is a strided "
                            f"view (strides [{dims}], e.g. a pl.transpose) but parameter '{base_name(p.name)}' "
                            f"declares {'strides ' + str(list(want)) if want else 'a dense row-major tensor'}, so "
                            "the kernel would read it in the wrong order", c.span,
                            hint=f"annotate the parameter pl.Tensor[[...], dtype, pl.TensorView(stride=[{dims}], "
                                 "layout=pl.TensorLayout.DN)], or leave it a bare pl.Tensor in a @pl.jit.incore")


def gappy_windows(body: Stmt) -> dict[Var, tuple[tuple, tuple]]:
    """``{var: (parent shape, window shape)}`` of the ``tensor.slice`` windows in ``body`` whose elements
    are not one run of their dense parent (a window narrower than a row, unless it is a single row)."""
    out: dict[Var, tuple[tuple, tuple]] = {}
    for s in preorder(body):
        if not (isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == "tensor.slice"):
            continue
        parent, window = s.value.args[0].type, s.var.type
        if not (isinstance(parent, TensorType) and isinstance(window, TensorType)) or parent.view is not None:
            continue
        full = tuple(as_int(d) for d in parent.shape)
        part = tuple(as_int(d) for d in window.shape)
        if None in full or None in part or len(full) != len(part):
            continue
        k = next((i for i in range(len(part)) if part[i] != 1), len(part))  # leading unit axes are free
        if any(part[j] != full[j] for j in range(k + 1, len(part))):
            out[s.var] = (full, part)
    return out


def check_windows(c: Call, callee: Function, gappy: dict[Var, tuple[tuple, tuple]]) -> None:
    """A window with gaps between its rows, given to a dense kernel parameter, would be read as if packed."""
    for arg, p in zip(c.args, callee.params, strict=False):
        if arg not in gappy or not isinstance(p.type, TensorType) or _strides(p.type) is not None:
            continue
        full, part = gappy[arg]  # type: ignore[index]
        stride = [1] * len(full)
        for i in range(len(full) - 2, -1, -1):
            stride[i] = stride[i + 1] * full[i + 1]
        raise UserError(f"argument '{base_name(getattr(arg, 'name', '?'))}' of '{callee.name}' is a {list(part)} "
                        f"window of a {list(full)} tensor, whose rows are {stride[-2] if len(full) > 1 else 1} "
                        f"elements apart, but parameter '{base_name(p.name)}' declares a dense tensor, so the "
                        "kernel would read the wrong elements", c.span,
                        hint="pass the whole tensor and pl.load the window inside the kernel, or declare the "
                             f"parameter's strides: pl.TensorView(stride={stride}, layout=pl.TensorLayout.ND)")
