"""Turn user arguments into orchestration arguments, and run compiled programs.

Tensors (numpy arrays, torch CPU tensors, :class:`DeviceTensor`) are passed zero-copy: on the
simulator device memory is host memory, so kernels read and write the caller's buffers directly.
Calls are either in place (one argument per orchestration parameter; returns None) or return style
(inputs only; pure ``Out`` parameters are allocated and returned, one tensor or a tuple).
"""

from __future__ import annotations

import ctypes
import os
import struct
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from pypto.artifact.directory import ArtifactInfo, load_artifact
from pypto.artifact.meta import ParamInfo
from pypto.runtime import dtypes
from pypto.runtime.native import MAX_DIMS, NO_OWNER

_SCALAR_FORMATS = {"fp32": "<f", "fp16": "<e", "int8": "<b", "int16": "<h", "int32": "<i", "int64": "<q",
                   "uint8": "<B", "uint16": "<H", "uint32": "<I", "uint64": "<Q", "bool": "<?",
                   "index": "<q"}  # pl.INDEX scalars are 64-bit in the orchestration
_CTYPES_META = {ctypes.c_float: "fp32", ctypes.c_double: "fp64", ctypes.c_int8: "int8", ctypes.c_int16: "int16",
                ctypes.c_int32: "int32", ctypes.c_int64: "int64", ctypes.c_uint8: "uint8",
                ctypes.c_uint16: "uint16", ctypes.c_uint32: "uint32", ctypes.c_uint64: "uint64",
                ctypes.c_bool: "bool"}


@dataclass(eq=False)
class DeviceTensor:
    """A tensor in (simulated) device memory; passed to programs without any copy.

    Attributes:
        data_ptr: device address (a host address on the simulator).
        shape: element shape.
        dtype: runtime dtype (anything :func:`pypto.runtime.dtypes.coerce` accepts).
        buffer: owner of the memory (the allocating worker), if any.
    """

    data_ptr: int
    shape: tuple[int, ...]
    dtype: Any
    buffer: Any = None
    freed: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.shape = tuple(int(s) for s in self.shape)
        self.dtype = dtypes.coerce(self.dtype)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def numpy(self) -> np.ndarray:
        """A numpy view of the memory (simulator only; raw bits for types numpy lacks)."""
        if self.freed:
            raise ValueError("DeviceTensor was freed")
        carrier = dtypes.numpy_carrier(self.dtype)
        raw = (ctypes.c_char * self.nbytes).from_address(self.data_ptr)
        return np.frombuffer(raw, dtype=carrier).reshape(self.shape)


@dataclass
class BoundCall:
    """Packed arguments of one call, plus what to hand back to the caller."""

    tensors: ctypes.Array
    num_tensors: int
    scalars: ctypes.Array
    num_scalars: int
    outputs: list[Any]
    return_style: bool
    keepalive: list[Any]

    def result(self) -> Any:
        """None for in-place calls, else the allocated output(s)."""
        if not self.return_style:
            return None
        return self.outputs[0] if len(self.outputs) == 1 else tuple(self.outputs)


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


def _is_tensor(x: Any) -> bool:
    return isinstance(x, np.ndarray | DeviceTensor) or _is_torch(x)


def _tensor_facts(i: int, x: Any, param: ParamInfo | None) -> tuple[int, tuple[int, ...], dtypes.RtDType, Any]:
    """(address, shape, dtype, keepalive) of a tensor argument, with the upstream error texts."""
    if isinstance(x, DeviceTensor):
        if x.freed:
            raise ValueError(f"Tensor at position {i} is a DeviceTensor that was already freed")
        return x.data_ptr, x.shape, x.dtype, x
    if isinstance(x, np.ndarray):
        if not x.flags.c_contiguous:
            raise ValueError(f"Tensor at position {i} is not contiguous. Call .contiguous() before packing into "
                             "orch_args. (numpy: np.ascontiguousarray(x))")
        if param is not None and param.direction != "In" and not x.flags.writeable:
            raise ValueError(f"Tensor at position {i} ('{param.name}', {param.direction}) is read-only")
        dt = _numpy_checked(i, x.shape, x.dtype, param)
        if x.flags.writeable and x.size:
            return ctypes.addressof(ctypes.c_char.from_buffer(x)), x.shape, dt, x
        return x.__array_interface__["data"][0], x.shape, dt, x
    if x.device.type != "cpu":
        raise ValueError(f"Tensor at position {i} is on {x.device}, expected CPU. Move it with .cpu() first.")
    if not x.is_contiguous():
        raise ValueError(f"Tensor at position {i} is not contiguous. Call .contiguous() before packing into orch_args.")
    return x.data_ptr(), tuple(x.shape), _torch_dtype(x.dtype, param), x


_SIGNED_CARRIER = {"uint16": "int16", "uint32": "int32", "uint64": "int64"}


