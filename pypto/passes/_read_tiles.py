"""A tensor scalar read in a kernel loop that only scales rows of tiles becomes a one-element tile load.

ptoas 0.1.1 has no scalar load from GM. ``s = pl.read(t, idx)`` inside a loop of a kernel, where ``t``
is a tensor the kernel takes and does not write, and every use of ``s`` is the scalar operand of an
elementwise op on a 2-D tensor (or Vec tile) with a static row count (``pl.mul(x, s)`` with ``x`` of shape
``[M, N]`` and ``t``'s dtype; the value may first be cast or go through ``+ - * /`` with constants, which
:mod:`._scalar_chain` then does on the tile), needs no scalar at all: ``s`` becomes the ``[1, 1]`` window of ``t`` at ``idx`` (a
load; a ``[1, 1]`` Vec tile when the uses scale tiles), and each use becomes the row broadcast of that window (``tensor.muls`` -> ``tensor.row_expand_mul``;
adds, subs, divs, maximums and minimums likewise), after a column broadcast to ``[M, 1]`` when ``M > 1``. The read may sit anywhere in the loop nest, also in a
loop that carries a tile, where :mod:`._read_gather` and :mod:`._read_loops` cannot take it. Reads at
the top level of the kernel are left to :mod:`._kernel_reads` (they become scalar parameters).

A read of a tensor the kernel itself creates or computes (``pl.create_tensor``, ``pl.full``, a
``pl.fillpad``, ...) is a read of a tile: ``pto.tgetval``, which ptoas 0.1.1 parses but its PlanMemory
pass refuses ("Unrecognized type of Operation touches local buffer"). Such a read is a located error
here, before the passes that move GM reads to the orchestration (which cannot take a tile either), unless
its value is only written (``pl.write(u, pos, pl.read(t, idx))``: ConvertTensorToTileOps copies the
``[1, 1]`` window of ``t``) or it sits in a loop of element reads and writes that UnrollLoops already made
row ops (:mod:`._vector_loops`).

First, a scalar read of a loaded tile, ``pl.tile.read(t, idx)`` with ``t = pl.load(p, offsets, ...)`` and
``p`` a tensor parameter the kernel does not write, is the element of ``p`` it was loaded from:
``pl.read(p, offsets + idx)``, which the later steps move to the orchestration like any tensor read.
"""

from __future__ import annotations

import dataclasses

from pypto.errors import UnsupportedFeatureError
from pypto.ir.census import census
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstFloat, ConstInt, Expr, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.common import ROW_EXPAND_FORM
from pypto.ir.ops.registry import make_call, source_operand
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, WhileStmt, flatten
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.passes._index import iadd
from pypto.passes._kernel_reads import READ, is_read, write_values, written_tensors
from pypto.passes._rewrite import call_in, elements, emit, expand_stmts, ints, match, shaped
from pypto.passes._scalar_chain import Chain, accounted, chain_of, lift, liftable
from pypto.passes._util import iter_stmts


def _row_form(op: object) -> str | None:
    """``tensor.muls`` -> ``tensor.row_expand_mul`` (the registry's row-broadcast form; ``tile.muls`` ->
    ``tile.row_expand_mul``), else None."""
    ns, _, short = op.partition(".") if isinstance(op, str) else ("", "", "")
    form = ROW_EXPAND_FORM.get(short) if ns in ("tensor", "tile") else None
    return f"{ns}.{form}" if form is not None else None


def _rows(e: Expr, dtype: object) -> int | None:
    """The static row count of a 2-D tensor (or Vec tile) of ``dtype`` (None for anything else)."""
    t = e.type
    if not (isinstance(t, TensorType | TileType) and len(t.shape) == 2 and t.dtype == dtype):
        return None
    if isinstance(t, TileType) and t.memory_space not in (None, MemorySpace.Vec):
        return None
    rows = t.shape[0]
    return rows if isinstance(rows, int) else None


def _row_uses(body: Stmt, chain: Chain) -> list[AssignStmt]:
    """The statements ``x = <op>s(a, e)`` with ``e`` computed from the chain's values and ``a`` a 2-D
    tensor of ``e``'s dtype with static rows."""
    uses = []
    for s in iter_stmts(body):
        v = match(s) if isinstance(s, AssignStmt) else None
        if (v is not None and _row_form(v.op) and len(v.args) == 2 and not v.kwargs
                and liftable(e := v.args[1], chain) and isinstance(e.type, ScalarType)
                and _rows(v.args[0], e.type.dtype)):
            uses.append(s)
    return uses


