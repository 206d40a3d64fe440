"""A kernel's ``pl.array`` becomes one scalar per element (ptoas 0.1.1 has no ``!pto.local_array``).

Arrays are values (``arr[i] = v`` rebinds ``arr`` to ``array.update_element(arr, i, v)``). In an InCore
function whose array indices are all constants, each array value is a tuple of scalar expressions:
``array.create`` gives zeros (0.1.1 has no uninitialised scalars), ``update_element`` binds the new value
to a scalar ``<arr>_<i>`` and replaces element ``i``, ``get_element`` is the element's scalar. An
``if``/``else`` that yields an array yields the elements that differ between its branches (one scalar
result each); the others are the same scalar on both sides. What remains is scalar arithmetic, which the
read passes move to the orchestration where it feeds on tensor reads (this is the first step of
GatherCarriedReads, before them).

An index that is not a constant after Simplify, an array carried by a loop, or an array passed anywhere
but to the array ops is a located error: a ptoas with ``!pto.local_array`` (upstream's pinned v0.57)
would take them.
"""

from __future__ import annotations

import dataclasses
from typing import cast

from pypto.errors import UnsupportedFeatureError
from pypto.ir.expr import Call, ConstFloat, ConstInt, Expr, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, Stmt, WhileStmt, YieldStmt, flatten, seq
from pypto.ir.types import ArrayType, ScalarType
from pypto.ir.visitor import IRMutator
from pypto.passes._rewrite import assign_of, match
from pypto.passes._util import NameGen, base_name, iter_stmts

_HINT = ("index the array with constants (a Python int or a loop of pl.unroll), or keep the values in "
         "pl.Scalar variables / pass them to the kernel as pl.Scalar arguments")


def _refuse(what: str, node: Stmt | Expr) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(
        f"{what} in a kernel: ptoas 0.1.1 has no !pto.local_array (ptoas v0.57, upstream's pinned release, has), "
        "and pypto keeps a kernel's pl.array as one scalar per element only while every index is a constant "
        "and the array is not carried by a loop", node.span, hint=_HINT)


class _Elements(IRMutator):
    """Replaces ``array.get_element(arr, k)`` by the element's scalar; refuses other uses of an array."""

    def __init__(self, env: dict[Var, tuple[Expr, ...]]) -> None:
        self.env = env
        self.alias: dict[Var, Expr] = {}  # a scalar bound to an element or a copy: its value

    def slot(self, call: Call) -> tuple[tuple[Expr, ...], int]:
        """The elements of the array ``call`` (a get or an update) addresses, and its constant index."""
        arr, k = call.args[0], as_int(call.args[1])
        elems = self.env.get(arr) if isinstance(arr, Var) else None
        if elems is None:
            raise _refuse("pl.array value of unknown origin", call)
        if k is None:
            raise _refuse("pl.array element at a run-time index", call)
        if not 0 <= k < len(elems):
            raise UnsupportedFeatureError(f"pl.array index {k} is outside the array's {len(elems)} elements",
                                          call.span, hint=f"use an index in [0, {len(elems)})")
        return elems, k

    def element(self, call: Call) -> Expr:
        elems, k = self.slot(call)
        return elems[k]

    def visit_Call(self, call: Call) -> Expr:  # noqa: N802
        if call.op == "array.get_element":
            return self.element(call)
        return self.generic_visit(call)

    def visit_Var(self, var: Var) -> Expr:  # noqa: N802
        if isinstance(var.var_type, ArrayType):
            raise _refuse(f"pl.array '{base_name(var.name)}' used as a value", var)
        return self.alias.get(var, var)


