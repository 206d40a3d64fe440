"""``@pl.jit.host`` and the distributed compile of a ``@pl.program`` (``ir.compile(distributed_config=)``).

Both end in :func:`_finish`: the host function's control-plane text, one chip sub-build per
chip-level program under ``next_levels/<name>/``, and ``distributed_meta.json``. A chip program is
compiled once from the sample arguments of its first dispatch; its scalar parameters (the rank) stay
runtime parameters, so the same build serves every rank and any rank count.
"""

from __future__ import annotations

import ast
import functools
import inspect
from pathlib import Path
from typing import Any

from pypto.errors import UserError
from pypto.ir.enums import Level
from pypto.ir.function import Program
from pypto.jit.distributed.build import (
    NEXT_LEVELS,
    ParamSpec,
    default_output_dir,
    ir_params,
    program_parts,
    read_meta,
    record_samples,
    sample_value,
    write_artifact,
)
from pypto.jit.distributed.plan import Phase
from pypto.jit.distributed.program import DistributedCompiledProgram
from pypto.language.distributed.host_frontend import HostFrontend, HostLowering
from pypto.language.source import Source


class HostFunction:
    """A ``@pl.jit.host`` orchestrator: ``f.compile(*samples, config=RunConfig(distributed_config=...))``
    returns a DistributedCompiledProgram; ``f(*args, config=...)`` compiles (cached) and runs it."""

    __pypto_jit__ = True

    def __init__(self, func: Any) -> None:
        self.func = func
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self._sig = inspect.signature(func)
        self._lowering: HostLowering | None = None
        self._fdef: ast.FunctionDef | None = None
        self._cache: dict[tuple, DistributedCompiledProgram] = {}

    def __repr__(self) -> str:
        return f"HostFunction('{self.__name__}')"

    def lowering(self) -> HostLowering:
        if self._lowering is None:
            source = Source.from_object(self.func)
            fdef = source.parse().body[0]
            assert isinstance(fdef, ast.FunctionDef)
            env = dict(self.func.__globals__)
            env.update(inspect.getclosurevars(self.func).nonlocals)
            self._fdef = fdef
            self._lowering = HostFrontend(source, env).lower(fdef)
        return self._lowering

    def compile(self, *args: Any, config: Any = None, **kwargs: Any) -> DistributedCompiledProgram:
        dist = getattr(config, "distributed_config", None)
        if dist is None:
            raise UserError(f"@pl.jit.host '{self.__name__}' is a distributed program: compile it with "
                            "config=RunConfig(distributed_config=DistributedConfig(device_ids=[...]))")
        bound = _bind(self, args, kwargs)
        key = (tuple(_arg_key(v) for v in bound), repr(dist), config.platform)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._compile(bound, config, dist)
        return hit

    def _compile(self, samples: list[Any], config: Any, dist: Any) -> DistributedCompiledProgram:
        from pypto.artifact.names import check_symbol
        from pypto.jit.specialize import check_name

        host_name = check_name(self, "@pl.jit.host function name")
        lowering = self.lowering()
        for callee in lowering.chip_calls:
            check_symbol(callee, "chip-level callee name")  # it names the sub-build's directory
        out = Path(config.save_kernels_dir) if getattr(config, "save_kernels_dir", None) else \
            default_output_dir(f"_jit_{host_name}")
        rec = record_samples(lowering, samples, len(dist.device_ids))
        for name, jf in lowering.chip_calls.items():
            first = next(d for s in rec.steps if isinstance(s, Phase) for d in s.dispatches if d.program == name)
            _compile_jit_chip(jf, [sample_value(a) for a in first.args], config, out / NEXT_LEVELS / name)
        params = [_param_spec(self._sig, n, v) for n, v in zip(lowering.params, samples, strict=True)]
        write_artifact(out, lowering, params, config.platform, dist, list(lowering.chip_calls), {}, 0)
        return DistributedCompiledProgram(out, read_meta(out))

    def __call__(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        compiled = self.compile(*args, config=config, **kwargs)
        return compiled(*_bind(self, args, kwargs), config=config)


def _bind(fn: HostFunction, args: tuple, kwargs: dict[str, Any]) -> list[Any]:
    try:
        bound = fn._sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"@pl.jit.host function '{fn.__name__}': {exc}") from None
    bound.apply_defaults()
    return list(bound.arguments.values())


