"""Python source for the pieces of ``golden.py``: ``compute_golden`` from a user's function, and
the expressions that make each tensor (the facts of upstream's ``pypto.runtime.golden_writer``).

A golden function ``(tensors, params)`` (or a bound method ``(self, tensors, params)``) becomes a
top-level ``def compute_golden(tensors, params)``: ``self`` dropped, the return annotation of a
method dropped, each ``self.<attr>`` replaced by the attribute's literal value, and the simple
values it reads from its closure or module (numbers, strings, bools, None) written above it as
constants, together with the module-level helper functions it calls (recursively).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import re
import textwrap
import types
from collections.abc import Callable
from typing import Any

_SIMPLE = (int, float, str, bool, type(None))
AUTO_IMPORTS = {"torch": "import torch", "np": "import numpy as np", "numpy": "import numpy",
                "math": "import math", "F": "import torch.nn.functional as F"}
"""Module name used as ``name.`` in a compute_golden body -> the import line golden.py gets."""


def _literal(value: object) -> str | None:
    if not isinstance(value, _SIMPLE) or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return repr(value)


def _source(fn: Callable[..., Any]) -> str:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (TypeError, OSError) as exc:
        raise RuntimeError(f"Cannot extract source code from golden function {fn!r}: define it in a .py file "
                           "(not in a REPL or with exec)") from exc


def _inline_function(value: Any, seen: set[int]) -> list[str] | None:
    """A module-level helper the golden calls, as its own ``def`` (its dependencies first), or None."""
    name = getattr(value, "__name__", "")
    if not isinstance(value, types.FunctionType) or not name.isidentifier() or id(value) in seen:
        return None
    seen.add(id(value))
    try:
        text = textwrap.dedent(inspect.getsource(value))
    except (TypeError, OSError):
        return None
    return [*captured_constants(value, seen), *text.rstrip().splitlines(), ""]


def captured_constants(fn: Callable[..., Any], seen: set[int] | None = None) -> list[str]:
    """``name = literal`` lines for the simple closure and global values ``fn`` reads, plus its helpers."""
    seen = set() if seen is None else seen
    lines: list[str] = []
    done: set[str] = set()
    code = getattr(fn, "__code__", None)
    for name, cell in zip(getattr(code, "co_freevars", ()), getattr(fn, "__closure__", None) or (), strict=False):
        try:
            literal = _literal(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
        if literal is not None:
            lines.append(f"{name} = {literal}")
            done.add(name)
    glob = getattr(fn, "__globals__", {})
    for name in getattr(code, "co_names", ()):
        if name in done or name not in glob or hasattr(builtins, name):
            continue
        value = glob[name]
        if isinstance(value, types.ModuleType | type):
            continue
        literal = _literal(value)
        extra = [f"{name} = {literal}"] if literal is not None else _inline_function(value, seen) or []
        lines.extend(extra)
        done.update([name] if extra else [])
    return lines


def _strip_self_and_annotation(fn: ast.FunctionDef, method: bool) -> None:
    fn.name = "compute_golden"
    fn.decorator_list = []
    if method:
        fn.args.args = fn.args.args[1:]
        fn.returns = None


class _InlineSelf(ast.NodeTransformer):
    def __init__(self, instance: object) -> None:
        self.instance = instance

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "self" and isinstance(node.ctx, ast.Load):
            if not hasattr(self.instance, node.attr):
                raise RuntimeError(f"Bound golden method references missing attribute self.{node.attr}")
            value = getattr(self.instance, node.attr)
            literal = repr(value)
            try:
                ast.literal_eval(literal)
            except (SyntaxError, ValueError):
                raise RuntimeError("Bound golden method references unsupported non-literal attribute "
                                   f"self.{node.attr}={value!r}") from None
            return ast.copy_location(ast.parse(literal, mode="eval").body, node)
        return self.generic_visit(node)


def compute_golden_source(golden_fn: Callable[..., Any]) -> str:
    """``golden_fn`` as ``def compute_golden(tensors, params)`` with what it captures written above it."""
    try:
        tree = ast.parse(_source(golden_fn))
    except SyntaxError as exc:  # a lambda inside a larger expression: its lines alone do not parse
        raise RuntimeError(f"Cannot extract a function definition for golden function {golden_fn!r}") from exc
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)
    if not isinstance(fn, ast.FunctionDef):
        raise RuntimeError(f"{golden_fn!r} is not a plain def (a lambda or an async function has no golden form)")
    method = inspect.ismethod(golden_fn)
    _strip_self_and_annotation(fn, method)
    if method:
        fn = _InlineSelf(golden_fn.__self__).visit(fn)
    constants = captured_constants(golden_fn)
    body = ast.unparse(ast.fix_missing_locations(fn))
    return ("\n".join(constants) + "\n\n" if constants else "") + body + "\n"


def imports_for(src: str) -> list[str]:
    """The import lines a compute_golden body needs (a module named before a dot)."""
    return [line for name, line in AUTO_IMPORTS.items() if re.search(rf"(?<![\w.]){re.escape(name)}\.", src)]


def torch_dtype_text(dtype: Any) -> str:
    """``torch.float32`` for a torch dtype (the name golden.py writes)."""
    text = str(dtype)
    if not text.startswith("torch."):
        raise ValueError(f"Unsupported dtype {dtype!r} in TensorSpec (give a torch dtype)")
    return text


def _tensor_literal(value: Any, shape: str, dtype: str) -> str:
    import torch

    flat = value.flatten()
    if flat.numel() == 0 or bool(torch.all(flat == flat[0])):
        first = flat[0].item() if flat.numel() else 0
        return (f"torch.zeros({shape}, dtype={dtype})" if first == 0 else
                f"torch.ones({shape}, dtype={dtype})" if first == 1 else f"torch.full({shape}, {first!r}, dtype={dtype})")
    if value.ndim == 2 and value.shape[0] == value.shape[1] and torch.equal(value.float(), torch.eye(value.shape[0])):
        return f"torch.eye({value.shape[0]}, dtype={dtype})"
    if flat.numel() <= 100:
        return f"torch.tensor({value.tolist()!r}, dtype={dtype})"
    raise ValueError(f"a {dtype} init_value of {flat.numel()} elements is too large to write inline: give a named "
                     "function as init_value (def make(): return torch.arange(...)), or use the data files")


_FACTORIES = ("randn", "rand", "zeros", "ones")


def init_expression(spec: Any, preambles: dict[str, str], data_files: bool) -> str:
    """The expression golden.py's ``generate_inputs`` makes tensor ``spec`` with."""
    shape, dtype = repr(tuple(spec.shape)), torch_dtype_text(spec.dtype)
    if data_files:
        if spec.is_output and spec.init_value is None:
            return f"torch.zeros({shape}, dtype={dtype})"
        return f'torch.load(_DATA_DIR / "in" / "{spec.name}.pt", weights_only=True)'
    value = spec.init_value
    if spec.is_output or value is None:
        return f"torch.zeros({shape}, dtype={dtype})"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"torch.full({shape}, {value!r}, dtype={dtype})"
    if hasattr(value, "flatten") and hasattr(value, "tolist"):
        return _tensor_literal(value, shape, dtype)
    if callable(value):
        return _callable_expression(spec, value, preambles, shape, dtype)
    raise TypeError(f"Unsupported init_value type {type(value)!r} for tensor {spec.name!r}")


def _callable_expression(spec: Any, value: Callable[..., Any], preambles: dict[str, str], shape: str,
                         dtype: str) -> str:
    import torch

    name = getattr(value, "__name__", "")
    if isinstance(value, types.FunctionType) and name.isidentifier():
        if name not in preambles:
            try:
                text = textwrap.dedent(inspect.getsource(value))
            except (TypeError, OSError):
                text = ""
            if text:
                preambles[name] = "\n".join([*captured_constants(value), text.rstrip()])
        if name in preambles:
            return f"torch.as_tensor({name}(), dtype={dtype})"
    factory = next((f for f in _FACTORIES if value is getattr(torch, f)), None)
    if factory is not None:
        return f"torch.{factory}({shape}, dtype={dtype})"
    raise ValueError(f"Callable init_value {value!r} for tensor {spec.name!r} has no golden.py form: use a number, "
                     "a torch.Tensor, a named function, or one of torch.randn, torch.rand, torch.zeros, torch.ones")
