"""Upstream ``pypto.language`` names that the pinned ptoas 0.1.1 toolchain cannot express.

Each name exists (so programs written for upstream import and define cleanly), and using it in a
DSL function is a compile-time ``UnsupportedFeatureError`` that names the construct, says why
ptoas 0.1.1 cannot express it, and what to write instead. Calling one outside a DSL body raises the
same error. The table is data; ``pl``, ``pl.tile``, ``pl.tensor`` and the ``pl.system`` /
``pl.prefetch`` / ``pl.parser`` namespaces fall back to it for names they do not implement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.errors import UnsupportedFeatureError
from pypto.language.stubs import PIPE_OPS, OpStub
from pypto.span import Span

_NO_INSN = "ptoas 0.1.1 has no instruction for it"
_NO_CODEGEN = "ptoas 0.1.1 has the instruction, but pypto's 0.1.1 codegen and CPU simulator do not implement it yet"
_PIPES = "ptoas 0.1.1 has no cross-core pipe (tpush/tpop/tfree) instructions"
_HOST = "compute it on the host or in the orchestration and pass the result in"

# reason key -> (why, what to do instead); names below point at a key
_REASONS: dict[str, tuple[str, str]] = {
    "gemv": (_NO_INSN + " (tgemv arrived after 0.1.1)", "use pl.matmul with a [1, K] left operand"),
    "mx": ("ptoas 0.1.1 cannot lower MX (scaled fp8/fp4) matmuls", "use pl.matmul on f16 operands"),
    "batch": ("ptoas 0.1.1 has no batched matmul", "loop over the batch with pl.range and call pl.matmul"),
    "tri": (_NO_INSN + " (ttri)", "build the mask on the host and load it"),
    "part_mul": (_NO_INSN + " (tpartmul)", "use pl.mul on equally shaped tiles"),
    "views": ("pypto reinterprets tiles only (pl.tile.reinterpret_view, a pto.treshape); a GM tensor view "
              "of another dtype needs a typed view ptoas 0.1.1 does not have",
              "load the tensor into a tile and call pl.reinterpret_view on the tile"),
    "gather_x": (_NO_INSN + " for this gather/scatter form", "index on the host or in the orchestration"),
    "lrelu": ("ptoas 0.1.1 accepts pto.tlrelu but aborts while lowering it",
              "write pl.maximum(x, pl.muls(x, alpha)) for 0 < alpha < 1"),
    "gather_row": ("ptoas 0.1.1 has no sub-tile view to load a GM row into a slot of a tile",
                   "use the tensor form pl.gather_row on a pl.create_l1 accumulator at the top of the pl.at region"),
    "cmp": ("ptoas 0.1.1 accepts pto.tcmp but lowers it to 'TCMP(pto::CmpMode::EQ)' without operands or mode "
            "(a miscompile), so no predicate mask can be produced", "compute the comparison on the host, or "
            "build it from pl.maximum / pl.minimum / pl.relu arithmetic"),
    "codegen": (_NO_CODEGEN, "express it with the supported elementwise ops, or compute it on the host"),
    "scalar_minmax": ("ptoas 0.1.1 cannot lower scalar min/max (arith.minsi/maxsi) in kernels",
                      "compute the scalar on the host or in the orchestration (pl.min / pl.max there)"),
    "split_aiv": (_PIPES + ", so a region cannot be split across the two AIV lanes",
                  "write the vector work in one pl.at region (it runs on one AIV lane)"),
    "sync": ("pypto's ptoas 0.1.1 codegen inserts the synchronisation it needs; explicit cross-core "
             "barriers and cache maintenance are not expressible", "remove the call"),
    "query": ("the runtime pypto targets with ptoas 0.1.1 has no device-geometry query in kernels",
              "pass the count as a scalar argument"),
    "prefetch": ("ptoas 0.1.1 has no tprefetch instruction", "remove the prefetch; loads are synchronous"),
    "no_dep": ("pl.no_dep markers are not supported by this pypto",
               "list the tensor in pl.at(..., no_dep_args=[t])"),
    "dump_tag": ("selective argument dumps are not supported by the pypto sim runtime",
                 "remove the call (RunConfig dumps are all-or-nothing here)"),
    "tensor_alloc": ("pl.tensor.alloc/view (raw GM allocation and views) are not supported by this pypto",
                     "use pl.create_tensor(...) and pl.slice(...)"),
    "typing": ("this typing helper of upstream PyPTO has no meaning in pypto's DSL",
               "annotate with pl.Scalar[pl.INDEX] / pl.Tile[...] / pl.MemRef(...) instead"),
    "distributed": ("pypto's distributed lowering does not implement this pld form",
                    "move tiles with pld.tile.remote_load / pld.tile.remote_store and signal with "
                    "pld.system.notify / pld.system.wait"),
    "parser": ("upstream's parser internals are not part of pypto's API", "use pl.parse / pl.loads"),
}

_OPS_BOTH = {  # names missing from pl, pl.tile and pl.tensor alike
    "part_mul": "part_mul", "cmp": "cmp",
}
_OPS_TILE_AND_PL = {
    "gemv": "gemv", "gemv_acc": "gemv", "gemv_bias": "gemv", "matmul_mx": "mx", "matmul_mx_acc": "mx",
    "matmul_mx_bias": "mx", "tri": "tri", "lrelu": "lrelu", "cmps": "cmp",
    "sel": "codegen", "sels": "codegen", "gatherb": "codegen", "mgather": "codegen",
    "aiv_shard": "split_aiv", "aic_gather": "split_aiv", "gather_row": "gather_row",
}
_OPS_TENSOR_AND_PL = {"no_dep": "no_dep", "dump_tag": "dump_tag"}
_SYSTEM = {
    **{n: "sync" for n in ("sync_src", "sync_dst", "sync_set", "sync_wait", "set_ffts", "bar_v", "bar_m",
                           "bar_all", "fence", "cacheinvalid", "task_invalid")},
    "available_cluster_count": "query", "available_aiv_count": "query",
}
_PREFETCH = {n: "prefetch" for n in ("async_prefetch", "make_context", "session", "wait")}

PL: dict[str, str] = {
    **_OPS_BOTH, **_OPS_TILE_AND_PL, **_OPS_TENSOR_AND_PL,
    "split_aiv": "split_aiv", "IntLike": "typing", "MemRefType": "typing",
    "PrefetchAsyncContext": "prefetch", "AsyncEvent": "prefetch", "AsyncSession": "prefetch",
}
TILE: dict[str, str] = {
    **_OPS_BOTH, **_OPS_TILE_AND_PL, "batch_matmul_acc": "batch", "scatter_mask": "gather_x",
    "gather_compare": "gather_x", "max": "scalar_minmax", "min": "scalar_minmax",
    "MemRefType": "typing",
}
TENSOR: dict[str, str] = {**_OPS_BOTH, **_OPS_TENSOR_AND_PL, "reinterpret_view": "views", "alloc": "tensor_alloc",
                          "view": "tensor_alloc"}
NAMESPACES: dict[str, dict[str, str]] = {"system": _SYSTEM, "prefetch": _PREFETCH, "parser": {}}
# names of these namespaces that pypto implements: attribute of pypto.language.dsl
IMPLEMENTED: dict[str, dict[str, str]] = {"system": {"task_dummy": "task_dummy", "unsupported": "unsupported"}}


@dataclass(frozen=True, slots=True)
class Unsupported:
    """An upstream name pypto cannot compile for ptoas 0.1.1; any use is an UnsupportedFeatureError."""

    qualname: str  # "pl.tile.gather_mask"
    reason: str

    def error(self, span: Span | None = None) -> UnsupportedFeatureError:
        why, instead = _REASONS[self.reason]
        err = UnsupportedFeatureError(f"{self.qualname} is not supported by pypto with ptoas 0.1.1: {why}",
                                      span, hint=instead)
        err.construct = self.qualname  # type: ignore[attr-defined]  # a @pl.program defers it to compile time
        return err

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error()

    def __getitem__(self, item: Any) -> Any:
        raise self.error()

    def __repr__(self) -> str:
        return f"<{self.qualname}: not supported with ptoas 0.1.1>"


def marker_error(kwargs: dict[str, Any], span: Span) -> UnsupportedFeatureError:
    """The error a printed ``pl.system.unsupported(construct=..., message=..., hint=...)`` stands for."""
    err = UnsupportedFeatureError(str(kwargs.get("message", "")), span, str(kwargs.get("hint", "")) or None)
    err.construct = str(kwargs.get("construct", ""))  # type: ignore[attr-defined]
    return err


class UnsupportedNamespace:
    """``pl.system`` / ``pl.prefetch`` / ``pl.parser``: every upstream name resolves to an Unsupported."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if self._name == "system":
            if attr in PIPE_OPS:
                return OpStub(PIPE_OPS[attr], convenience=True)
            if attr == "AUTO":
                from pypto.ir.ops.pipe_ops import AUTO

                return AUTO
        implemented = IMPLEMENTED.get(self._name, {}).get(attr)
        if implemented is not None:
            from pypto.language import dsl

            return getattr(dsl, implemented)
        table = NAMESPACES[self._name]
        if attr not in table:
            raise AttributeError(f"pl.{self._name} has no attribute '{attr}'")
        return Unsupported(f"pl.{self._name}.{attr}", table[attr])

    def __dir__(self) -> list[str]:
        pipes = (*PIPE_OPS, "AUTO") if self._name == "system" else ()
        return sorted({*NAMESPACES[self._name], *IMPLEMENTED.get(self._name, {}), *pipes})

    def __repr__(self) -> str:
        return f"<pl.{self._name}: not supported with ptoas 0.1.1>"


def lookup(namespace: str, name: str) -> Unsupported | UnsupportedNamespace | None:
    """The stand-in for ``pl.<name>`` (namespace "pl") or ``pl.<namespace>.<name>``, or None."""
    if namespace == "pl" and name in NAMESPACES:
        return UnsupportedNamespace(name)
    table = {"pl": PL, "tile": TILE, "tensor": TENSOR}.get(namespace, {})
    reason = table.get(name)
    if reason is None:
        return None
    return Unsupported(f"pl.{name}" if namespace == "pl" else f"pl.{namespace}.{name}", reason)


def names(namespace: str) -> list[str]:
    """Every stand-in name of ``pl`` ("pl", including the namespaces) / ``pl.tile`` / ``pl.tensor``."""
    table = {"pl": PL, "tile": TILE, "tensor": TENSOR}[namespace]
    return sorted(set(table) | (set(NAMESPACES) if namespace == "pl" else set()))