def _loop_reads(f: Function, params: set[Var], written: set[Var]) -> list[AssignStmt]:
    """Reads of an unwritten tensor parameter anywhere inside the kernel's loops."""
    reads = []
    for top in flatten(f.body):
        if not isinstance(top, ForStmt | WhileStmt):
            continue
        for s in iter_stmts(top):
            if isinstance(s, AssignStmt) and is_read(s.value) and isinstance(s.var.var_type, ScalarType):
                t = s.value.args[0]
                if isinstance(t, Var) and t in params and t not in written:
                    reads.append(s)
    return reads


def _window(read: AssignStmt, tile: bool) -> list[AssignStmt]:
    """``s = pl.read(t, idx)`` -> ``s = [1, 1]`` window of ``t`` at ``idx`` (a reshaped slice if t is not 2-D;
    with ``tile``, a ``[1, 1]`` Vec tile loaded from it)."""
    call = read.value
    assert isinstance(call, Call)
    t, idx = call.args[0], elements(call.args[1])
    rank = len(shaped(t).shape)
    sp = read.span
    if tile:
        one = ints([1] * rank)
        load = make_call("tile.load", [t, ints(idx), one, one], {"target_memory": MemorySpace.Vec}, span=sp)
        return [AssignStmt(Var(read.var.name, load.type, span=read.var.span), load, span=sp)]
    window = make_call("tensor.slice", [t, ints([1] * rank), ints(idx)], span=sp)
    tile_t = dataclasses.replace(window.type, shape=(1, 1))
    var = Var(read.var.name, tile_t, span=read.var.span)
    if rank == 2:
        return [AssignStmt(var, window, span=sp)]
    flat = Var(f"{read.var.name}_elem", window.type, span=read.var.span)
    return [AssignStmt(flat, window, span=sp),
            AssignStmt(var, make_call("tensor.reshape", [flat, ints([1, 1])], span=sp), span=sp)]


def origins(f: Function) -> dict[Var, Expr]:
    """Each local tensor Var -> the value it comes from (a definition, a loop init or a branch's yield)."""
    out: dict[Var, Expr] = {}
    for s in iter_stmts(f.body):
        if isinstance(s, AssignStmt):
            out[s.var] = s.value
        elif isinstance(s, ForStmt | WhileStmt):
            out.update(zip(s.iter_args, s.inits, strict=True))
            out.update(zip(s.return_vars, s.inits, strict=True))
    return out


def kernel_tile(t: Expr, params: set[Var], orig: dict[Var, Expr]) -> bool:
    """Whether tensor ``t`` is created or computed in the kernel (a tile), not a window of a GM parameter."""
    for _ in range(len(orig) + 1):
        if not isinstance(t, Var) or t in params:
            return False
        v = orig.get(t)
        src = source_operand(v) if isinstance(v, Call) else None
        if src is not None:
            t = src
        elif isinstance(v, Var):
            t = v
        else:
            return isinstance(v, Call)
    return False


def _refuse_tile_reads(f: Function) -> None:
    params, orig, copied = set(f.params), origins(f), write_values(f.body)
    for s in iter_stmts(f.body):
        v = match(s, "tensor.read") if isinstance(s, AssignStmt) else None
        if v is not None and s.var not in copied and kernel_tile(v.args[0], params, orig):
            name = getattr(v.args[0], "name", "the tensor")
            raise UnsupportedFeatureError(
                f"scalar read of '{name.split('__')[0]}', a tensor this kernel computes (a tile): ptoas 0.1.1 "
                "parses pto.tgetval but its PlanMemory pass refuses it ('Unrecognized type of Operation touches "
                "local buffer'), and it lowers no float scalar arithmetic or comparison in a kernel; a ptoas "
                "that plans scalar tile access (not 0.1.1) would be needed", v.span,
                hint="keep the work in tile ops (pl.row_max / pl.row_argmax of a row give its maximum and the "
                     "first index of it; a loop with constant bounds that only reads elements t[0, i], "
                     "computes with + - * / min max and writes elements becomes row ops), or compute the value "
                     "on the host and pass it to the kernel as a pl.Scalar argument")


