"""Signature mode of ``JITFunction.compile()`` / ``lower()``: specialize from the annotations alone.

With no positional arguments and no tensor-valued keyword argument, each tensor parameter's
``pl.Tensor[[...], dtype]`` annotation gives its shape and dtype (a ``pl.dynamic`` axis stays dynamic:
it gets a placeholder extent here and ``None`` in the cache key, like a sample-argument compile), and
each scalar parameter takes its value from a keyword argument or its default: a literal is specialized,
``pl.RUNTIME`` keeps it a runtime parameter of the compiled program.
"""

from __future__ import annotations

import inspect
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.jit.meta import TensorMeta, is_tensor_like
from pypto.language.typing.scalar import RUNTIME, RuntimeScalarMarker  # noqa: F401 (RUNTIME's old home)

# extent given to a pl.dynamic axis (it never reaches the program text or the cache key)
DYNAMIC_PLACEHOLDER = 1



def is_signature_mode(args: tuple, kwargs: dict[str, Any]) -> bool:
    """No positional argument and no tensor passed by keyword (scalars by keyword are fine)."""
    return not args and not any(is_tensor_like(v) for v in kwargs.values())


def _annotation_env(func: Any) -> dict[str, Any]:
    """Globals plus closure values: what a string annotation (``from __future__ import annotations``) sees."""
    env = dict(func.__globals__)
    try:
        env.update(inspect.getclosurevars(func).nonlocals)
    except (TypeError, ValueError):
        pass
    return env


def _evaluated(func: Any, param: inspect.Parameter, env: dict[str, Any] | None) -> Any:
    ann = param.annotation
    if isinstance(ann, str):
        try:
            return eval(ann, env if env is not None else _annotation_env(func))  # noqa: S307 - the kernel's own annotation
        except Exception:  # noqa: BLE001 - reported below as "cannot infer"
            return ann
    return ann


def signature_specs(fn: Any, kwargs: dict[str, Any]) -> tuple[dict[str, TensorMeta], dict[str, Any]]:
    """Tensor metadata and specialized scalar values read from ``fn``'s annotations (TypeError if one
    cannot be read). Scalars left out of the result stay runtime parameters (``pl.RUNTIME``)."""
    from pypto.language.types import AnnotationSpec, TypeCtor

    params = fn._sig.parameters
    env = _annotation_env(fn.func) if any(isinstance(p.annotation, str) for p in params.values()) else None
    metas: dict[str, TensorMeta] = {}
    scalars: dict[str, Any] = {}
    for name, param in params.items():
        ann = _evaluated(fn.func, param, env)
        if isinstance(ann, AnnotationSpec) and ann.ctor in ("Out", "InOut"):
            ann = ann.items
        if isinstance(ann, TypeCtor) and ann.kind == "Tensor":
            raise TypeError(
                f"@pl.jit function '{fn.__name__}': cannot specialize from the signature because parameter "
                f"'{name}' has a bare 'pl.Tensor' annotation with no shape. Give it a full "
                f"'pl.Tensor[[...], dtype]' annotation, or pass sample tensors to "
                f"lower(*sample_tensors) or compile(*sample_tensors).")
        if isinstance(ann, AnnotationSpec) and ann.ctor == "Tensor":
            metas[name] = _tensor_meta(fn.__name__, name, ann.items)
            continue
        dtype = ann.items if isinstance(ann, AnnotationSpec) and ann.ctor == "Scalar" else ann
        if isinstance(dtype, DataType):
            value = _scalar_value(fn.__name__, name, param, kwargs)
            if value is not RUNTIME:
                scalars[name] = value
            continue
        raise TypeError(
            f"@pl.jit function '{fn.__name__}': cannot infer parameter '{name}' from the signature "
            f"(annotation: {ann!r}). Annotate it as a shaped 'pl.Tensor' / 'pl.Scalar[dtype]', or pass "
            f"sample values to lower(*sample_args) or compile(*sample_args).")
    return metas, scalars


def _tensor_meta(func: str, name: str, items: Any) -> TensorMeta:
    from pypto.language.types import DynVar

    items = items if isinstance(items, tuple) else (items,)
    if len(items) < 2 or not isinstance(items[0], (list, tuple)) or not isinstance(items[1], DataType):
        raise TypeError(f"@pl.jit function '{func}': parameter '{name}': write pl.Tensor[[dims...], dtype]")
    dims = []
    for d in items[0]:
        if isinstance(d, DynVar):
            dims.append(DYNAMIC_PLACEHOLDER)
        elif isinstance(d, int) and not isinstance(d, bool):
            dims.append(d)
        else:
            raise TypeError(f"@pl.jit function '{func}': parameter '{name}': dimension {d!r} is neither an int "
                            "nor a pl.dynamic() name")
    return TensorMeta(tuple(dims), items[1])


def _scalar_value(func: str, name: str, param: inspect.Parameter, kwargs: dict[str, Any]) -> Any:

    if name in kwargs:
        value = kwargs[name]
    elif param.default is not inspect.Parameter.empty:
        value = param.default
    else:
        raise TypeError(
            f"@pl.jit function '{func}': scalar parameter '{name}' has no value. When specializing from "
            f"annotations, pass scalar values as keyword arguments, e.g. lower({name}=...) or "
            f"compile({name}=...). Pass '{name}=pl.RUNTIME' instead to leave it unspecialized (its value "
            "is supplied at dispatch).")
    if value is RUNTIME or isinstance(value, (int, float, bool)):
        return value
    raise TypeError(
        f"@pl.jit function '{func}': scalar parameter '{name}' must be an int/float/bool (specializes the "
        f"value into the artifact) or pl.RUNTIME (leaves it unspecialized), got {type(value).__name__}.")


def scalar_param_dtype(fn: Any, name: str) -> DataType | None:
    """The dtype of ``fn``'s parameter ``name`` when it is annotated ``pl.Scalar[dtype]`` (or a bare
    dtype), else None."""
    from pypto.language.types import AnnotationSpec

    param = fn._sig.parameters.get(name)
    if param is None:
        return None
    ann = _evaluated(fn.func, param, None)
    dtype = ann.items if isinstance(ann, AnnotationSpec) and ann.ctor == "Scalar" else ann
    return dtype if isinstance(dtype, DataType) else None