def _arg_key(v: Any) -> Any:
    shape = getattr(v, "shape", None)
    return (tuple(shape), str(getattr(v, "dtype", ""))) if shape is not None else repr(v)


def _param_spec(sig: inspect.Signature, name: str, value: Any) -> ParamSpec:
    from pypto.runtime import dtypes

    ann = sig.parameters[name].annotation
    text = ann if isinstance(ann, str) else repr(ann)
    kind = getattr(ann, "kind", "")
    direction = "Out" if kind == "Out" or "Out[" in text else "InOut" if kind == "InOut" else "In"
    if not hasattr(value, "shape"):
        return ParamSpec(name, "In", None, type(value).__name__)
    from_torch = type(value).__module__.split(".")[0] == "torch"  # torch is an extra: numpy needs none of it
    dt = dtypes.from_torch(value.dtype) if from_torch else dtypes.coerce(value.dtype)
    return ParamSpec(name, direction, tuple(int(s) for s in value.shape), dt.meta.upper())


def _compile_jit_chip(jf: Any, samples: list[Any], config: Any, out: Path) -> Any:
    """Compile the chip-level ``@pl.jit`` ``jf`` into ``out``; scalars stay runtime parameters."""
    from pypto.jit.meta import is_tensor_like, tensor_meta

    try:
        bound = jf._sig.bind(*samples)
    except TypeError as exc:
        raise TypeError(f"host dispatch of '{jf.__name__}': {exc}") from None
    metas = {n: tensor_meta(jf.__name__, n, v) for n, v in bound.arguments.items() if is_tensor_like(v)}
    return jf.compile_into(metas, config, out)


# -- ir.compile(program, distributed_config=...) -----------------------------------------------------
def compile_program(program: Program, distributed_config: Any, *, output_dir: Any = None, platform: str | None = None,
                    **kwargs: Any) -> DistributedCompiledProgram:
    """The distributed compile of a ``@pl.program`` with one HOST Orchestrator (see the module docstring)."""
    from pypto.artifact.names import check_program
    from pypto.driver import compile as ir_compile

    check_program(program)  # every name that becomes a directory or a file, before any is made
    host, subs, chips = program_parts(program)
    plat = platform or "a2a3sim"
    out = Path(output_dir) if output_dir is not None else default_output_dir(program.name)
    out.mkdir(parents=True, exist_ok=True)
    for name, chip in chips.items():
        ir_compile(chip, output_dir=out / NEXT_LEVELS / name, platform=plat, **kwargs)
    lowering = HostLowering(host.name, [p.name for p in host.params], host.attrs["host_source"],
                            dict.fromkeys(chips), list(host.attrs.get("host_callbacks", ())))
    write_artifact(out, lowering, ir_params(host), plat, distributed_config, list(chips),
                   {s.name: s.requires_runtime_binding for s in subs}, len(host.return_types))
    return DistributedCompiledProgram(out, read_meta(out), program=program)


def _driver_compile() -> Any:
    from pypto.driver import compile as driver_compile

    return driver_compile


@functools.wraps(_driver_compile())
def compile(program: Any, *args: Any, distributed_config: Any = None, **kwargs: Any) -> Any:  # noqa: A001
    """``ir.compile``: with ``distributed_config`` a DistributedCompiledProgram, otherwise the driver's compile."""
    if distributed_config is None:
        hosts = [f for f in getattr(program, "functions", ()) if f.level is Level.HOST]
        if hosts:
            raise UserError(f"program '{program.name}' has HOST-level functions ({', '.join(f.name for f in hosts)}): "
                            "it is a distributed program", hosts[0].span,
                            "compile it with ir.compile(..., distributed_config=DistributedConfig(device_ids=[...]))")
        return _driver_compile()(program, *args, **kwargs)
    if not isinstance(program, Program):
        raise TypeError(f"ir.compile() expects an ir.Program (a @pl.program class), got {type(program).__name__}")
    return compile_program(program, distributed_config, **kwargs)
