"""The collectives of ``pld.tensor`` as compositions of built-in comm tasks (mixed into CommSplit).

Each takes an explicit barrier signal window (one INT32 cell per rank) and follows the mesh forms:
``allreduce`` / ``reduce_scatter`` combine every peer's data into a local accumulator with an atomic
COPY (ADD / MAX / MIN / MUL for Sum / Max / Min / Prod) between two barriers; ``broadcast`` copies the
root's data between two barriers; ``allgather`` / ``all_to_all`` push rows to every peer, then a barrier.
"""

from __future__ import annotations

import ast
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.language.distributed._ast_util import assign as _assign
from pypto.language.distributed._ast_util import attr as _attr
from pypto.language.distributed._ast_util import call as _call
from pypto.language.distributed._ast_util import name as _name
from pypto.language.distributed._ast_util import resolve
from pypto.language.distributed._ast_util import values as _list

COMM = "__comm__"


def enum_value(node: ast.expr | None, env: dict[str, Any], default: int) -> int:
    if node is None:
        return default
    value = resolve(node, env) if not isinstance(node, ast.Constant) else node.value
    return int(value) if value is not None else default




class CollectivesMixin:
    """Needs ``windows``, ``env``, ``orch_scalars`` and the ``_err/_window/_barrier/_copy/_scratch`` of CommSplit."""

    windows: dict[str, tuple[list[Any], DataType]]
    env: dict[str, Any]
    orch_scalars: set[str]

    # -- collectives, composed of barriers and copies (the mesh forms) ------------------------------
    def _ranks(self) -> list[ast.stmt]:
        """``__comm_me`` / ``__comm_n``: this rank and the rank count, for the composed collectives."""
        self.orch_scalars.update({"__comm_me", "__comm_n"})
        return [_assign("__comm_me", _call(_attr(COMM, "rank"), [], [])),
                _assign("__comm_n", _call(_attr(COMM, "nranks"), [], []))]

    def _each_peer(self, body: ast.stmt) -> ast.For:
        """``for __comm_p in pl.range(__comm_n): if __comm_p != __comm_me: body``."""
        test = ast.Compare(_name("__comm_p"), [ast.NotEq()], [_name("__comm_me")])
        return ast.For(target=ast.Name("__comm_p", ast.Store()),
                       iter=_call(_attr("pl", "range"), [_name("__comm_n")], []),
                       body=[ast.If(test=test, body=[body], orelse=[])], orelse=[])

    def _allreduce(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        data = self._window(name, a.get("data"), call, "data")
        sig = self._window(name, a.get("signal"), call, "signal")
        mode = a.get("mode")
        if mode is not None and getattr(mode, "value", "mesh") != "mesh":
            raise self._err(f"{name}: only mode='mesh' is supported (an atomic combine from every peer)", call)
        shape, dt = self.windows[data]
        return self._reduce_into(name, call, _name(data), shape, dt, sig, self._combine(name, a, call))

    def _combine(self, name: str, a: dict[str, ast.expr], call: ast.Call) -> int:
        """The COPY combine (CommAtomic) of a ReduceOp: Sum ADD, Max MAX, Min MIN, Prod MUL."""
        op = enum_value(a.get("op"), self.env, 0)
        if op not in (0, 1, 2, 3):
            raise self._err(f"{name}: unknown op {op}", call, "use pld.ReduceOp.Sum/Max/Min/Prod")
        return op + 1

    def _reduce_into(self, name: str, call: ast.Call, view: ast.expr, shape: list[Any], dt: DataType, sig: str,
                     combine: int) -> list[ast.stmt]:
        """view <- combine over every rank's view, between two barriers (through a local accumulator)."""
        acc = self._scratch(shape, dt)
        zero = ast.Constant(-1)
        fold = ast.Expr(_call(_attr(COMM, "copy"), [_name(acc), zero, view, _name("__comm_p")],
                              [ast.keyword("atomic", ast.Constant(combine))]))
        return [*self._ranks(), self._barrier(name, {"signal": _name(sig)}, call, None)[0],
                self._copy(_name(acc), zero, view, zero, {}, call), self._each_peer(fold),
                self._barrier(name, {"signal": _name(sig)}, call, None)[0],
                self._copy(view, zero, _name(acc), zero, {}, call)]

    def _row(self, data: str, name: str, call: ast.Call, index: ast.expr) -> tuple[ast.expr, list[Any]]:
        """``data[index]`` as a one-row view, and its static shape."""
        shape = self.windows[data][0]
        row = [1] + [int(d) for d in shape[1:]] if all(isinstance(d, int) for d in shape[1:]) else None
        if row is None:
            raise self._err(f"{name}: the rows of '{data}' need a static shape", call)
        offsets = ast.List([index] + [ast.Constant(0)] * (len(row) - 1), ast.Load())
        return _call(_attr("pl", "tensor", "slice"), [_name(data), _list(row), offsets], []), row

    def _reduce_scatter(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        data = self._window(name, a.get("data"), call, "data")
        sig = self._window(name, a.get("signal"), call, "signal")
        view, row = self._row(data, name, call, _name("__comm_me"))
        return self._reduce_into(name, call, view, row, self.windows[data][1], sig, self._combine(name, a, call))

    def _all_to_all(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        stage = self._window(name, a.get("stage"), call, "stage")
        data = self._window(name, a.get("data"), call, "data")
        sig = self._window(name, a.get("signal"), call, "signal")
        if stage == data:
            raise self._err(f"{name}: stage and data must be different window buffers", call)
        mine, _ = self._row(data, name, call, _name("__comm_me"))
        theirs, _ = self._row(stage, name, call, _name("__comm_p"))
        push = ast.Expr(_call(_attr(COMM, "copy"), [mine, _name("__comm_p"), theirs, ast.Constant(-1)],
                              [ast.keyword("atomic", ast.Constant(0))]))
        every = ast.For(target=ast.Name("__comm_p", ast.Store()),
                        iter=_call(_attr("pl", "range"), [_name("__comm_n")], []), body=[push], orelse=[])
        return [*self._ranks(), self._barrier(name, {"signal": _name(sig)}, call, None)[0], every,
                self._barrier(name, {"signal": _name(sig)}, call, None)[0]]

    def _broadcast(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        data = self._window(name, a.get("data"), call, "data")
        sig = self._window(name, a.get("signal"), call, "signal")
        root = a.get("root", ast.Constant(0))
        fetch = self._copy(_name(data), ast.Constant(-1), _name(data), root, {}, call)
        not_root = ast.Compare(_name("__comm_me"), [ast.NotEq()], [root])
        return [*self._ranks(), self._barrier(name, {"signal": _name(sig)}, call, None)[0],
                ast.If(test=not_root, body=[fetch], orelse=[]),
                self._barrier(name, {"signal": _name(sig)}, call, None)[0]]

    def _allgather(self, name: str, a: dict[str, ast.expr], call: ast.Call, target: Any) -> list[ast.stmt]:
        stage = self._window(name, a.get("stage"), call, "stage")
        data = self._window(name, a.get("data"), call, "data")
        sig = self._window(name, a.get("signal"), call, "signal")
        if stage == data:
            raise self._err(f"{name}: stage and data must be different window buffers", call)
        row = self.windows[stage][0]
        offsets = ast.List([_name("__comm_me")] + [ast.Constant(0)] * (len(row) - 1), ast.Load())
        view = _call(_attr("pl", "tensor", "slice"), [_name(data), _list(row), offsets], [])
        push = ast.Expr(_call(_attr(COMM, "copy"), [view, _name("__comm_p"), _name(stage), ast.Constant(-1)],
                              [ast.keyword("atomic", ast.Constant(0))]))
        mine = self._copy(view, ast.Constant(-1), _name(stage), ast.Constant(-1), {}, call)
        return [*self._ranks(), mine, self._each_peer(push), self._barrier(name, {"signal": _name(sig)}, call, None)[0]]

