"""``pld.DistributedTensor[[shape], dtype]``: a tensor parameter bound to a window buffer (visible to peers).

In a kernel it is an ordinary GM tensor (this rank's copy of the window); comm ops require it.
"""

from pypto.language.types import TypeCtor


class _DistributedTensorCtor(TypeCtor):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("Tensor")

    def __repr__(self) -> str:
        return "pld.DistributedTensor"


DistributedTensor = _DistributedTensorCtor()

__all__ = ["DistributedTensor"]
