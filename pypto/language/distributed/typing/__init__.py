"""Upstream's ``pypto.language.distributed.typing``: ``pld.DistributedTensor`` and ``pld.CommCtx``.

Floor: ``language`` (imports ``ir``).
"""

from pypto.language.distributed.typing.comm_ctx import CommCtx, CommCtxType
from pypto.language.distributed.typing.distributed_tensor import DistributedTensor

__all__ = ["CommCtx", "CommCtxType", "DistributedTensor"]
