"""The ``pl.tensor.*`` / ``pl.tile.*`` namespaces (generated from the op registry) and the top-level
op names: unified dispatchers (``pl.add`` picks ``tensor.add``/``tile.add``/``tile.adds`` by operand
type) and promoted tile/tensor functions (``pl.load`` is ``pl.tile.load``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.errors import UserError
from pypto.language.stubs import PIPE_OPS, OpStub


@dataclass(frozen=True, slots=True)
class UnifiedStub:
    """``pl.add`` & co: dispatched on the first operand (Tensor -> tensor., Tile -> tile., Scalar)."""

    name: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise UserError(f"pl.{self.name}() can only be used inside a @pl.function body "
                        "(function bodies are parsed, not executed)")


class OpNamespace:
    """``pl.tensor`` / ``pl.tile``: attribute access looks the op up in the registry."""

    def __init__(self, ns: str) -> None:
        self._ns = ns

    def __getattr__(self, name: str) -> Any:
        from pypto.ir.ops.registry import has_op

        if name.startswith("__"):
            raise AttributeError(name)
        if self._ns == "tile" and name == "MaskPattern":
            from pypto.ir.enums import MaskPattern

            return MaskPattern
        if name in _ALIASES.get(self._ns, {}):
            return OpStub(_ALIASES[self._ns][name], convenience=True)
        if not has_op(f"{self._ns}.{name}"):
            from pypto.language.unsupported import lookup

            missing = lookup(self._ns, name)  # an upstream op ptoas 0.1.1 cannot express
            if missing is None:
                raise AttributeError(f"pl.{self._ns} has no op '{name}'")
            return missing
        return OpStub(f"{self._ns}.{name}", convenience=self._ns == "tile" and name in _TILE_CONVENIENT)

    def __dir__(self) -> list[str]:
        from pypto.ir.ops.registry import all_ops
        from pypto.language.unsupported import names

        ops = {o.short for o in all_ops().values() if o.namespace == self._ns}
        extra = set(names(self._ns)) if self._ns in ("tile", "tensor") else set()
        enums = {"MaskPattern"} if self._ns == "tile" else set()
        return sorted(ops | set(_ALIASES.get(self._ns, {})) | extra | enums)

    def __repr__(self) -> str:
        return f"pl.{self._ns}"


tensor = OpNamespace("tensor")
tile = OpNamespace("tile")
array = OpNamespace("array")
comm = OpNamespace("comm")  # built-in comm tasks of a split distributed kernel, as pass dumps print them

# pl.tile.X called with the DSL's short form (e.g. 3-arg load) is normalised like pl.X
_TILE_CONVENIENT = frozenset({"load"})
# upstream spellings of existing ops
_ALIASES = {"tile": {"create_tile": "tile.create", "arange": "tile.ci", "gather_mask": "tile.gather"},
            "tensor": {"create_tensor": "tensor.create", "arange": "tensor.ci", "create_l1": "tensor.create"}}

PROMOTED: dict[str, str] = {
    "load": "tile.load", "store": "tile.store", "move": "tile.move", "create_tile": "tile.create",
    "matmul_bias": "tile.matmul_bias", "alloc": "tile.alloc", "create_tensor": "tensor.create",
    "dim": "tensor.dim", "get_block_idx": "tile.get_block_idx", "get_block_num": "tile.get_block_num",
    "get_subblock_idx": "tile.get_subblock_idx", "addc": "tile.addc", "subc": "tile.subc", "addsc": "tile.addsc",
    "subsc": "tile.subsc", "prelu": "tile.prelu", "arange": "tensor.ci", "batch_matmul": "tile.batch_matmul",
    "expand_clone": "tensor.expand_clone", "gather_row": "tensor.gather_row", "paged_gather": "tensor.paged_gather",
    "create_l1": "tensor.create", "reinterpret_view": "tile.reinterpret_view", "mscatter": "tile.mscatter",
    "random": "tensor.random",
    **PIPE_OPS,
}

UNIFIED_EXTRA = ("xors", "part_add", "part_max", "part_min", "cast", "matmul", "matmul_acc", "slice", "assemble", "concat", "read", "write",
                 "reshape", "transpose", "fillpad", "fillpad_expand", "fmod", "fmods", "expands", "full", "sort32", "mrgsort",
                 "gather", "set_validshape", "scatter", "scatter_update")


def unified_names() -> tuple[str, ...]:
    """Every unified dispatcher name (op families shared by both namespaces)."""
    from pypto.ir.ops import common

    fams = (common.BINARY, common.SCALAR, common.UNARY, common.ROW_REDUCE, common.COL_REDUCE, common.ARG_REDUCE,
            common.ROW_EXPAND, common.COL_EXPAND, UNIFIED_EXTRA)
    return tuple(n for fam in fams for n in fam) + ("max", "min")


def top_level(name: str) -> OpStub | UnifiedStub | None:
    """The stub behind a top-level ``pl.<name>``, or None."""
    if name in PROMOTED:
        return OpStub(PROMOTED[name], convenience=True)
    if name in unified_names():
        return UnifiedStub(name)
    return None