def _torch_dtype(dt: Any, param: ParamInfo | None) -> dtypes.RtDType:
    """A torch dtype as a runtime dtype; a signed tensor of the width of an unsigned parameter carries its
    bits (PyTorch's unsigned 16/32/64-bit types have few ops, and upstream's harness passes ``torch.int32``
    for ``UINT32``)."""
    rt = dtypes.from_torch(dt)
    want = param.dtype.meta if param is not None and param.dtype else None
    return dtypes.BY_META[want] if want is not None and _SIGNED_CARRIER.get(want) == rt.meta else rt


@lru_cache(maxsize=4096)
def _numpy_checked(i: int, shape: tuple[int, ...], dt: np.dtype, param: ParamInfo | None) -> dtypes.RtDType:
    rt = _numpy_dtype(i, dt, param)
    _check_param(i, shape, rt, param)
    return rt


def _numpy_dtype(i: int, dt: np.dtype, param: ParamInfo | None) -> dtypes.RtDType:
    want = dtypes.BY_META.get(param.dtype.meta) if param is not None and param.dtype else None
    if want is not None and want.numpy is None and dt == dtypes.RAW_CARRIERS.get(want.meta):
        return want
    return dtypes.from_numpy(dt)


def _check_param(i: int, shape: tuple[int, ...], dt: dtypes.RtDType, param: ParamInfo | None) -> None:
    if param is None:
        return
    if param.dtype and param.dtype.meta != dt.meta and not (param.dtype.meta == "index" and dt.meta == "int64"):
        raise TypeError(f"argument {i} ('{param.name}'): dtype {dt.meta} does not match the compiled dtype "
                        f"{param.dtype.meta}")
    if param.shape is not None:
        ok = len(shape) == len(param.shape) and all(p is None or p < 0 or p == s
                                                    for p, s in zip(param.shape, shape, strict=True))
        if not ok:
            raise ValueError(f"argument {i} ('{param.name}'): shape {tuple(shape)} does not match the compiled "
                             f"shape {tuple(param.shape)}")


_CHIP_TENSOR = struct.Struct("<QQQQiIBBBB5IQ5I36x")  # ChipTensor layout (tensor.h), 128 bytes


def _pack(buf: ctypes.Array, k: int, addr: int, shape: tuple[int, ...], dt: dtypes.RtDType, i: int) -> None:
    dims = tuple(shape) or (1,)
    nd = len(dims)
    if nd > MAX_DIMS:
        raise ValueError(f"Tensor at position {i} has {nd} dimensions; at most {MAX_DIMS} are supported")
    strides = [1] * nd
    for d in range(nd - 1, 0, -1):
        strides[d - 1] = strides[d] * dims[d]
    numel = strides[0] * dims[0]
    pad = (0,) * (MAX_DIMS - nd)
    _CHIP_TENSOR.pack_into(buf, k * 128, addr, numel * dt.itemsize, NO_OWNER, 0, 0, nd, dt.code, 0, 1, 1,
                           *dims, *pad, numel, *strides, *pad)


def scalar_bits(i: int, x: Any, param: ParamInfo | None) -> int:
    """The u64 slot value of a scalar argument (float -> fp32 bits unless the parameter says otherwise)."""
    meta = param.dtype.meta if param is not None and param.dtype else None
    if isinstance(x, ctypes._SimpleCData):
        meta = meta or _CTYPES_META.get(type(x))
        x = x.value
    elif isinstance(x, np.generic):
        meta = meta or dtypes.from_numpy(x.dtype).meta
        x = x.item()
    if meta is None:
        meta = "bool" if isinstance(x, bool) else "int64" if isinstance(x, int) else "fp32"
    if meta == "fp64":
        return struct.unpack("<Q", struct.pack("<d", float(x)))[0]
    fmt = _SCALAR_FORMATS.get(meta)
    if fmt is None or not isinstance(x, int | float | bool):
        raise TypeError(f"Argument at position {i} has unsupported type {type(x).__name__}; expected a numpy "
                        "array, a torch CPU tensor, a DeviceTensor or a scalar (int, float, ctypes value)")
    raw = struct.pack(fmt, x if "f" in fmt or "e" in fmt else int(x))
    return int.from_bytes(raw.ljust(8, b"\0"), "little")


def _allocate_output(param: ParamInfo, like_torch: Any) -> Any:
    if param.shape is None or any(s is None or s < 0 for s in param.shape) or not param.dtype:
        raise ValueError(f"cannot allocate output '{param.name}' in a return-style call: its shape or dtype is "
                         "not static; pass all arguments (in-place call) instead")
    dt = dtypes.from_meta(param.dtype.meta)
    if like_torch is not None and dt.torch:
        import torch

        return torch.empty(param.shape, dtype=getattr(torch, dt.torch))
    return np.empty(param.shape, dtype=dtypes.numpy_carrier(dt))


