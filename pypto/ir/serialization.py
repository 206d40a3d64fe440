"""``ir.serialize`` / ``ir.deserialize``: IR nodes to MessagePack bytes and back.

The document is a MessagePack map ``{"format": "pypto.ir", "version": 1, "strings": [...], "root": ...}``.
Every IR node (a dataclass of ``pypto.ir``) is written once as a map ``{"$T": class, "$I": id, field:
value, ...}`` and referenced again as ``{"$R": id}``, so shared objects (one Var used in many places,
one Type on many Vars) stay shared after a round trip. Enums are ``{"$E": class, "v": member}``,
tuples are arrays, lists ``{"$L": [...]}``, dicts ``{"$D": [k, v, ...]}`` and long strings (the source
text spans carry) go once into ``strings`` as ``{"$S": index}``. Var ids (``uid``) are not stored: a
deserialized program gets fresh ones, in the same relative order.

A loop's initial values (``ForStmt.inits`` / ``WhileStmt.inits``) are written where version 1 has always
kept them: as the ``init`` field of each IterArg's record, and read back onto the loop.
"""

from __future__ import annotations

import dataclasses
import enum
import os
from pathlib import Path
from typing import Any

from pypto.ir import msgpack
from pypto.ir.expr import IterArg
from pypto.ir.stmt import ForStmt, WhileStmt

FORMAT, VERSION = "pypto.ir", 1
_LONG = 48  # strings at least this long go into the string table
_SKIP = frozenset({"uid", "inits"})
_MODULES = ("pypto.ir.expr", "pypto.ir.stmt", "pypto.ir.types", "pypto.ir.function", "pypto.span",
            "pypto.ir.dtypes", "pypto.ir.enums", "pypto.ir.options")
_registry: dict[str, type] = {}


def _classes() -> dict[str, type]:
    """IR dataclasses and enums by class name (only these are ever instantiated by deserialize)."""
    if not _registry:
        import importlib

        for mod_name in _MODULES:
            mod = importlib.import_module(mod_name)
            for obj in vars(mod).values():
                if isinstance(obj, type) and obj.__module__ == mod_name and (
                        dataclasses.is_dataclass(obj) or issubclass(obj, enum.Enum)):
                    _registry[obj.__name__] = obj
    return _registry


class _Encoder:
    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.keep: list[Any] = []  # keeps encoded objects alive so their id() stays unique
        self.strings: dict[str, int] = {}
        self.inits: dict[int, Any] = {}  # id(IterArg) -> its loop's initial value

    def enc(self, v: Any) -> Any:  # noqa: C901 - one branch per value kind
        if v is None or isinstance(v, (bool, int, float)) and not isinstance(v, enum.Enum):
            return v
        if isinstance(v, str):
            if len(v) < _LONG:
                return v
            return {"$S": self.strings.setdefault(v, len(self.strings))}
        if isinstance(v, enum.Enum):
            return {"$E": self._name(v), "v": v.name}
        if isinstance(v, tuple):
            return [self.enc(x) for x in v]
        if isinstance(v, list):
            return {"$L": [self.enc(x) for x in v]}
        if isinstance(v, dict):
            return {"$D": [x for key, item in v.items() for x in (self.enc(key), self.enc(item))]}
        if isinstance(v, (frozenset, set)):
            return {"$F": [self.enc(x) for x in sorted(v, key=repr)]}
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return self.node(v)
        raise TypeError(f"ir.serialize: cannot serialize a value of type {type(v).__name__} ({v!r:.80})")

    def _name(self, v: Any) -> str:
        name = type(v).__name__
        if _classes().get(name) is not type(v):
            raise TypeError(f"ir.serialize: {type(v).__module__}.{name} is not a pypto IR class")
        return name

    def node(self, v: Any) -> dict[str, Any]:
        known = self.ids.get(id(v))
        if known is not None:
            return {"$R": known}
        out: dict[str, Any] = {"$T": self._name(v), "$I": len(self.ids)}
        self.ids[id(v)] = out["$I"]
        self.keep.append(v)
        if isinstance(v, (ForStmt, WhileStmt)):
            self.inits.update((id(ia), init) for ia, init in zip(v.iter_args, v.inits, strict=True))
        for f in dataclasses.fields(v):
            if f.name not in _SKIP:
                out[f.name] = self.enc(getattr(v, f.name))
        if isinstance(v, IterArg):
            out["init"] = self.enc(self.inits.get(id(v)))
        return out


