"""``pl.jit``: specialize a Python kernel on its sample arguments, compile (cached), dispatch.

Compiles are cached per function in memory (L1) and across processes on disk (L2, see
:mod:`pypto.jit.disk_cache`).
"""

from __future__ import annotations

import hashlib
import inspect
import sys
from typing import Any

import pypto
from pypto.artifact import is_assembled
from pypto.ir.enums import FunctionType
from pypto.ir.function import Program
from pypto.jit import disk_cache
from pypto.jit.meta import TensorMeta, is_tensor_like, tensor_meta
from pypto.jit.signature import RUNTIME  # noqa: F401 (pl.RUNTIME's home for older imports)
from pypto.jit.specialize import check_name, dynamic_axes, rewrite_signature, scalar_literal, source_info

_KIND_TYPE = {
    "orchestration": FunctionType.Orchestration,
    "incore": FunctionType.InCore,
    "inline": FunctionType.Inline,
    "opaque": FunctionType.Opaque,
    "graph": FunctionType.Graph,
}
# RunConfig fields forwarded to ir.compile on the jit path (backend_type is decided by platform)
_FORWARDED = ("strategy", "dump_passes", "dump_ptoas_passes", "diagnostic_phase",
              "disabled_diagnostics", "analyze_auto_scopes_for_deps")


