"""``OpStub``: what ``pl.tile.load`` & co resolve to outside a function body (the parser turns a call of
one into the registry op), and the cross-core pipe names shared by ``pl`` and ``pl.system``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.errors import UserError

# pl.<name> / pl.system.<name> -> op: explicit cross-core pipes and barriers, lowered through GM
# (passes/_pipes.py, passes/_barrier_split.py)
PIPE_OPS: dict[str, str] = {
    **{n: f"tile.{n}" for n in ("tpush_to_aic", "tpush_to_aiv", "tpop_from_aic", "tpop_from_aiv")},
    **{n: f"system.{n}" for n in ("tfree_to_aic", "tfree_to_aiv", "aic_initialize_pipe", "aiv_initialize_pipe",
                                  "reserve_buffer", "import_peer_buffer", "syncall")},
}


@dataclass(frozen=True, slots=True)
class OpStub:
    """``pl.tile.load`` & co: a registry op; ``convenience`` = called through a promoted name."""

    op: str
    convenience: bool = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise UserError(f"pl.{self.op}() can only be used inside a @pl.function body "
                        "(function bodies are parsed, not executed)")