class _Scalarize:
    def __init__(self) -> None:
        self.env: dict[Var, tuple[Expr, ...]] = {}
        self.exprs = _Elements(self.env)
        self.names = NameGen("elem")

    def scalar(self, arr: Var, k: int) -> Var:
        """A fresh scalar for element ``k`` of array ``arr`` (``<arr>_<k>__elem_v<n>``)."""
        t = arr.var_type
        assert isinstance(t, ArrayType)
        return Var(self.names(f"{base_name(arr.name)}_{k}"), ScalarType(t.dtype), span=arr.span)

    def block(self, body: Stmt) -> Stmt:
        return seq([out for s in flatten(body) for out in self.stmt(s)], span=body.span)

    def stmt(self, s: Stmt) -> list[Stmt]:
        if isinstance(s, AssignStmt) and isinstance(s.var.var_type, ArrayType):
            return self.array(s)
        if (got := assign_of(s, "array.get_element")) is not None:
            self.exprs.alias[got[0]] = self.exprs.element(got[1])  # t = arr[k]: uses of t read the element
            return []
        if isinstance(s, IfStmt):
            return [self.branch(s)]
        if isinstance(s, YieldStmt):  # an array it yields is expanded by the enclosing if (branch)
            return [dataclasses.replace(s, values=tuple(v if isinstance(v.type, ArrayType) else self.exprs.visit(v)
                                                        for v in s.values))]
        if isinstance(s, ForStmt | WhileStmt):
            if any(isinstance(ia.var_type, ArrayType) for ia in s.iter_args):
                raise _refuse("pl.array carried by a loop", s)
            loop = self.exprs.visit(dataclasses.replace(s, body=seq([], span=s.span)))
            return [dataclasses.replace(loop, body=self.block(s.body))]
        return [self.exprs.visit(s)]

    def array(self, s: AssignStmt) -> list[Stmt]:
        v, t = s.value, s.var.var_type
        assert isinstance(t, ArrayType)
        if isinstance(v, Var) and v in self.env:
            self.env[s.var] = self.env[v]
            return []
        if match(v, "array.create") is not None:
            zero = ConstFloat(0.0, t.dtype, span=s.span) if t.dtype.is_float else ConstInt(0, t.dtype, span=s.span)
            self.env[s.var] = (zero,) * t.extent
            return []
        store = match(v, "array.update_element")
        if store is None:
            raise _refuse("pl.array produced by an operation other than pl.array.create or an element store", s)
        old, k = self.exprs.slot(store)
        elems, value = list(old), self.exprs.visit(store.args[2])
        if isinstance(value, Var | ConstInt | ConstFloat):  # a name or a constant: the element is it
            elems[k] = value
            self.env[s.var] = tuple(elems)
            return []
        elems[k] = scalar = self.scalar(s.var, k)
        self.env[s.var] = tuple(elems)
        return [AssignStmt(scalar, value, span=s.span)]

    def branch(self, s: IfStmt) -> IfStmt:
        then = self.block(s.then_body)
        other = self.block(s.else_body) if s.else_body is not None else None
        arrays = [i for i, rv in enumerate(s.return_vars) if isinstance(rv.var_type, ArrayType)]
        if not arrays:
            return dataclasses.replace(s, cond=self.exprs.visit(s.cond), then_body=then, else_body=other)
        yields = [_last_yield(b) for b in (s.then_body, s.else_body) if b is not None]
        if len(yields) != 2:
            raise _refuse("pl.array yielded by an if without else", s)
        keep: list[Var] = []
        picks: list[list[Expr]] = [[], []]
        for i, rv in enumerate(s.return_vars):
            if i not in arrays:
                keep.append(rv)
                for side, y in enumerate(yields):
                    picks[side].append(self.exprs.visit(y.values[i]))
                continue
            sides = [self.env[cast(Var, y.values[i])] for y in yields]  # an array is yielded by name
            elems: list[Expr] = []
            for k, (a, b) in enumerate(zip(*sides, strict=True)):
                if a is b or (as_int(a) is not None and as_int(a) == as_int(b)):
                    elems.append(a)
                    continue
                phi = self.scalar(rv, k)
                keep.append(phi)
                picks[0].append(a)
                picks[1].append(b)
                elems.append(phi)
            self.env[rv] = tuple(elems)
        bodies = [_with_yield(b, tuple(p)) for b, p in zip((then, other), picks, strict=True)]
        return dataclasses.replace(s, cond=self.exprs.visit(s.cond), then_body=bodies[0], else_body=bodies[1],
                                   return_vars=tuple(keep))


def _last_yield(body: Stmt) -> YieldStmt:
    last = flatten(body)[-1]
    assert isinstance(last, YieldStmt)
    return last


def _with_yield(body: Stmt | None, values: tuple[Expr, ...]) -> Stmt:
    assert body is not None
    stmts = flatten(body)
    assert isinstance(stmts[-1], YieldStmt)
    stmts = stmts[:-1] + ([dataclasses.replace(stmts[-1], values=values)] if values else [])
    return seq(stmts, span=body.span)


def _has_arrays(f: Function) -> bool:
    return any(isinstance(s, AssignStmt) and isinstance(s.var.var_type, ArrayType) for s in iter_stmts(f.body))


def scalarize_kernel_arrays(program: Program) -> Program:
    """Every ``pl.array`` of every kernel as one scalar per element (see the module doc); the first step of
    GatherCarriedReads, so that the read passes see the scalars."""
    funcs = [dataclasses.replace(f, body=_Scalarize().block(f.body)) if f.is_incore and _has_arrays(f) else f
             for f in program.functions]
    if all(a is b for a, b in zip(funcs, program.functions, strict=True)):
        return program
    return program.with_functions(funcs)