def _full_args(info: ArtifactInfo, args: tuple[Any, ...]) -> tuple[list[Any], list[Any], bool]:
    params, outs = info.params, info.output_indices
    if not params or len(args) == len(params):
        return list(args), [], False
    if outs and len(args) == len(params) - len(outs):
        like_torch = next((a for a in args if _is_torch(a)), None)
        it = iter(args)
        full, allocated = [], []
        for i, p in enumerate(params):
            if i in outs:
                allocated.append(_allocate_output(p, like_torch))
                full.append(allocated[-1])
            else:
                full.append(next(it))
        return full, allocated, True
    names = ", ".join(p.name for p in params)
    raise TypeError(f"program '{info.root.name}' takes {len(params)} arguments ({names}) for an in-place call"
                    + (f" or {len(params) - len(outs)} inputs for a return-style call" if outs else "")
                    + f", got {len(args)}")


def full_call_args(info: ArtifactInfo, args: tuple[Any, ...]) -> tuple[list[Any], bool]:
    """Every parameter's argument of a call with ``args`` (a return-style call gets its outputs allocated,
    like its inputs: torch when an input is torch) and whether the call was return-style; TypeError on a bad count."""
    full, _, return_style = _full_args(info, args)
    return full, return_style


def bind_args(info: ArtifactInfo, args: tuple[Any, ...]) -> BoundCall:
    """Pack user arguments: tensors in parameter order, then scalars (separate index pools)."""
    full, outputs, return_style = _full_args(info, args)
    params = info.params
    n_t = sum(1 for a in full if _is_tensor(a))
    tensors = ctypes.create_string_buffer(128 * max(1, n_t))
    scalars = (ctypes.c_uint64 * max(1, len(full) - n_t))()
    keep: list[Any] = []
    t = s = 0
    for i, a in enumerate(full):
        param = params[i] if i < len(params) else None
        if _is_tensor(a):
            addr, shape, dt, owner = _tensor_facts(i, a, param)
            if not isinstance(a, np.ndarray):
                _check_param(i, shape, dt, param)
            _pack(tensors, t, addr, shape, dt, i)
            keep.append(owner)
            t += 1
        else:
            scalars[s] = scalar_bits(i, a, param)
            s += 1
    return BoundCall(tensors, t, scalars, s, outputs, return_style, keep)


@dataclass(frozen=True, slots=True)
class CallPlan:
    """How an in-place call of writable C-contiguous numpy arrays (no scalars) was packed.

    A later call whose arguments are numpy arrays of the same shapes, dtypes and flags packs the same
    bytes but for the addresses: :func:`bind_planned` copies ``template`` and writes only those.
    """

    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[np.dtype, ...]
    template: bytes


def plan_of(args: tuple[Any, ...], bound: BoundCall) -> CallPlan | None:
    """The plan of a call :func:`bind_args` just packed, or None when it is not of the planned kind."""
    if bound.return_style or bound.num_scalars or bound.num_tensors != len(args) or not args:
        return None
    for a in args:
        if type(a) is not np.ndarray or not (a.flags.c_contiguous and a.flags.writeable) or not a.size:
            return None
    return CallPlan(tuple(a.shape for a in args), tuple(a.dtype for a in args), bytes(bound.tensors))


def bind_planned(plan: CallPlan, args: tuple[Any, ...]) -> BoundCall | None:
    """Pack ``args`` from ``plan`` (under a microsecond per array), or None if they do not fit it.

    ``ctypes.c_char.from_buffer`` refuses read-only, non-C-contiguous and empty arrays, so it is the
    flags check as well as the address.
    """
    if len(args) != len(plan.shapes):
        return None
    buf = (ctypes.c_char * len(plan.template)).from_buffer_copy(plan.template)
    pack, at = _ADDRESS.pack_into, _ADDRESS_OF
    try:
        for k, a in enumerate(args):
            if type(a) is not np.ndarray or a.shape != plan.shapes[k] or a.dtype != plan.dtypes[k]:
                return None
            pack(buf, k * 128, at(a))
    except (TypeError, ValueError, BufferError):
        return None
    return BoundCall(buf, len(args), _NO_SCALARS, 0, [], False, list(args))


def _address_of(a: np.ndarray) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(a))


_ADDRESS_OF = _address_of
_ADDRESS = struct.Struct("<Q")  # ChipTensor.buffer_addr, the first field
_NO_SCALARS = (ctypes.c_uint64 * 1)()


def artifact_of(compiled: Any) -> ArtifactInfo:
    """The parsed artifact of a CompiledProgram, a ChipCallable, an artifact path, or an ArtifactInfo."""
    if isinstance(compiled, ArtifactInfo):
        return compiled
    if isinstance(getattr(compiled, "info", None), ArtifactInfo):  # a built ChipCallable
        return compiled.info
    from pypto.toolchain.cachefs import dir_lock

    path = Path(os.fspath(getattr(compiled, "output_dir", compiled)))
    with dir_lock(path, shared=True, create=False):  # not while a compile rewrites the dir
        return load_artifact(path)


def platform_of(compiled: Any, info: ArtifactInfo) -> str:
    """The platform an artifact was compiled for (attribute, then metadata, then the default)."""
    return getattr(compiled, "platform", None) or info.platform or "a2a3sim"
