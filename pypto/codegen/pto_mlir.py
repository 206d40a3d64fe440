"""PTO MLIR codegen for the ptoas 0.1.1 dialect: one module per kernel unit.

A :class:`KernelCodegen` walks one AIV/AIC function. Tile ops are lowered by the rule table it is
given (:mod:`pypto.codegen.pto_rules`, keyed by op name; :mod:`pypto.codegen.pto_module` wires the
two); this module owns GM views, tile buffers and control flow. Its mixins bind the function's
arguments (:mod:`pypto.codegen.pto_signature`) and lower scalar/index arithmetic
(:mod:`pypto.codegen.pto_scalar`). The values it binds variables to live below it, in
:mod:`pypto.codegen.pto_values`.

Tile buffers: ptoas 0.1.1 plans on-chip memory itself (``alloc_tile`` has no address), so our
planner's addresses are dropped. Tiles the planner put at the same MemRef (base, offset) with the
same ``tile_buf`` type share one hoisted ``alloc_tile`` SSA value: the planner only does that when
lifetimes do not overlap (or the op is in place), so sharing is exact and keeps UB usage at what the
planner computed. Tiles with a dynamic valid shape get their own ``alloc_tile`` at the definition.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pypto.artifact.model import KernelFunc, KernelParam
from pypto.codegen import pto_uint32, pto_unsigned
from pypto.codegen.cores import core_of
from pypto.codegen.emitter import Emitter, base_name
from pypto.codegen.pto_ndview import flat_shape
from pypto.codegen.pto_scalar import ScalarLowering, only_yields
from pypto.codegen.pto_signature import KernelSignature
from pypto.codegen.pto_types import TOOLCHAIN, TileBuf, scalar_type, tile_buf
from pypto.codegen.pto_values import GmView, Pieces, Scalar, Tile, carried_pieces_error, pieces_error
from pypto.errors import UserError
from pypto.ir.expr import Call, Expr, Var, as_int
from pypto.ir.function import Function
from pypto.ir.stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    RuntimeScopeStmt,
    SeqStmts,
    Stmt,
    YieldStmt,
)
from pypto.ir.types import MemRef, PtrType, ScalarType, TensorType, TileType
from pypto.span import Span
from pypto.toolchain.prefix_map import PrefixMap, apply_prefix_map


def _loc_text(span: Span, file_map: PrefixMap = ()) -> str:
    file = apply_prefix_map(span.file, file_map).replace("\\", "\\\\").replace('"', '\\"')
    return f' loc("{file}":{span.line}:{span.col})'


class KernelCodegen(KernelSignature, ScalarLowering):
    """Emits one ``func.func`` for an InCore function."""

    def __init__(self, func: Function, *, emit_loc: bool,
                 rules: Mapping[str, Callable[[Any, Call, Var | None], None]], file_map: PrefixMap = (),
                 allocs_at_first_use: bool = False) -> None:
        self.func = func
        self.allocs_at_first_use = allocs_at_first_use
        """ptoas plans memory (the PTOAS planner): see :func:`_allocs_at_first_use`."""
        self.rules = rules
        self.emit_loc = emit_loc
        self.file_map = file_map
        self.names = Emitter()
        self.out = Emitter(level=2)
        self.head: list[str] = []  # constants
        self.views: list[str] = []
        self.allocs: list[str] = []
        self.env: dict[Var, Tile | GmView | Scalar] = {}
        self.bufs: dict[tuple[int, object, str], Tile] = {}
        self.written: set[str] = set()
        self.span = func.span
        self.yields: list[list[Tile | None]] = []
        self.params: list[KernelParam] = []
        self.dst: Var | None = None  # the statement's result and its valid region (see inherited_valid)
        self.valid: tuple | None = None
        self.id_args: dict[str, str] = {}  # tile.get_block_idx & co passed as index args (see pto_signature)
        ScalarLowering.__init__(self)

    # ------------------------------------------------------------------ output helpers
    def loc(self) -> str:
        return _loc_text(self.span, self.file_map) if self.emit_loc and self.span.is_known() else ""

    def op(self, text: str) -> None:
        """Emit one operation line (with the current statement's source location)."""
        self.out.line(text + self.loc())

    def error(self, msg: str, hint: str | None = None) -> UserError:
        return UserError(msg, self.span, hint=hint)

    # ------------------------------------------------------------------ GM views
    def make_views(self) -> None:
        for p in self.func.params:
            if isinstance(p.type, TensorType):
                self.env[p] = self._view(p)

    def _view(self, p: Var) -> GmView:
        t = p.type
        assert isinstance(t, TensorType)
        shape = list(t.shape)
        if len(shape) == 1:
            shape = [1, shape[0]]
        nd = tuple(t.shape) if len(shape) > 2 else ()
        if nd:
            self.span = p.span
            shape = flat_shape(self, base_name(p.name), t)
        strides = [shape[1], 1] if nd else self._strides(t, shape)
        sh = [self.index(d, into=self.views) for d in shape]
        st = [self.index(d, into=self.views) for d in strides]
        arg = self.env[p]
        ssa = self.names.unique(f"{base_name(p.name)}_view")
        view = GmView(ssa, t, 2, arg.ssa, nd)
        self.views.append(f"%{ssa} = pto.make_tensor_view %{arg.ssa}, shape = [{', '.join('%' + x for x in sh)}] "
                          f"strides = [{', '.join('%' + x for x in st)}] : {view.ty}{_loc_text(p.span, self.file_map) if self._loc_ok(p.span) else ''}")
        return view

    def _loc_ok(self, span: Span) -> bool:
        return self.emit_loc and span.is_known()

    def _strides(self, t: TensorType, shape: list) -> list:
        st = t.view.stride if t.view is not None else None
        if st is not None and len(st) == 2:
            return list(st)
        return [shape[1], 1]

    # ------------------------------------------------------------------ tiles
    def tile_of(self, e: Expr) -> Tile:
        """The tile buffer an operand refers to; never-written UB tiles are zero-filled first."""
        v = self.env.get(e) if isinstance(e, Var) else None
        if not isinstance(v, Tile):
            if isinstance(v, Pieces):
                raise pieces_error(self, e, v)
            raise self.error(f"expected a tile operand, got {e!r}")
        if v.ssa not in self.written:
            self.zero_fill(v)
        return v

    def zero_fill(self, t: Tile) -> None:
        """``ptoas`` 0.1.1 aborts on reads of never-written tiles; give them a defined value (0)."""
        if t.buf.loc != "ub":
            raise self.error(f"a {t.buf.loc} tile is read before anything writes it; {TOOLCHAIN} cannot "
                             "lower reads of never-written tiles",
                             hint="load or compute the tile first (use tile.matmul, not matmul_acc, "
                                  "for the first accumulation)")
        ty = pto_uint32.scalar_type(t.buf.dtype)
        pto_uint32.broadcast(self, self.const(0.0 if t.buf.dtype.is_float else 0, ty), ty, t)

    def buf_type(self, t: TileType, valid: tuple | None = None) -> TileBuf:
        return tile_buf(t, f"kernel '{self.func.name}'", self.span, valid)

    def inherited_valid(self, c: Call, dst: Var | None) -> tuple | None:
        """The valid region ``dst`` gets from its op: a load's ``valid_shapes``, else the first
        tile operand's valid region on the axes where the shapes agree (None: the full tile)."""
        t = dst.type if dst is not None else None
        if not isinstance(t, TileType) or len(t.shape) != 2 or (t.view is not None and t.view.valid_shape):
            return None
        if c.op == "tile.load":
            dims = c.args[3].elements if len(c.args) > 3 and hasattr(c.args[3], "elements") else ()
            return tuple(as_int(d) if as_int(d) is not None else d for d in dims) if len(dims) == 2 else None
        for a in c.args:
            src = self.env.get(a) if isinstance(a, Var) else None
            if isinstance(src, Tile) and src.buf.valid != (src.buf.rows, src.buf.cols):
                full = (src.buf.rows, src.buf.cols)
                return tuple(v if as_int(d) == n else d for v, d, n in zip(src.buf.valid, t.shape, full, strict=True))
        return None

    def def_tile(self, var: Var | None, ttype: TileType | None = None,
                 valid: tuple | None | str = "inherited") -> Tile:
        """The buffer that receives ``var`` (shared with same-MemRef, same-type tiles).

        ``valid``: its valid region; by default the one the statement's op gives its result
        (:meth:`inherited_valid`), None for the whole tile.
        """
        t = ttype or (var.type if var is not None else None)
        if not isinstance(t, TileType):
            raise self.error(f"result '{getattr(var, 'name', '?')}' must be a Tile, got {t}")
        if valid == "inherited":
            valid = self.valid if var is not None and var is self.dst else None
        buf = self.buf_type(t, valid if isinstance(valid, tuple) else None)
        hint = base_name(var.name) if var is not None else "tmp"
        if buf.dynamic:
            tile = self._alloc_here(buf, hint)
        else:
            tile = self._shared(t.memref, buf, hint)
        if var is not None:
            self.env[var] = tile
        return tile

    def view_tile(self, src: Tile, buf: TileBuf, var: Var | None) -> Tile:
        """The handle a ``pto.treshape`` of ``src`` writes: one of its own per (source handle, type).

        TRESHAPE points its destination at the source's bytes and the handle keeps that address, so
        the destination must not be a handle another tile is loaded or computed into. One shared
        through the result's MemRef (MemoryReuse gives the result a buffer of its own, which a later
        tile may share) would, on the next loop iteration, load that tile into the source's bytes.
        A handle with run-time valid extents is allocated where it is needed, so it is fresh anyway.
        """
        hint = base_name(var.name) if var is not None else "view"
        if buf.dynamic:
            tile = self._alloc_here(buf, hint)
        else:
            key = ("view", src.ssa, buf.text)
            tile = self.bufs.get(key) or self.scratch(buf, hint, key)
        if var is not None:
            self.env[var] = tile
        return tile

    def _shared(self, memref: MemRef | None, buf: TileBuf, hint: str) -> Tile:
        key = None
        if memref is not None and isinstance(memref.base, Var):
            off = as_int(memref.offset)
            key = (memref.base.uid, off if off is not None else id(memref.offset), buf.text)
            if key in self.bufs:
                return self.bufs[key]
        return self.scratch(buf, hint, key)

    def _alloc_here(self, buf: TileBuf, hint: str) -> Tile:
        """An ``alloc_tile`` at the current point, with its partial valid extents as operands."""
        tile = Tile(self.names.unique(hint), buf)
        vr, vc = (self.index(x) if op else None for x, op in zip(buf.valid, buf.operand_axes, strict=True))
        ops = "".join(f" {k} = %{v}" for k, v in (("valid_row", vr), ("valid_col", vc)) if v)
        self.op(f"%{tile.ssa} = pto.alloc_tile{ops} : {buf.text}")
        return tile

    def scratch(self, buf: TileBuf, hint: str = "tmp", key: tuple | None = None, shared: bool = False) -> Tile:
        """A fresh hoisted ``alloc_tile``; a buffer with a partial valid region is allocated where it is
        needed instead (its valid extents are operands). ``shared``: a temporary that lives within one op,
        so every op of the kernel uses the same one per buffer type (ptoas 0.1.1 gives each alloc_tile
        bytes of its own)."""
        if buf.dynamic and key is None:
            return self._alloc_here(buf, hint)
        if shared and key is None:
            key = ("op_scratch", 0, buf.text)
            if key in self.bufs:
                return self.bufs[key]
        tile = Tile(self.names.unique(hint), buf)
        self.allocs.append(f"%{tile.ssa} = pto.alloc_tile : {buf.text}{self.loc()}")
        if key is not None:
            self.bufs[key] = tile
        return tile

    def emit_op(self, name: str, ins: str, out: Tile, suffix: str = "") -> None:
        """``pto.<name> ins(<ins>) outs(%out : T)`` and mark ``out`` written."""
        self.op(f"pto.{name} ins({ins}) outs(%{out.ssa} : {out.ty}){suffix}")
        self.written.add(out.ssa)

    def copy(self, src: Tile, dst: Tile) -> None:
        if src.ssa != dst.ssa:
            self.emit_op("tmov", f"%{src.ssa} : {src.ty}", dst)

    # ------------------------------------------------------------------ statements
    def stmt(self, s: Stmt) -> None:
        prev = self.span
        if s.span.is_known():
            self.span = s.span
        try:
            handler = _STMTS.get(type(s))
            if handler is None:
                raise self.error(f"statement {type(s).__name__} is not supported in kernels by the "
                                 f"{TOOLCHAIN} codegen")
            handler(self, s)
        finally:
            self.span = prev

    def _seq(self, s: SeqStmts) -> None:
        for x in s.stmts:
            self.stmt(x)

    def _scope(self, s: RuntimeScopeStmt) -> None:
        self.stmt(s.body)

    def _assign(self, s: AssignStmt) -> None:
        v = s.value
        if isinstance(v.type, PtrType):
            return  # tile.alloc: ptoas plans memory itself
        if isinstance(v, Call):
            self.call(v, s.var)
        elif isinstance(v, Var) and v in self.env:
            self.env[s.var] = self.env[v]
        else:
            ty = scalar_type(s.var.type.dtype, s.var.name, self.span) if isinstance(s.var.type, ScalarType) \
                else "index"
            self.env[s.var] = Scalar(self.value(v, ty), ty)

    def _eval(self, s: EvalStmt) -> None:
        if isinstance(s.expr, Call):
            self.call(s.expr, None)

    def call(self, c: Call, dst: Var | None) -> None:
        if c.span.is_known():
            self.span = c.span
        rule = self.rules.get(c.op) if isinstance(c.op, str) else None
        if rule is None:
            raise self.error(f"op '{c.op_name}' has no lowering to the PTO dialect of {TOOLCHAIN}",
                             hint="see docs for the list of supported tile ops")
        pto_unsigned.check(self, c, dst)
        self.dst, self.valid = dst, self.inherited_valid(c, dst)
        try:
            rule(self, c, dst)
        finally:
            self.dst, self.valid = None, None

    def _return(self, s: ReturnStmt) -> None:
        return

    def _for(self, s: ForStmt) -> None:
        lb, ub, st = (self.loop_bound(e) for e in (s.start, s.stop, s.step))
        for ia, init in zip(s.iter_args, s.inits, strict=True):
            self._bind_carry(ia, init)
        iv = self.names.unique(base_name(s.loop_var.name))
        self.env[s.loop_var] = Scalar(iv, "index")
        self.out.line(f"scf.for %{iv} = %{lb} to %{ub} step %{st} {{")
        self.yields.append([self.env.get(ia) if isinstance(self.env.get(ia), Tile) else None  # type: ignore[misc]
                            for ia in s.iter_args])
        self.out.push()
        self.stmt(s.body)
        self.out.pop()
        self.yields.pop()
        self.out.line("}")
        for ia, rv in zip(s.iter_args, s.return_vars, strict=False):
            self.env[rv] = self.env[ia]

    def _bind_carry(self, ia: Var, init: Expr | None) -> None:
        val = self.env.get(init) if isinstance(init, Var) else None
        if val is None or isinstance(val, Scalar):
            raise self.error(f"loop-carried scalar '{base_name(ia.name)}' is not supported in kernels by "
                             f"the {TOOLCHAIN} codegen", hint="carry the value in a tile, or compute it on the host")
        self.env[ia] = val

    def _if(self, s: IfStmt) -> None:
        cond = self.value(s.cond, "i1")
        # scalar results are real scf.if results; tile results share one buffer (copied into in _yield)
        targets: list[Tile | str | None] = [self._if_result_type(rv) for rv in s.return_vars]
        if self.select_outer(s, cond, targets) == len(s.return_vars) and only_yields(s):
            return
        scalars = [(rv, t) for rv, t in zip(s.return_vars, targets, strict=True) if isinstance(t, str)]
        if scalars and s.else_body is None:
            raise self.error("an if without else cannot produce a scalar value")
        names = [self.names.unique(base_name(rv.name)) for rv, _ in scalars]
        if scalars:
            self.out.line(f"{', '.join('%' + n for n in names)} = scf.if %{cond} -> "
                          f"({', '.join(t for _, t in scalars)}) {{")
        else:
            self.out.line(f"scf.if %{cond} {{")
        self.yields.append(targets)  # type: ignore[arg-type]
        self.out.push()
        self.stmt(s.then_body)
        self.out.pop()
        if s.else_body is not None:
            self.out.line("} else {")
            self.out.push()
            self.stmt(s.else_body)
            self.out.pop()
        self.yields.pop()
        self.out.line("}")
        for rv, t in zip(s.return_vars, targets, strict=False):
            if isinstance(t, Tile):
                self.env[rv] = t
        for (rv, ty), name in zip(scalars, names, strict=True):
            self.env[rv] = Scalar(name, ty)

    def _yield_scalar(self, v: Expr, ty: str) -> str:
        """The SSA value an ``scf.yield`` gives for ``v``.

        ptoas 0.1.1's emitc stage types an ``index`` kernel argument as ``int32_t`` and then rejects
        yielding it into an ``index`` result; a round trip through i64 gives it the index type.
        """
        val = self.value(v, ty)
        params = {getattr(self.env.get(p), "ssa", None) for p in self.func.params}
        if not (ty == "index" and val in params):
            return val
        wide = self.names.unique("wide")
        self.op(f"%{wide} = arith.index_cast %{val} : index to i64")
        back = self.names.unique("idx")
        self.op(f"%{back} = arith.index_cast %{wide} : i64 to index")
        return back

    def _if_result_type(self, rv: Var) -> str | None:
        """MLIR type of a scalar ``scf.if`` result (integers travel as ``index``), None for a tile."""
        t = rv.type
        if not isinstance(t, ScalarType):
            return None
        if t.dtype.is_int:
            return "index"  # 0.1.1 lowers index-typed scf.if results; i32/i64 ones fail in its emitc stage
        raise self.error(f"'{base_name(rv.name)}': an if/else choosing a {t.dtype.value} scalar cannot be lowered by "
                         f"{TOOLCHAIN}", hint="choose the value on the host and pass it as a kernel argument")

    def _yield(self, s: YieldStmt) -> None:
        if not self.yields:
            return
        targets = self.yields[-1]
        scalars: list[tuple[str, str]] = []
        for i, v in enumerate(s.values):
            if i < len(targets) and isinstance(targets[i], str):  # a scalar result of an scf.if
                scalars.append((self._yield_scalar(v, targets[i]), targets[i]))  # type: ignore[arg-type]
                continue
            val = self.env.get(v) if isinstance(v, Var) else None
            if isinstance(val, Pieces):
                raise carried_pieces_error(self, v, val)
            if not isinstance(val, Tile) or i >= len(targets):
                continue
            if targets[i] is None:
                targets[i] = val
            else:
                self.copy(val, targets[i])  # type: ignore[arg-type]
        if scalars:
            self.out.line(f"scf.yield {', '.join('%' + n for n, _ in scalars)} : {', '.join(t for _, t in scalars)}")

    # ------------------------------------------------------------------ whole function
    def emit(self) -> tuple[str, KernelFunc]:
        """The ``func.func`` text and its argument model."""
        sig = self.signature()
        self.make_views()
        self.stmt(self.func.body)
        lines = [f"  func.func @{self.func.name}({sig}) {{"]
        if self.allocs_at_first_use:
            lines += [f"    {x}" for x in self.head + self.views]
            lines += _allocs_at_first_use([f"    {x}" for x in self.allocs], self.out.lines)
        else:
            lines += [f"    {x}" for x in self.head + self.views + self.allocs]
            lines += self.out.lines
        lines += ["    return", "  }"]
        kf = KernelFunc(self.func.name, core_of(self.func), tuple(self.params))  # type: ignore[arg-type]
        return "\n".join(lines), kf


_SSA_NAME = re.compile(r"%([\w.$-]+)")


def _allocs_at_first_use(allocs: list[str], body: list[str]) -> list[str]:
    """``body`` with each ``alloc_tile`` line placed right before the top-level statement that first names its
    handle (a top-level op dominates every later one, so all uses stay dominated). ptoas 0.1.1's PlanMemory
    counts a buffer live from its ``alloc_tile`` on: hoisted to the function's head, no two buffers could
    share bytes, and tiles whose lifetimes never meet (the row blocks of an unrolled loop) overflow L0."""
    pending: dict[str, str] = {}
    for line in allocs:
        m = _SSA_NAME.search(line)
        pending[m.group(1) if m else line] = line
    out: list[str] = []
    group: list[str] = []

    def flush() -> None:
        names = {n for line in group for n in _SSA_NAME.findall(line)}
        out.extend(pending.pop(n) for n in list(pending) if n in names)
        out.extend(group)
        group.clear()

    for line in body:
        if line.startswith("    ") and not line.startswith("     ") and not line.startswith("    }"):
            flush()  # a new top-level statement starts
        group.append(line)
    flush()
    return [*pending.values(), *out] if pending else out


_STMTS = {
    SeqStmts: KernelCodegen._seq,
    AssignStmt: KernelCodegen._assign,
    EvalStmt: KernelCodegen._eval,
    ReturnStmt: KernelCodegen._return,
    ForStmt: KernelCodegen._for,
    IfStmt: KernelCodegen._if,
    YieldStmt: KernelCodegen._yield,
    RuntimeScopeStmt: KernelCodegen._scope,
}
