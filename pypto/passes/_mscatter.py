"""``tile.mscatter(src, idx, out)`` (a scatter of a tile into GM at element offsets) as load, scatter, store.

ptoas 0.1.1 has ``pto.tmscatter``, but neither pypto's codegen nor its simulators implement it, so the
kernel loads the whole output tensor into Vec, writes ``src`` into that tile at the flat positions
``idx`` (``tile.scatter(..., flat=True)``, one ``pto.tscatter``) and stores the tile back. The elements
``idx`` does not name keep their GM values (they were loaded). That makes the output a tensor the kernel
reads and writes, so the runtime orders the tasks that write it, as for atomic-add stores.
"""

from __future__ import annotations

from math import prod

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Var, as_int
from pypto.ir.function import Function
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.passes._rewrite import emit, ints, load_whole, rewrite_blocks, shaped
from pypto.passes._util import base_name

MAX_BYTES = 64 * 1024  # the whole output lives on chip (a Vec tile) while the scatter writes it


def expand_mscatters(func: Function) -> Function:
    body = rewrite_blocks(func.body, {"tile.mscatter": _expand})
    return func if body is func.body else func.with_(body=body)


def _expand(s: Stmt, call: Call) -> list[Stmt]:
    src, idx, target = call.args
    t = shaped(target)
    dims = [as_int(d) for d in t.shape]
    if any(d is None for d in dims) or prod(dims) * t.dtype.bits // 8 > MAX_BYTES:  # type: ignore[arg-type]
        raise UnsupportedFeatureError(
            f"pl.mscatter into a {t}: pypto lowers it for ptoas 0.1.1 by loading the whole output into a Vec "
            f"tile (pypto's 0.1.1 codegen and simulators do not implement pto.tmscatter), which needs a static "
            f"output of at most {MAX_BYTES // 1024} KiB", call.span,
            hint="scatter into a window of the output (pl.slice it) per call, or compute the offsets on the host")
    name = base_name(getattr(target, "name", "out"))
    out: list[Stmt] = []
    cur = emit(out, f"{name}__cur", load_whole(target, MemorySpace.Vec, call.span), call.span)
    new = emit(out, f"{name}__scattered", make_call("tile.scatter", [cur, idx, src], {"flat": True}, span=call.span),
               call.span)
    store = make_call("tile.store", [new, ints((0,) * len(dims)), target], span=call.span)
    var = s.var if isinstance(s, AssignStmt) else Var(f"{name}__store", store.result_type, span=s.span)
    return [*out, AssignStmt(var, store, span=s.span)]
