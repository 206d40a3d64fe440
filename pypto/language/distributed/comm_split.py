"""Split a chip kernel at its comm ops: ptoas kernel segments plus built-in comm tasks.

ptoas 0.1.1 has no communication ops, so a ``@pl.jit.incore`` kernel that uses ``pld`` comm ops is
rewritten into an Inline function of its orchestration:

- each maximal run of tile statements becomes a ``with pl.at(level=pl.Level.CORE_GROUP):`` segment
  (outlined into its own ptoas kernel later);
- ``pld.system.notify/wait``, ``pld.tensor.barrier/put/get`` and ``pld.tile.remote_load/remote_store``
  become ``comm.*`` ops of the orchestration, which submits them as built-in comm tasks of the runtime
  (``rt_comm_notify`` & co); ``pld.rank(ctx)`` / ``pld.nranks(ctx)`` become ``rt_comm_rank()`` /
  ``rt_comm_nranks()`` (runtime scalars: one build serves every rank and any rank count);
- a tile crossing a split goes through a GM scratch tensor: ``remote_store(tile, ...)`` stores the tile
  into scratch in the segment before and copies scratch to the peer; ``t = remote_load(...)`` copies
  the peer's slice into scratch and the next segment loads ``t`` from it;
- scalar statements over ranks, loops and ifs made of comm statements, and ``pl.read`` / ``pl.write``
  of tensor cells stay in the orchestration (a read there waits for the tasks writing the tensor).

An ``if`` over rank scalars mixing comm ops and tile statements becomes one ``if`` per run of each
(comm ifs in the orchestration, tile ifs in kernel segments); a constant-trip loop mixing them is
unrolled. Comm ops on a tensor that is not a ``pld.DistributedTensor`` parameter, other loops mixing
tile and comm statements, and the collectives are located UnsupportedFeatureErrors.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.language.distributed import _markers, tile_spill
from pypto.language.distributed._ast_util import (
    Subst,
)
from pypto.language.distributed._ast_util import (
    assign as _assign,
)
from pypto.language.distributed._ast_util import (
    attr as _attr,
)
from pypto.language.distributed._ast_util import (
    call as _call,
)
from pypto.language.distributed._ast_util import (
    name as _name,
)
from pypto.language.distributed._ast_util import (
    resolve as _resolve,
)
from pypto.language.distributed._ast_util import (
    static_int as _static_int,
)
from pypto.language.distributed._ast_util import (
    static_list as _static_list,
)
from pypto.language.distributed._ast_util import (
    values as _list,
)
from pypto.language.distributed._ast_util import (
    zeros as _zeros,
)
from pypto.language.distributed.comm_collectives import COMM, CollectivesMixin, enum_value
from pypto.span import Span

_SPLIT_NAMES = {"pld.system.notify", "pld.system.wait", "pld.tensor.barrier", "pld.tensor.put", "pld.tensor.get",
                "pld.tile.remote_load", "pld.tile.remote_store", "pld.tensor.allreduce", "pld.tensor.broadcast",
                "pld.tensor.allgather", "pld.tensor.reduce_scatter", "pld.tensor.all_to_all"}
_CTX = {"pld.get_comm_ctx", "pld.rank", "pld.nranks"}
_COLLECTIVES = {"pld.system.defer_wait"}
_PARAMS = {  # argument names of each comm op, positional order
    "pld.system.notify": ("signal", "peer", "offsets", "value", "op"),
    "pld.system.wait": ("signal", "offsets", "expected", "cmp"),
    "pld.tensor.barrier": ("signal",),
    "pld.tensor.put": ("dst", "peer", "src", "atomic"),
    "pld.tensor.get": ("dst", "peer", "src", "atomic"),
    "pld.tile.remote_load": ("src", "peer", "offsets", "shape"),
    "pld.tile.remote_store": ("tile", "dst", "peer", "offsets"),
    "pld.tensor.allreduce": ("data", "signal", "op", "mode", "core_num"),
    "pld.tensor.broadcast": ("data", "signal", "root"),
    "pld.tensor.allgather": ("stage", "data", "signal"),
    "pld.tensor.reduce_scatter": ("data", "signal", "op"),
    "pld.tensor.all_to_all": ("stage", "data", "signal"),
}


def _pl_range() -> Any:
    from pypto.language.dsl import range as pl_range

    return pl_range


_PL_RANGE = _pl_range()


def uses_comm(fdef: ast.FunctionDef, env: dict[str, Any]) -> bool:
    """Whether the kernel calls any ``pld`` kernel construct (and so must be split)."""
    return any(isinstance(n, ast.Call) and _construct_name(n.func, env) in _SPLIT_NAMES | _CTX | _COLLECTIVES
               for n in ast.walk(fdef))


def _construct_name(node: ast.expr, env: dict[str, Any]) -> str | None:
    obj = _resolve(node, env)
    return obj.name if isinstance(obj, _markers.Construct) else None


class CommSplit(CollectivesMixin):
    """Rewrite one kernel (see the module docstring); ``span_of(node)`` locates errors in the original."""

    def __init__(self, fdef: ast.FunctionDef, env: dict[str, Any], span_of: Any) -> None:
        self.fdef = fdef
        self.env = env
        self.span_of = span_of
        self.windows: dict[str, tuple[list[int], DataType]] = {}
        self.tensors: dict[str, tuple[list[int], DataType]] = {}
        self.orch_scalars: set[str] = set()
        self.ctx_names: set[str] = set()
        self.scratch: list[tuple[str, list[Any], DataType]] = []
        self.tile_shapes: dict[str, ast.expr] = {}
        self.tile_types: dict[str, tuple[list[int], DataType]] = {}  # what tile_spill can spill
        self.stored: set[str] = set()  # names bound to pl.store results (tensors)
        self.pending_loads: list[ast.stmt] = []
        self.segment_tail: list[ast.stmt] = []  # statements the open segment must end with (a tile to scratch)
        self._read_params()

    def _err(self, msg: str, node: ast.AST, hint: str | None = None) -> UnsupportedFeatureError:
        span: Span = self.span_of(node)
        return UnsupportedFeatureError(msg, span, hint)

    def _read_params(self) -> None:
        from pypto.language.distributed import DistributedTensor

        for arg in self.fdef.args.args:
            ann = arg.annotation
            if isinstance(ann, ast.Subscript) and _resolve(ann.value, self.env) is not None \
                    and getattr(_resolve(ann.value, self.env), "kind", "") in ("Out", "InOut"):
                ann = ann.slice
            if not isinstance(ann, ast.Subscript):
                continue
            ctor = _resolve(ann.value, self.env)
            if getattr(ctor, "kind", "") == "Scalar":  # a scalar parameter is known to the orchestration
                self.orch_scalars.add(arg.arg)
                continue
            try:
                shape, dtype = eval(compile(ast.Expression(ann.slice), "<annotation>", "eval"), self.env)  # noqa: S307
            except Exception:  # noqa: BLE001 - a bare or dynamic annotation: no static facts
                continue
            facts = (list(shape), dtype)
            (self.windows if ctor is DistributedTensor else self.tensors)[arg.arg] = facts
            if ctor is DistributedTensor:
                self.tensors[arg.arg] = facts

    # -- the rewrite ---------------------------------------------------------------------------------
    def body(self) -> list[ast.stmt]:
        stmts = [s for s in self.fdef.body if not _is_doc(s)]
        out = self._block(stmts)
        tensors = set(self.tensors) | self.stored | {name for name, _, _ in self.scratch}
        tile_spill.spill(out, self.tile_types, tensors, self._scratch, self.span_of)
        creates = [_assign(name, _call(_attr("pl", "tensor", "create"), [_list(shape)],
                                       [ast.keyword("dtype", _attr("pl", dt.value))]))
                   for name, shape, dt in self.scratch]
        return [_RankCalls(self.env).visit(x) for x in creates + out]

    def _block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        segment: list[ast.stmt] = []
        work = list(stmts)
        while work:
            s = work.pop(0)
            unrolled = self._unrolled(s)
            if unrolled is not None:  # a constant-trip loop mixing tile code and comm ops: one copy per step
                work[:0] = unrolled
                continue
            if isinstance(s, ast.Return) and isinstance(s.value, ast.Call) \
                    and not self._is_orch_quiet(ast.Expr(s.value)):  # return pl.store(tile, ...): store, return
                target = s.value.args[2] if len(s.value.args) > 2 and isinstance(s.value.args[2], ast.Name) \
                    else _name("__ret")
                work[:0] = [_assign(target.id, s.value), ast.Return(value=_name(target.id))]
                continue
            pieces = self._split_if(s)
            if pieces is not None:  # an if mixing them: one if per run of comm or tile statements
                work[:0] = pieces
                continue
            if self._is_orch(s) and self._is_pure_scalar(s):  # no tile data: hoisted above the open segment
                out.extend(self._orch(s))
            elif self._is_orch(s):
                orch = self._orch(s)
                segment.extend(self.segment_tail)
                self.segment_tail = []
                self._flush(segment, out)
                out.extend(orch)
            else:
                segment.extend(self.pending_loads)
                self.pending_loads = []
                self._note_tile(s)
                segment.append(s)
        self._flush(segment, out)
        return out

    def _unrolled(self, s: ast.stmt) -> list[ast.stmt] | None:
        """The steps of a ``for i in pl.range(<constant>)`` loop that mixes tile statements and comm ops,
        each with ``i`` replaced by its value; None for any other statement."""
        if not (isinstance(s, ast.For) and isinstance(s.target, ast.Name) and isinstance(s.iter, ast.Call)
                and not s.orelse and any(self._mentions_comm(x) for x in s.body)
                and not all(self._is_orch_quiet(x) for x in s.body)):
            return None
        if _resolve(s.iter.func, self.env) not in (_PL_RANGE, range):
            raise self._err("a loop mixing tile statements with comm ops must iterate over pl.range", s.iter)
        bounds = [_static_int(a, self.env) for a in s.iter.args]
        if not bounds or None in bounds or len(bounds) > 3 or s.iter.keywords:
            raise self._err("a loop mixing tile statements with comm ops needs a constant trip count to be split "
                            "(it is unrolled)", s, "give pl.range constant bounds, or keep comm ops and tile code "
                            "in separate loops")
        steps: list[ast.stmt] = []
        for i in range(*bounds):
            steps.extend(Subst(s.target.id, i).visit(copy.deepcopy(x)) for x in s.body)
        return steps

    def _split_if(self, s: ast.stmt) -> list[ast.stmt] | None:
        """``if c: <comm> <tile> ...`` (no else, ``c`` a scalar of ranks and constants that the body does not
        assign) as ``if c: <comm>`` then ``if c: <tile>`` ...: the comm ifs stay in the orchestration,
        the tile ifs go into kernel segments. None for any other statement."""
        if not (isinstance(s, ast.If) and not s.orelse and self._is_scalar(s.test)
                and any(self._mentions_comm(x) for x in s.body)
                and not all(self._is_orch_quiet(x) for x in s.body)):
            return None
        assigned = {n.id for x in s.body for n in ast.walk(x) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Store)}
        if any(isinstance(n, ast.Name) and n.id in assigned for n in ast.walk(s.test)):
            return None
        runs: list[tuple[bool, list[ast.stmt]]] = []
        for x in s.body:
            kind = self._is_orch_quiet(x)
            if runs and runs[-1][0] == kind:
                runs[-1][1].append(x)
            else:
                runs.append((kind, [x]))
        if any(not kind and any(self._mentions_comm(x) for x in body) for kind, body in runs):
            return None
        return [ast.If(test=copy.deepcopy(s.test), body=body, orelse=[]) for _, body in runs]

    def _is_orch_quiet(self, s: ast.stmt) -> bool:
        try:
            return self._is_orch(s)
        except UnsupportedFeatureError:
            return False

    def _flush(self, segment: list[ast.stmt], out: list[ast.stmt]) -> None:
        if segment:
            scope = _call(_attr("pl", "at"), [], [ast.keyword("level", _attr("pl", "Level", "CORE_GROUP"))])
            out.append(ast.With(items=[ast.withitem(scope)], body=list(segment)))
            segment.clear()

    def _note_tile(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and isinstance(s.value, ast.Call) and len(s.value.args) >= 3:
            self.tile_shapes[s.targets[0].id] = s.value.args[2]
        tile_spill.infer(s, self.env, self.tensors, self.tile_types, self.stored)
        for node in ast.walk(s):
            if isinstance(node, ast.Call) and _construct_name(node.func, self.env):
                raise self._err(f"{_construct_name(node.func, self.env)} is not supported inside a tile "
                                "expression", node, "call it as a statement of its own")

    # -- classification ----------------------------------------------------------------------------
    def _is_orch(self, s: ast.stmt) -> bool:
        if isinstance(s, ast.Return | ast.Pass):
            return True
        if isinstance(s, ast.For | ast.If):
            inner = s.body + s.orelse
            kinds = {self._is_orch(x) for x in inner}
            if kinds == {True}:
                return True
            if any(self._mentions_comm(x) for x in inner):
                raise self._err("a loop or if mixing tile statements with comm ops cannot be split", s,
                                "keep comm ops and tile code in separate loops")
            return False
        value = s.value if isinstance(s, ast.Assign | ast.Expr | ast.AnnAssign) else None
        if isinstance(value, ast.Call):
            name = _construct_name(value.func, self.env)
            if name is not None:
                return True
            if self._is_cell_access(value):
                return True
        return isinstance(s, ast.Assign) and self._is_scalar(s.value)

    def _is_pure_scalar(self, s: ast.stmt) -> bool:
        """A rank scalar (``r = pld.rank(ctx)``, ``peer = (r + 1) % n``) or the comm context itself."""
        if not isinstance(s, ast.Assign):
            return False
        if isinstance(s.value, ast.Call):
            return _construct_name(s.value.func, self.env) in _CTX
        return self._is_scalar(s.value)

    def _mentions_comm(self, s: ast.stmt) -> bool:
        return any(isinstance(n, ast.Call) and _construct_name(n.func, self.env) for n in ast.walk(s))

    def _is_cell_access(self, call: ast.Call) -> bool:
        """``pl.read(t, idx)`` / ``pl.write(t, idx, v)`` on a tensor parameter (not a tile)."""
        fn = _resolve(call.func, self.env)
        op = getattr(fn, "op", None) or getattr(fn, "name", None)
        if op not in ("tile.read", "tile.write", "tensor.read", "tensor.write", "read", "write"):
            return False
        return bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id in self.tensors

    def _is_scalar(self, e: ast.expr) -> bool:
        if isinstance(e, ast.Call) and _construct_name(e.func, self.env) in ("pld.rank", "pld.nranks"):
            return True
        if isinstance(e, ast.BinOp | ast.UnaryOp | ast.Compare | ast.BoolOp):
            return all(self._is_scalar(c) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr))
        for n in ast.walk(e):
            if isinstance(n, ast.Call | ast.Subscript | ast.Attribute | ast.List):
                return False
            if isinstance(n, ast.Name) and n.id not in self.orch_scalars and not isinstance(self.env.get(n.id), int):
                return False
        return True

    # -- orchestration statements ------------------------------------------------------------------
    def _orch(self, s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, ast.For):
            if isinstance(s.target, ast.Name):
                self.orch_scalars.add(s.target.id)
            return [ast.For(target=s.target, iter=s.iter, body=self._orch_list(s.body), orelse=[])]
        if isinstance(s, ast.If):
            return [ast.If(test=s.test, body=self._orch_list(s.body), orelse=self._orch_list(s.orelse))]
        if isinstance(s, ast.Return | ast.Pass):
            return [s]
        value = s.value
        target = s.targets[0] if isinstance(s, ast.Assign) else getattr(s, "target", None)
        if isinstance(value, ast.Call) and (name := _construct_name(value.func, self.env)) is not None:
            return self._construct(name, value, target)
        if isinstance(target, ast.Name) and isinstance(s, ast.Assign) and self._is_scalar(value):
            self.orch_scalars.add(target.id)
        if isinstance(target, ast.Name) and isinstance(value, ast.Call) and self._is_cell_access(value):
            self.orch_scalars.add(target.id)
        return [s]

    def _orch_list(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        return [x for s in stmts for x in self._orch(s)] or [ast.Pass()]

    def _args(self, name: str, call: ast.Call) -> dict[str, ast.expr]:
        params = _PARAMS[name]
        if len(call.args) > len(params):
            raise self._err(f"{name} takes at most {len(params)} positional arguments", call)
        got = dict(zip(params, call.args, strict=False))
        for kw in call.keywords:
            if kw.arg not in params:
                raise self._err(f"{name} has no parameter '{kw.arg}'", kw, f"parameters: {', '.join(params)}")
            got[kw.arg] = kw.value
        return got

    def _window(self, name: str, node: ast.expr | None, call: ast.Call, what: str) -> str:
        if not isinstance(node, ast.Name) or node.id not in self.windows:
            shown = ast.unparse(node) if node is not None else "nothing"
            raise self._err(f"{name}: {what} '{shown}' is not a pld.DistributedTensor parameter (a window); "
                            "only window memory is visible to other ranks", node or call,
                            "annotate the parameter as pld.DistributedTensor[[...], dtype] and pass a pld.window")
        return node.id

    def _construct(self, name: str, call: ast.Call, target: ast.expr | None) -> list[ast.stmt]:
        if name in _COLLECTIVES:
            raise self._err(f"{name} is not supported by this pypto (no built-in comm task for it)", call,
                            "compose it from pld.system.notify/wait and pld.tile.remote_load/remote_store")
        if name == "pld.get_comm_ctx":
            if not call.args:
                raise self._err("pld.get_comm_ctx takes a pld.DistributedTensor", call)
            self._window(name, call.args[0], call, "argument")
            if isinstance(target, ast.Name):
                self.ctx_names.add(target.id)
            return []
        if name in ("pld.rank", "pld.nranks"):
            if isinstance(target, ast.Name):
                self.orch_scalars.add(target.id)
            value = _call(_attr(COMM, name.split(".")[1]), [], [])
            return [_assign(target.id, value)] if isinstance(target, ast.Name) else []
        return getattr(self, "_" + name.rsplit(".", 1)[1])(name, self._args(name, call), call, target)

    def _notify(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        sig = self._window(name, a.get("signal"), call, "signal")
        op = enum_value(a.get("op"), self.env, 1)
        args = [_name(sig), a["peer"], a["offsets"], a.get("value", ast.Constant(1))]
        return [ast.Expr(_call(_attr(COMM, "notify"), args, [ast.keyword("op", ast.Constant(op))]))]

    def _wait(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        sig = self._window(name, a.get("signal"), call, "signal")
        cmp = enum_value(a.get("cmp"), self.env, 1)
        args = [_name(sig), a["offsets"], a.get("expected", ast.Constant(1))]
        return [ast.Expr(_call(_attr(COMM, "wait"), args, [ast.keyword("cmp", ast.Constant(cmp))]))]

    def _barrier(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        sig = self._window(name, a.get("signal"), call, "signal")
        return [ast.Expr(_call(_attr(COMM, "barrier"), [_name(sig)], []))]

    def _put(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        dst = self._window(name, a.get("dst"), call, "dst")
        return [self._copy(_name(dst), a["peer"], a["src"], ast.Constant(-1), a, call)]

    def _get(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        src = self._window(name, a.get("src"), call, "src")
        return [self._copy(a["dst"], ast.Constant(-1), _name(src), a["peer"], a, call)]

    def _copy(self, dst: ast.expr, dst_rank: ast.expr, src: ast.expr, src_rank: ast.expr, a: dict[str, ast.expr],
              call: ast.Call) -> ast.stmt:
        atomic = enum_value(a.get("atomic"), self.env, 0)
        return ast.Expr(_call(_attr(COMM, "copy"), [dst, dst_rank, src, src_rank],
                              [ast.keyword("atomic", ast.Constant(atomic))]))

    def _remote_load(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        src = self._window(name, a.get("src"), call, "src")
        if not isinstance(target, ast.Name):
            raise self._err("assign the result of pld.tile.remote_load to a name", call)
        shape, dt = self.windows[src]
        shape_node = a.get("shape", _list(shape))
        scratch = self._scratch(_static_list(shape_node, self.env, shape), dt)
        view = _call(_attr("pl", "tensor", "slice"), [_name(src), shape_node, a.get("offsets", _zeros(len(shape)))], [])
        zeros = _zeros(len(shape))
        self.pending_loads.append(_assign(target.id, _call(_attr("pl", "load"), [_name(scratch), zeros, shape_node], [])))
        self.tile_types[target.id] = (_static_list(shape_node, self.env, shape), dt)
        return [self._copy(_name(scratch), ast.Constant(-1), view, a["peer"], {}, call)]

    def _remote_store(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        dst = self._window(name, a.get("dst"), call, "dst")
        tile = a.get("tile")
        if not isinstance(tile, ast.Name):
            raise self._err("pld.tile.remote_store stores a tile variable", call)
        shape, dt = self.windows[dst]
        shape_node = self.tile_shapes.get(tile.id, _list(shape))
        scratch = self._scratch(_static_list(shape_node, self.env, shape), dt)
        zeros = _zeros(len(shape))
        self.segment_tail.append(_assign(scratch, _call(_attr("pl", "store"), [_name(tile.id), zeros, _name(scratch)],
                                                        [])))
        view = _call(_attr("pl", "tensor", "slice"), [_name(dst), shape_node, a.get("offsets", zeros)], [])
        return [self._copy(view, a["peer"], _name(scratch), ast.Constant(-1), {}, call)]

    def _scratch(self, shape: list[Any], dt: DataType) -> str:
        name = f"__comm_scratch_{len(self.scratch)}"
        self.scratch.append((name, shape, dt))
        return name


class _RankCalls(ast.NodeTransformer):
    """``pld.rank(ctx)`` / ``pld.nranks(ctx)`` inside an expression -> ``__comm__.rank()`` / ``nranks()``."""

    def __init__(self, env: dict[str, Any]) -> None:
        self.env = env

    def visit_Call(self, node: ast.Call) -> ast.expr:
        name = _construct_name(node.func, self.env)
        if name in ("pld.rank", "pld.nranks"):
            return _call(_attr(COMM, name.split(".")[1]), [], [])
        return self.generic_visit(node)


def _is_doc(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)


def split_text(fdef: ast.FunctionDef, env: dict[str, Any], span_of: Any) -> str:
    """The kernel's body after the split, as source text indented for the original ``def``."""
    body = CommSplit(fdef, env, span_of).body()
    mod = ast.Module(body=body, type_ignores=[])
    text = ast.unparse(ast.fix_missing_locations(mod))
    return "\n".join("    " + line if line else line for line in text.splitlines()) + "\n"