def _broadcast(use: AssignStmt, tile: Var) -> list[Stmt]:
    """``x = <op>s(a, s)`` -> ``x = row_expand_<op>(a, col)``, ``col`` the ``[1, 1]`` tile broadcast to a's rows."""
    v = use.value
    form = _row_form(v.op) if isinstance(v, Call) else None
    assert isinstance(v, Call) and form is not None
    dtype = shaped(tile).dtype
    rows, sp, out = _rows(v.args[0], dtype), v.span, []
    ns = form.split(".", 1)[0]
    col: Var = tile
    if rows != 1:
        zero = ConstFloat(0.0) if dtype.is_float else ConstInt(0)
        base = make_call(f"{ns}.full", [ints([rows, 1]), zero], {"dtype": dtype}, span=sp)
        zeros = emit(out, f"{tile.name}_rows0", base, sp)
        col = emit(out, f"{tile.name}_rows", make_call(f"{ns}.col_expand", [zeros, tile], span=sp), sp)
    row = make_call(form, [v.args[0], col], span=sp)
    return [*out, dataclasses.replace(use, value=row)]


def _reads_of_loads(f: Function) -> Function:
    """``pl.tile.read(t, idx)`` of ``t = pl.load(p, offsets, ...)`` -> ``pl.read(p, offsets + idx)`` (the
    module doc); ``p`` a tensor parameter the kernel does not write."""
    if "tile.read" not in census(f).ops:
        return f
    params, written = set(f.params), written_tensors(f)
    loads = {s.var: s.value for s in iter_stmts(f.body) if isinstance(s, AssignStmt) and match(s.value, "tile.load")}
    swap: dict[int, list[Stmt]] = {}
    for s in iter_stmts(f.body):
        v = match(s, "tile.read") if isinstance(s, AssignStmt) else None
        load = loads.get(v.args[0]) if v is not None else None
        if load is None or not (isinstance(p := load.args[0], Var) and p in params and p not in written):
            continue
        offsets, idx = elements(load.args[1]), elements(v.args[1])
        if len(offsets) != len(idx):
            continue
        at = ints([iadd(o, i, v.span) for o, i in zip(offsets, idx, strict=True)], v.span)
        swap[id(s)] = [dataclasses.replace(s, value=make_call("tensor.read", [p, at], span=v.span))]
    return dataclasses.replace(f, body=expand_stmts(f.body, lambda s: swap.get(id(s)))) if swap else f


def _rewrite(f: Function) -> Function:
    f = _reads_of_loads(f)
    if READ not in census(f).ops:  # no scalar read of a tensor: nothing to refuse or to rewrite
        return f
    _refuse_tile_reads(f)
    params = set(f.params)
    reads = _loop_reads(f, params, written_tensors(f))
    if not reads:
        return f
    swap: dict[int, list[Stmt]] = {}
    for read in reads:
        chain, defs = chain_of(f.body, read.var)  # the read itself, then scalars computed from it alone
        uses = _row_uses(f.body, chain)
        if not uses or not accounted(f.body, chain, [call_in(u).args[1] for u in uses]):
            continue
        tiles = {isinstance(call_in(u).args[0].type, TileType) for u in uses}
        if len(tiles) > 1:  # scales both tensors and tiles: left to the other read passes
            continue
        on_tiles = tiles.pop()
        window = _window(read, on_tiles)
        swap[id(read)] = list(window)
        swap.update((id(d), []) for d in defs)
        for use in uses:
            out: list[Stmt] = []
            col = lift(call_in(use).args[1], chain, {read.var: window[-1].var}, "tile" if on_tiles else "tensor",
                       out, use.span)
            swap[id(use)] = [*out, *_broadcast(use, col)]
    if not swap:
        return f
    body = expand_stmts(f.body, lambda s: swap.get(id(s)))
    return dataclasses.replace(f, body=body)


def reads_as_tiles(program: Program) -> Program:
    """Every kernel's row-scaling loop reads as one-element tile loads (see the module doc)."""
    funcs = [_rewrite(f) if f.is_incore else f for f in program.functions]
    if all(a is b for a, b in zip(funcs, program.functions, strict=True)):
        return program
    return program.with_functions(funcs)


__all__ = ["kernel_tile", "origins", "reads_as_tiles"]