class JITFunction:
    """A ``@pl.jit`` kernel: ``f(*args, config=...)`` runs it, ``f.compile(...)`` stops after compiling."""

    __pypto_jit__ = True  # how layers below recognize a jit kernel without importing this class

    def __init__(self, func: Any, kind: str = "orchestration", *, auto_scope: bool = True,
                 level: Any = None) -> None:
        self.func = func
        self.kind = kind
        self.auto_scope = auto_scope
        self.level = level
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self._cache: dict[tuple, Any] = {}
        self._deps: dict[tuple, Any] = {}
        self._sig = inspect.signature(func)

    def __repr__(self) -> str:
        return f"JITFunction('{self.__name__}', func_type='{self.kind}')"

    # -- specialization -------------------------------------------------------------------------
    def _bind(self, args: tuple, kwargs: dict[str, Any]) -> inspect.BoundArguments:
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"@pl.jit function '{self.__name__}': {exc}") from None
        bound.apply_defaults()
        return bound

    def _specs(self, args: tuple, kwargs: dict[str, Any], signature_ok: bool) -> tuple[dict[str, TensorMeta],
                                                                                    dict[str, Any]]:
        """Tensor metadata and specialized scalars, from sample arguments or (``signature_ok``, nothing
        tensor-like given) from the annotations. Keyword names are checked against the signature first,
        so a compile option passed as a keyword (``compile(skip_ptoas=True)``) is a TypeError."""
        from pypto.jit.signature import is_signature_mode, signature_specs

        try:
            self._sig.bind_partial(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"@pl.jit function '{self.__name__}': {exc}") from None
        if signature_ok and is_signature_mode(args, kwargs):
            return signature_specs(self, kwargs)
        return self._classify(self._bind(args, kwargs))

    def _classify(self, bound: inspect.BoundArguments) -> tuple[dict[str, TensorMeta], dict[str, Any]]:
        metas: dict[str, TensorMeta] = {}
        scalars: dict[str, Any] = {}
        for name, value in bound.arguments.items():
            if value is RUNTIME:
                raise TypeError(f"@pl.jit function '{self.__name__}': parameter '{name}' received pl.RUNTIME, "
                                "which is a compile-time marker; pass a concrete value")
            if is_tensor_like(value):
                metas[name] = tensor_meta(self.__name__, name, value)
            else:
                scalars[name] = scalar_literal(name, value)
        return metas, scalars

    def _source_hash(self) -> str:
        info = source_info(self.func)
        closure = repr(sorted((k, repr(v)) for k, v in _closure_values(self.func).items()))
        return hashlib.sha256((pypto.__version__ + info.text + closure).encode()).hexdigest()[:16]

    def kept_scalars(self, scalars: dict[str, Any]) -> frozenset[str]:
        """The specialized scalars an entry function keeps as parameters: those annotated with a dtype."""
        from pypto.jit.signature import scalar_param_dtype

        return frozenset(n for n in scalars if scalar_param_dtype(self, n) is not None)

    def specialize_function(self, metas: dict[str, TensorMeta], scalars: dict[str, Any],
                            keep: frozenset[str] = frozenset()) -> tuple:
        """This function alone, specialized: (ir.Function, the functions it calls); ``keep``: see rewrite_signature."""
        from pypto.jit.frontend import parse_jit_function

        _install_dep_calls()
        info = source_info(self.func)
        func_type = _KIND_TYPE[self.kind]
        env = {**self.func.__globals__, **_closure_values(self.func), **scalars}
        if func_type is FunctionType.InCore:
            from pypto.jit.comm_kernel import split_at_comm_ops

            info, func_type, env = split_at_comm_ops(info, func_type, env)
        extra = "" if self.auto_scope else ", auto_scope=False"
        if self.level is not None:
            extra += f", level=pl.Level.{self.level.name}"
        decorator = f"@pl.function(type=pl.FunctionType.{func_type.value}{extra})"
        text = rewrite_signature(info, metas, scalars, decorator, keep)
        return parse_jit_function(text, filename=info.filename, line_offset=info.first_line - 1,
                                  col_offset=info.indent, env=env, specialized=frozenset(scalars))

    def specialize_dep(self, metas: dict[str, TensorMeta], scalars: dict[str, Any], variant: int = 0) -> Any:
        """This function as a callee, memoized so equal argument types give one Function object.

        ``variant`` n > 0 names the copy ``<name>_<n>``: a kernel called with different argument
        types in one program needs a distinct name per specialization.
        """
        key = (self._source_hash(), tuple(sorted(metas.items())), tuple(sorted(scalars.items())), variant)
        hit = self._deps.get(key)
        if hit is None:
            func = self.specialize_function(metas, scalars)[0]
            hit = self._deps[key] = func.with_(name=f"{func.name}_{variant}") if variant else func
        return hit

    def specialize(self, metas: dict[str, TensorMeta], scalars: dict[str, Any]) -> Program:
        """The ``_jit_<name>`` program for these sample shapes/dtypes and scalar values."""
        from pypto.ir.callgraph import callee_first

        func, deps = self.specialize_function(metas, scalars, self.kept_scalars(scalars))
        return Program(f"_jit_{check_name(self)}", tuple(callee_first([*deps, func])))

    def _key(self, metas: dict[str, TensorMeta], scalars: dict[str, Any], config: Any) -> tuple:
        """Cache key: source, tensor shapes (``None`` on ``pl.dynamic`` axes), dtypes, scalars, options."""
        opts = tuple((f, repr(getattr(config, f, None))) for f in (*_FORWARDED, "memory_planner", "platform"))
        dyn = dynamic_axes(source_info(self.func), self.func.__globals__)
        shapes = tuple(sorted((name, tuple(None if i in dyn.get(name, ()) else d for i, d in enumerate(m.shape)),
                               m.dtype) for name, m in metas.items()))
        return (self._source_hash(), shapes, tuple(sorted(scalars.items())), opts)

    # -- public API -----------------------------------------------------------------------------
    def compile(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        """Specialize on the sample args and compile; the same key returns the identical object.

        With no positional and no tensor argument, shapes and dtypes come from the ``pl.Tensor[[...],
        dtype]`` annotations and scalars from keywords or defaults (``pl.RUNTIME`` keeps one a runtime
        parameter); the result shares its cache entry with the equivalent sample-argument compile.
        """
        return self._compiled(args, kwargs, config, signature_ok=True)

    def _compiled(self, args: tuple, kwargs: dict[str, Any], config: Any, signature_ok: bool) -> Any:
        from pypto.runtime import RunConfig

        cfg = config or RunConfig()
        metas, scalars = self._specs(args, kwargs, signature_ok)
        key = self._key(metas, scalars, cfg)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        check_name(self)  # it names the cache entry and the output dir: checked before either is made
        _prebuild_core(cfg)  # a fresh cache: the runtime's g++ starts before the DSL is even parsed
        name, disk_key = f"_jit_{self.__name__}", self._disk_key(key, cfg)
        compiled = disk_cache.lookup(name, disk_key, cfg.save_kernels_dir,
                                     lambda: self.specialize(metas, scalars)) if disk_key else None
        if compiled is None:
            compiled = self._compile(metas, scalars, cfg)
            if disk_key and is_assembled(compiled.output_dir):  # ptoas ran
                disk_cache.store(name, disk_key, compiled.output_dir)
        self._cache[key] = compiled
        return compiled

    def _compile(self, metas: dict[str, TensorMeta], scalars: dict[str, Any], cfg: Any) -> Any:
        from pypto.driver import compile as ir_compile

        program = self.specialize(metas, scalars)
        kwargs = _compile_kwargs(cfg)
        if self.kind == "graph" and _no_pass_context():
            from pypto.ir.options import RuntimeKind

            kwargs["runtime"] = RuntimeKind.HOST_BUILD_GRAPH  # a Graph needs the host-built graph runtime
        if kwargs["skip_ptoas"]:
            return ir_compile(program, **kwargs)
        _prebuild_runtime(cfg.platform, kwargs.get("runtime"), getattr(cfg, "dfx_enabled", False))
        from pypto.runtime import build

        build.prebuild_pch(cfg.platform)  # the kernels' precompiled header: verified (or built) while this compiles
        compiled = ir_compile(program, **kwargs)
        build.prebuild_artifact(compiled.output_dir, cfg.platform)  # g++ starts while Python moves on
        return compiled

    def compile_into(self, metas: dict[str, TensorMeta], cfg: Any, output_dir: Any) -> Any:
        """Compile into ``output_dir`` with every scalar parameter kept a runtime value (no cache): the
        chip-level program of a distributed compile (one build serves every rank)."""
        from pypto.driver import compile as ir_compile

        kwargs = _compile_kwargs(cfg)
        kwargs["output_dir"] = output_dir
        return ir_compile(self.specialize(metas, {}), **kwargs)

    def _disk_key(self, key: tuple, cfg: Any) -> str | None:
        """The on-disk cache key, or None when bypassed: turned off, a compile profile asked for, or an
        active PassContext (its options are not part of the key)."""
        context = sys.modules.get("pypto.passes.context")  # not imported: no context can be active
        if getattr(cfg, "compile_profiling", False) or not disk_cache.enabled(cfg) or (
                context is not None and context.PassContext.current() is not None):
            return None
        return disk_cache.entry_key(self, key, cfg)

    def lower(self, *args: Any, config: Any = None, **kwargs: Any) -> Program:
        """Specialize and run the passes only: the post-pass Program; writes nothing, caches nothing.

        Takes sample arguments, or none at all (signature mode, as :meth:`compile`).
        """
        from pypto.driver import lower

        metas, scalars = self._specs(args, kwargs, signature_ok=True)
        planner = getattr(config, "memory_planner", None) if config is not None else None
        return lower(self.specialize(metas, scalars), memory_planner=planner)

    def __call__(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        """Compile (cached) and run on ``config.platform``; returns like CompiledProgram.__call__."""
        compiled = self._compiled(args, kwargs, config, signature_ok=False)
        bound = self._bind(args, kwargs)
        kept = self.kept_scalars(bound.arguments)
        passed = [v for n, v in bound.arguments.items() if is_tensor_like(v) or n in kept]
        return compiled(*passed, config=config)


def _install_dep_calls() -> None:
    """Register the frontend's handler for calls to other jit kernels (idempotent)."""
    from pypto.jit.frontend import dep_call
    from pypto.language.expr_parser import register_call_handler

    register_call_handler(JITFunction, dep_call)


def _no_pass_context() -> bool:
    from pypto.passes.context import PassContext

    return PassContext.current() is None


def _prebuild_core(cfg: Any) -> None:
    """A sim platform's run (from this compile or a disk-cache hit) needs the runtime library."""
    from pypto.runtime import build

    if cfg.platform in build.PLATFORM_FLAGS:
        build.prebuild_core()


def _prebuild_runtime(platform: str, runtime: Any, dfx: bool = False) -> None:
    """On a fresh cache, build the sim runtime library (and for a DFX run its extras) in the background while
    this compile runs."""
    from pypto.runtime import build

    if dfx and platform in build.PLATFORM_FLAGS:
        build.prebuild_extras()

    if runtime is None:
        from pypto.passes.context import PassContext
        from pypto.toolchain.settings import resolve_settings

        ctx = PassContext.current()
        runtime = (ctx.runtime if ctx else None) or getattr(resolve_settings(), "runtime", None)
    if runtime is not None:
        build.prebuild_runtime(platform, str(getattr(runtime, "value", runtime)))


def _compile_kwargs(cfg: Any) -> dict[str, Any]:
    kw: dict[str, Any] = {f: getattr(cfg, f) for f in _FORWARDED if getattr(cfg, f, None) is not None}
    kw["profiling"] = bool(getattr(cfg, "compile_profiling", False))
    kw["platform"] = cfg.platform
    if getattr(cfg, "save_kernels_dir", None):
        kw["output_dir"] = cfg.save_kernels_dir
    if getattr(cfg, "memory_planner", None) is not None:
        kw["memory_planner"] = cfg.memory_planner
    from pypto.toolchain import settings
    from pypto.toolchain.ptoas import find_ptoas

    kw["skip_ptoas"] = find_ptoas(settings.ptoas_root(), settings.cache_dir()) is None
    return kw


class _JITDecorator:
    """``@pl.jit`` / ``@pl.jit(auto_scope=False)`` and the ``.incore/.inline/.opaque/.graph`` kinds."""

    def __call__(self, func: Any = None, *, auto_scope: bool = True) -> Any:
        if func is None:
            return lambda f: JITFunction(f, "orchestration", auto_scope=auto_scope)
        return JITFunction(func, "orchestration", auto_scope=auto_scope)

    def _kind(self, kind: str, func: Any, **opts: Any) -> Any:
        if "level" in opts and opts["level"] is not None and kind != "incore":
            raise TypeError(f"@pl.jit.{kind} does not accept a level= argument")
        if "auto_scope" in opts and kind in ("incore", "opaque"):
            raise TypeError(f"@pl.jit.{kind} does not accept an auto_scope= argument "
                            "(only orchestration-like kernels have runtime scopes)")
        if func is None:
            return lambda f: JITFunction(f, kind, **opts)
        return JITFunction(func, kind, **opts)

    def incore(self, func: Any = None, **opts: Any) -> Any:
        return self._kind("incore", func, **opts)

    def inline(self, func: Any = None, **opts: Any) -> Any:
        return self._kind("inline", func, **opts)

    def opaque(self, func: Any = None, **opts: Any) -> Any:
        return self._kind("opaque", func, **opts)

    def graph(self, func: Any = None, **opts: Any) -> Any:
        return self._kind("graph", func, **opts)

    def host(self, func: Any = None) -> Any:
        """``@pl.jit.host``: a HOST-level (distributed) orchestrator; see :mod:`pypto.jit.distributed`."""
        from pypto.jit.distributed.host import HostFunction

        return HostFunction if func is None else HostFunction(func)


jit = _JITDecorator()


def _closure_values(func: Any) -> dict[str, Any]:
    """The function's free variables bound in enclosing scopes (a kernel made by a factory function
    sees the factory's arguments, as Python code would)."""
    cells = func.__closure__ or ()
    out: dict[str, Any] = {}
    for name, cell in zip(func.__code__.co_freevars, cells, strict=True):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell: the name is not bound yet
            pass
    return out
