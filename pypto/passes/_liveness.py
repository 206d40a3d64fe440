"""Branch-aware tile liveness over structured control flow (for buffer-sharing decisions).

Statements get increasing positions in program order; each position also records its branch path
(the ``if`` statements and arms it sits in), so a value used only in the ``else`` arm is not live
in the ``then`` arm. Loop headers and ends get positions of their own: iter args are defined at
the header (their init is used there), return vars at the end, and a value defined before a loop
and used inside it is used again at the loop end (it must survive every iteration).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count

from pypto.ir.expr import Call, Var
from pypto.ir.ops.registry import lookup
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt
from pypto.ir.types import TileType
from pypto.passes._util import used_vars

Path = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Point:
    """A program point: linear position plus the (if id, arm) pairs it is nested in."""

    pos: int
    path: Path

    def exclusive(self, other: Point) -> bool:
        """True when the two points sit in different arms of one ``if`` (never both executed)."""
        arms = dict(self.path)
        return any(i in arms and arms[i] != arm for i, arm in other.path)


@dataclass
class Liveness:
    """Definition point, use points and defining op of every tile variable."""

    defs: dict[Var, Point] = field(default_factory=dict)
    uses: dict[Var, list[Point]] = field(default_factory=dict)
    ops: dict[Var, str] = field(default_factory=dict)
    _pos: int = 0
    _ifs: count = field(default_factory=count)

    def _next(self, path: Path) -> Point:
        self._pos += 1
        return Point(self._pos, path)

    def _use(self, v: Var, at: Point) -> None:
        if isinstance(v.var_type, TileType):
            self.uses.setdefault(v, []).append(at)

    def _uses_in(self, node: object, at: Point) -> None:
        for v in used_vars(node):
            self._use(v, at)

    def _def(self, v: Var, at: Point, op: str = "") -> None:
        if isinstance(v.var_type, TileType):
            self.defs[v] = at
            if op:
                self.ops[v] = op

    def walk(self, stmt: Stmt | None, path: Path = ()) -> None:
        if stmt is None:
            return
        if isinstance(stmt, SeqStmts):
            for s in stmt.stmts:
                self.walk(s, path)
        elif isinstance(stmt, (ForStmt, WhileStmt)):
            self._loop(stmt, path)
        elif isinstance(stmt, IfStmt):
            head = self._next(path)
            self._uses_in(stmt.cond, head)
            k = next(self._ifs)
            self.walk(stmt.then_body, (*path, (k, 0)))
            self.walk(stmt.else_body, (*path, (k, 1)))
            end = self._next(path)
            for v in stmt.return_vars:
                self._def(v, end)
        elif isinstance(stmt, ScopeStmt):
            self.walk(stmt.body, path)
        else:
            at = self._next(path)
            self._uses_in(stmt.value if isinstance(stmt, AssignStmt) else stmt, at)
            if isinstance(stmt, AssignStmt):
                op = stmt.value.op if isinstance(stmt.value, Call) and isinstance(stmt.value.op, str) else ""
                self._def(stmt.var, at, op)

    def _loop(self, stmt: ForStmt | WhileStmt, path: Path) -> None:
        head = self._next(path)
        for ia, init in zip(stmt.iter_args, stmt.inits, strict=True):
            if isinstance(init, Var):
                self._use(init, head)
            self._def(ia, head)
        outer = {v for v, p in self.defs.items() if p.pos < head.pos}
        self.walk(stmt.body, path)
        if isinstance(stmt, WhileStmt):
            self._uses_in(stmt.cond, head)
        end = self._next(path)
        for v in used_vars(stmt.body):
            if v in outer:
                self._use(v, end)
        for v in stmt.return_vars:
            self._def(v, end)

    # ------------------------------------------------------------------ queries
    def live_after(self, v: Var, at: Point) -> bool:
        """Is ``v`` still needed after ``at`` (a use later on a path through ``at``)?"""
        return any(q.pos > at.pos and not q.exclusive(at) for q in self.uses.get(v, ()))

    def interfere(self, a: Var, b: Var) -> bool:
        """Can ``a`` and ``b`` not share one buffer (one is needed while the other is written)?"""
        da, db = self.defs.get(a), self.defs.get(b)
        if da is None or db is None or a is b:
            return False
        first, second, d2 = (a, b, db) if da.pos <= db.pos else (b, a, da)
        if da.pos == db.pos:
            return self.live_after(a, db) or self.live_after(b, da)
        if self.live_after(first, d2):
            return True
        op = lookup(self.ops.get(second))
        consumed = any(q.pos == d2.pos for q in self.uses.get(first, ()))  # used by the op defining ``second``
        return consumed and op is not None and not op.in_place
