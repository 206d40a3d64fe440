"""Structural equality and hashing: alpha-equivalent trees are equal; spans and name hints ignored."""

from __future__ import annotations

import dataclasses
import hashlib
from enum import Enum
from typing import Any

from pypto.errors import VerificationError
from pypto.ir.expr import Var

_IGNORED = frozenset({"span", "comments", "uid", "name", "source_text", "source_first_line"})
_NAMED = ("Function", "GlobalVar", "OpDef")


class _Mismatch(Exception):
    def __init__(self, path: str, a: Any, b: Any) -> None:
        super().__init__(f"at {path}: {_short(a)} != {_short(b)}")


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) < 160 else text[:157] + "..."


class _Equal:
    def __init__(self) -> None:
        self.fwd: dict[int, Var] = {}
        self.back: dict[int, Var] = {}

    def var(self, a: Var, b: Var, path: str) -> None:
        mapped = self.fwd.get(id(a))
        if mapped is None:
            if id(b) in self.back:
                raise _Mismatch(path, a, b)
            self.fwd[id(a)] = b
            self.back[id(b)] = a
            self.check(a.var_type, b.var_type, path + ".type")
        elif mapped is not b:
            raise _Mismatch(path, a, b)

    def check(self, a: Any, b: Any, path: str) -> None:
        if a is b:
            return
        if type(a) is not type(b):
            raise _Mismatch(path, a, b)
        if isinstance(a, Var):
            self.var(a, b, path)
        elif dataclasses.is_dataclass(a):
            self.fields(a, b, path)
        elif isinstance(a, (tuple, list, dict)):
            self.container(a, b, path)
        elif a != b:
            raise _Mismatch(path, a, b)

    def container(self, a: Any, b: Any, path: str) -> None:
        if isinstance(a, dict):
            if a.keys() != b.keys():
                raise _Mismatch(path + ".keys", sorted(a), sorted(b))
            for k in a:
                self.check(a[k], b[k], f"{path}[{k!r}]")
            return
        if len(a) != len(b):
            raise _Mismatch(path + ".len", len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            self.check(x, y, f"{path}[{i}]")

    def fields(self, a: Any, b: Any, path: str) -> None:
        cls = type(a)
        keep_name = cls.__name__ in _NAMED
        for f in dataclasses.fields(cls):
            if f.name in _IGNORED and not (keep_name and f.name == "name"):
                continue
            self.check(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")


def structural_diff(a: Any, b: Any) -> str | None:
    """None when equal, else a message naming the first differing path."""
    try:
        _Equal().check(a, b, type(a).__name__)
    except _Mismatch as exc:
        return str(exc)
    return None


def structural_equal(a: Any, b: Any, enable_auto_mapping: bool = True) -> bool:
    """True when the trees are equal up to Var renaming, spans and name hints."""
    return structural_diff(a, b) is None


def assert_structural_equal(a: Any, b: Any, enable_auto_mapping: bool = True) -> None:
    """Raise VerificationError with the first difference when the trees differ."""
    diff = structural_diff(a, b)
    if diff is not None:
        raise VerificationError(f"IR trees differ {diff}")


class _Hasher:
    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.h = hashlib.sha256()

    def feed(self, v: Any) -> None:
        if isinstance(v, Var):
            n = self.ids.setdefault(id(v), len(self.ids))
            self.h.update(f"V{n};".encode())
            if n == len(self.ids) - 1:
                self.feed(v.var_type)
        elif dataclasses.is_dataclass(v):
            cls = type(v)
            self.h.update(cls.__name__.encode())
            keep_name = cls.__name__ in _NAMED
            for f in dataclasses.fields(cls):
                if f.name not in _IGNORED or (keep_name and f.name == "name"):
                    self.feed(getattr(v, f.name))
        elif isinstance(v, (tuple, list)):
            self.h.update(f"L{len(v)}(".encode())
            for x in v:
                self.feed(x)
            self.h.update(b")")
        elif isinstance(v, dict):
            for k in sorted(v):
                self.h.update(repr(k).encode())
                self.feed(v[k])
        elif isinstance(v, Enum):
            self.h.update(f"{type(v).__name__}.{v.name};".encode())
        else:
            self.h.update(f"{type(v).__name__}:{v!r};".encode())


def structural_hash(node: Any, enable_auto_mapping: bool = True) -> int:
    """Deterministic hash consistent with :func:`structural_equal`."""
    hasher = _Hasher()
    hasher.feed(node)
    return int.from_bytes(hasher.h.digest()[:8], "little")
