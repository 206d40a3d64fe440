"""Read the kernel signature of a hand-written ``.pto`` file (PTO dialect 0.1.1).

Only what running the kernel needs is parsed: the ``func.func`` arguments (``!pto.ptr<T>`` tensors,
``f32``/``f16``/``i32``/``i1``/``index`` scalars), the static shapes of the tensor views made from
each pointer (an ``index`` argument used as a view extent is a dynamic dimension, read from the
tensor's shape at run time), and whether the function uses cube-side tiles (then it is an AIC kernel).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pypto.errors import UserError

ArgKind = Literal["tensor", "scalar", "dyn_dim"]

# MLIR element type -> (compiled_meta dtype, C type of the ptoas parameter)
TENSOR_TYPES = {"f32": ("fp32", "float"), "f16": ("fp16", "half"), "bf16": ("bf16", "bfloat16_t"),
                "i8": ("int8", "int8_t"), "i16": ("int16", "int16_t"), "i32": ("int32", "int32_t"),
                "i64": ("int64", "int64_t"), "ui8": ("uint8", "uint8_t"), "ui16": ("uint16", "uint16_t"),
                "ui32": ("uint32", "uint32_t"), "i1": ("bool", "bool")}
SCALAR_TYPES = {"f32": ("fp32", "float"), "f16": ("fp16", "half"), "i1": ("bool", "bool"),
                "i8": ("int8", "int8_t"), "i16": ("int16", "int16_t"), "i32": ("int32", "int32_t"),
                "i64": ("int64", "int64_t"), "index": ("int64", "int32_t")}
CUBE_LOCS = ("mat", "left", "right", "acc", "bias", "scaling")

_FUNC = re.compile(r"\bfunc\.func\s+(?:(?:private|public)\s+)?@(?P<name>[\w$.]+)\s*\(")
_ALIAS = re.compile(r"^\s*!(?P<name>[\w.$-]+)\s*=\s*(?P<type>.+?)\s*$", re.M)
_PTR = re.compile(r"^!pto\.ptr<\s*(\w+)\s*>$")
_CONST = re.compile(r"%(?P<name>[\w$.-]+)\s*=\s*arith\.constant\s+(?P<value>-?\d+)\s*:\s*(?:index|i\d+)")
_VIEW = re.compile(r"pto\.make_tensor_view\s+%(?P<ptr>[\w$.-]+)\s*,\s*shape\s*=\s*\[(?P<dims>[^\]]*)\]")
_CUBE = re.compile(r"\bloc\s*=\s*(?:" + "|".join(CUBE_LOCS) + r")\b|\bpto\.tmatmul\b")
_CPP_SIG = r"\bvoid\s+{name}\s*\(([^)]*)\)"


@dataclass(frozen=True, slots=True)
class PtoArg:
    """One ``func.func`` argument.

    Attributes:
        name: the SSA name without ``%`` (``arg0``, ``x``).
        mlir_type: the argument type as written (aliases resolved).
        kind: ``tensor`` (a ``!pto.ptr``), ``scalar`` (passed by the caller) or ``dyn_dim`` (an
            ``index`` extent of a tensor view, taken from that tensor's shape).
        dtype: ``compiled_meta.json`` dtype (element type for tensors).
        ctype: C type of the parameter in the ptoas C++ (element type for tensors).
        shape: for tensors, the view extents (None = dynamic or unknown); None if no single view.
        dim_of: for ``dyn_dim``, (position among tensor args, axis).
    """

    name: str
    mlir_type: str
    kind: ArgKind
    dtype: str
    ctype: str
    shape: tuple[int | None, ...] | None = None
    dim_of: tuple[int, int] | None = None

    def describe(self) -> str:
        """``%x: !pto.ptr<f32>`` plus what it becomes."""
        extra = {"tensor": "tensor", "scalar": "scalar",
                 "dyn_dim": f"dynamic dim {self.dim_of[1] if self.dim_of else '?'} of a tensor"}[self.kind]
        return f"%{self.name}: {self.mlir_type} ({extra})"


@dataclass(frozen=True, slots=True)
class PtoSignature:
    """The selected kernel of a ``.pto`` file."""

    path: Path
    func: str
    args: tuple[PtoArg, ...]
    core: str
    functions: tuple[str, ...]

    @property
    def tensors(self) -> tuple[PtoArg, ...]:
        return tuple(a for a in self.args if a.kind == "tensor")

    @property
    def user_args(self) -> tuple[PtoArg, ...]:
        """Arguments the caller passes, in order (tensors and scalars; dynamic dims are derived)."""
        return tuple(a for a in self.args if a.kind != "dyn_dim")

    def render(self) -> str:
        """``@func(%a: !pto.ptr<f32>, ...)``."""
        return f"@{self.func}(" + ", ".join(f"%{a.name}: {a.mlir_type}" for a in self.args) + ")"


def _matching(text: str, open_at: int, pair: str = "()") -> int:
    """Index just past the bracket closing the one at ``open_at``."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == pair[0]:
            depth += 1
        elif text[i] == pair[1]:
            depth -= 1
            if depth == 0:
                return i + 1
    raise _Unbalanced(pair, open_at)


class _Unbalanced(ValueError):
    def __init__(self, pair: str, at: int) -> None:
        self.pair, self.at = pair, at
        super().__init__(f"'{pair[0]}' is never closed by '{pair[1]}'")


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        depth += ch in "<([{"
        depth -= ch in ">)]}"
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


@dataclass(frozen=True, slots=True)
class _Func:
    name: str
    start: int
    end: int
    params: str
    body: str


def _functions(text: str) -> list[_Func]:
    out = []
    for m in _FUNC.finditer(text):
        params_end = _matching(text, m.end() - 1)
        brace = text.find("{", params_end)
        end = _matching(text, brace, "{}") if brace >= 0 else len(text)
        out.append(_Func(m.group("name"), m.start(), end, text[m.end():params_end - 1], text[params_end:end]))
    return out


def _aliases(text: str) -> dict[str, str]:
    return {m.group("name"): m.group("type") for m in _ALIAS.finditer(text)}


def _resolve(t: str, aliases: dict[str, str]) -> str:
    for _ in range(8):
        m = re.fullmatch(r"!([\w.$-]+)", t.strip())
        if m is None or m.group(1) not in aliases:
            return t.strip()
        t = aliases[m.group(1)]
    return t.strip()


def _views(body: str) -> dict[str, list[list[str]]]:
    views: dict[str, list[list[str]]] = {}
    for m in _VIEW.finditer(body):
        dims = [d.strip().lstrip("%") for d in m.group("dims").split(",") if d.strip()]
        views.setdefault(m.group("ptr"), []).append(dims)
    return views


def _tensor_shape(views: list[list[str]], consts: dict[str, int]) -> tuple[int | None, ...] | None:
    shapes = {tuple(consts.get(d) for d in dims) for dims in views}
    return next(iter(shapes)) if len(shapes) == 1 else None


def _arg(where: str, raw: str, aliases: dict[str, str]) -> tuple[str, str]:
    m = re.fullmatch(r"%([\w$.-]+)\s*:\s*(.+?)(?:\s*\{.*\})?", raw, re.S)
    if m is None:
        raise UserError(f"{where}: cannot parse function argument '{raw}'",
                        hint="arguments look like %name: !pto.ptr<f32>, %n: index, %s: f32")
    return m.group(1), _resolve(m.group(2), aliases)


def _parse_args(where: str, fn: _Func, aliases: dict[str, str]) -> tuple[PtoArg, ...]:
    consts = {m.group("name"): int(m.group("value")) for m in _CONST.finditer(fn.body)}
    views = _views(fn.body)
    raw = [_arg(where, p, aliases) for p in _split_top(fn.params)]
    tensor_pos = {name: i for i, name in enumerate(n for n, t in raw if _PTR.match(t))}
    dims = {}
    for ptr, shapes in views.items():
        for dims_list in shapes:
            for axis, d in enumerate(dims_list):
                if ptr in tensor_pos:
                    dims.setdefault(d, (tensor_pos[ptr], axis))
    return tuple(_classify(where, name, t, views, consts, dims) for name, t in raw)


def _classify(where: str, name: str, t: str, views: dict[str, list[list[str]]], consts: dict[str, int],
              dims: dict[str, tuple[int, int]]) -> PtoArg:
    ptr = _PTR.match(t)
    if ptr:
        elem = ptr.group(1)
        if elem not in TENSOR_TYPES:
            raise UserError(f"{where}: argument %{name}: element type {elem} is not supported",
                            hint=f"supported: {', '.join(TENSOR_TYPES)}")
        meta, ctype = TENSOR_TYPES[elem]
        return PtoArg(name, t, "tensor", meta, ctype, _tensor_shape(views.get(name, []), consts))
    if t not in SCALAR_TYPES:
        raise UserError(f"{where}: argument %{name} has type {t}, which cannot be passed to a kernel",
                        hint=f"use !pto.ptr<T> for tensors, or one of {', '.join(SCALAR_TYPES)} for scalars")
    meta, ctype = SCALAR_TYPES[t]
    if t == "index" and name in dims:
        return PtoArg(name, t, "dyn_dim", meta, ctype, dim_of=dims[name])
    return PtoArg(name, t, "scalar", meta, ctype)


def _select(where: str, funcs: list[_Func], func: str | None) -> _Func:
    names = [f.name for f in funcs]
    if not funcs:
        raise UserError(f"{where}: no func.func found",
                        hint="a kernel file holds module { func.func @name(...) {...} }")
    if func is None:
        if len(funcs) > 1:
            raise UserError(f"{where} defines {len(funcs)} functions ({', '.join(names)}); say which one to run",
                            hint=f"pass func='{names[0]}' (CLI: --func {names[0]})")
        return funcs[0]
    for f in funcs:
        if f.name == func:
            return f
    raise UserError(f"{where}: no function @{func}; the file defines {', '.join('@' + n for n in names)}")


def infer_core(text: str, body: str) -> str:
    """``aic`` if the function uses cube-side tiles (``loc=mat|left|right|acc``...) or ``tmatmul``."""
    used = {m.group(1) for m in re.finditer(r"!([\w.$-]+)", body)}
    aliases = _aliases(text)
    expanded = body + "\n" + "\n".join(aliases[a] for a in used if a in aliases)
    return "aic" if _CUBE.search(expanded) else "aiv"


def parse_pto(text: str, path: Path, func: str | None = None, core: str | None = None) -> PtoSignature:
    """The signature of ``func`` (default: the only function) in the ``.pto`` text of ``path``."""
    where = str(path)
    try:
        funcs = _functions(text)
    except _Unbalanced as exc:
        from pypto.span import Span

        line = text.count("\n", 0, exc.at) + 1
        col = exc.at - (text.rfind("\n", 0, exc.at) + 1) + 1
        raise UserError(f"malformed PTO file: {exc}", Span(where, line, col),
                        hint="the file looks truncated or unbalanced; a .pto holds a complete `module { ... }`") from None
    fn = _select(where, funcs, func)
    _check_name(where, text, fn)
    if core is not None and core not in ("aiv", "aic"):
        raise UserError(f"core must be 'aiv' or 'aic' (or None to infer it), got {core!r}")
    args = _parse_args(where, fn, _aliases(text))
    return PtoSignature(path, fn.name, args, core or infer_core(text, fn.body), tuple(f.name for f in funcs))


def _check_name(where: str, text: str, fn: _Func) -> None:
    """The function's name becomes file names and a C++ function: it must be a valid symbol."""
    from pypto.artifact.names import check_symbol, symbol_problem
    from pypto.span import Span

    if symbol_problem(fn.name) is None:
        return
    at = text.index("@", fn.start)
    line, col = text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
    check_symbol(fn.name, "func.func", Span(where, line, col, line, col + len(fn.name) + 1))


def single_function_text(text: str, func: str) -> str:
    """``text`` without the other ``func.func`` definitions (those not referenced by ``@func``).

    Removed functions become blank lines, so line numbers in ptoas diagnostics still match ``text``.
    """
    funcs = _functions(text)
    keep = next(f for f in funcs if f.name == func)
    out, pos = [], 0
    for f in funcs:
        if f is keep or re.search(rf"@{re.escape(f.name)}\b", keep.body):
            continue
        out.append(text[pos:f.start] + "\n" * text.count("\n", f.start, f.end))
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


def cpp_param_types(cpp: str, func: str) -> list[str] | None:
    """C types of ``func``'s parameters in the ptoas C++ (pointee type for pointers), or None."""
    m = re.search(_CPP_SIG.format(name=re.escape(func)), cpp)
    if m is None:
        return None
    types = []
    for p in _split_top(m.group(1)):
        words = p.replace("*", " * ").split()
        types.append(" ".join(w for w in words[:-1] if w not in ("__gm__", "*", "const")))
    return types