def serialize(node: Any) -> bytes:
    """MessagePack bytes of an IR node (Program, Function, Stmt, Expr, Type, ...)."""
    enc = _Encoder()
    root = enc.enc(node)
    doc = {"format": FORMAT, "version": VERSION, "strings": list(enc.strings), "root": root}
    return msgpack.packb(doc)


class _Decoder:
    def __init__(self, strings: list[str]) -> None:
        self.strings = strings
        self.objects: dict[int, Any] = {}
        self.inits: dict[IterArg, Any] = {}  # an IterArg's initial value, for its loop

    def dec(self, v: Any) -> Any:
        if isinstance(v, list):
            return tuple(self.dec(x) for x in v)
        if not isinstance(v, dict):
            return v
        if "$T" in v:
            return self.node(v)
        if "$R" in v:
            return self.objects[v["$R"]]
        if "$S" in v:
            return self.strings[v["$S"]]
        if "$E" in v:
            return self._cls(v["$E"])[v["v"]]
        if "$L" in v:
            return [self.dec(x) for x in v["$L"]]
        if "$D" in v:
            items = v["$D"]
            return {self.dec(items[i]): self.dec(items[i + 1]) for i in range(0, len(items), 2)}
        if "$F" in v:
            return frozenset(self.dec(x) for x in v["$F"])
        raise ValueError(f"ir.deserialize: unexpected map with keys {sorted(v)[:5]}")

    def _cls(self, name: str) -> Any:
        cls = _classes().get(name)
        if cls is None:
            raise ValueError(f"ir.deserialize: unknown IR class '{name}' (written by another pypto version?)")
        return cls

    def node(self, v: dict[str, Any]) -> Any:
        cls = self._cls(v["$T"])
        kwargs = {k: self.dec(x) for k, x in v.items() if not k.startswith("$")}
        init = kwargs.pop("init", None) if cls is IterArg else None
        if cls is ForStmt or cls is WhileStmt:
            kwargs["inits"] = tuple(self.inits.get(ia) for ia in kwargs.get("iter_args", ()))
        names = {f.name for f in dataclasses.fields(cls) if f.init}
        unknown = set(kwargs) - names
        if unknown:
            raise ValueError(f"ir.deserialize: {cls.__name__} has no field(s) {sorted(unknown)}")
        obj = cls(**kwargs)
        if cls is IterArg:
            self.inits[obj] = init
        self.objects[v["$I"]] = obj
        return obj


def deserialize(data: bytes) -> Any:
    """The IR node :func:`serialize` wrote (ValueError for anything else)."""
    try:
        doc = msgpack.unpackb(bytes(data))
    except msgpack.MsgpackError as exc:
        raise ValueError(f"ir.deserialize: not a serialized pypto IR document ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError("ir.deserialize: not a serialized pypto IR document (no 'pypto.ir' header)")
    if doc.get("version") != VERSION:
        raise ValueError(f"ir.deserialize: format version {doc.get('version')} is not supported (this pypto "
                         f"reads version {VERSION})")
    return _Decoder(list(doc.get("strings") or [])).dec(doc["root"])


def serialize_to_file(node: Any, path: str | os.PathLike[str]) -> None:
    """Write :func:`serialize` bytes to ``path``."""
    Path(path).write_bytes(serialize(node))


def deserialize_from_file(path: str | os.PathLike[str]) -> Any:
    """Read an IR node written by :func:`serialize_to_file` (FileNotFoundError if missing)."""
    return deserialize(Path(path).read_bytes())
