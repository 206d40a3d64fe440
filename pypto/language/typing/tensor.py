"""``pl.Tensor[[shape], dtype]``: a global-memory tensor annotation."""

from pypto.language.types import Tensor

__all__ = ["Tensor"]
