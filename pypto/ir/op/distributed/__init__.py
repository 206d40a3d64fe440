"""``ir.op.distributed``: the comm-op builders of upstream's IR. pypto builds comm ops from the pld DSL
(:mod:`pypto.language.distributed`), not as IR calls, so each name raises UnsupportedFeatureError.

Floor: ``ir``.
"""

from pypto.ir.op.distributed import system_ops, tensor_ops, tile_ops
from pypto.ir.op.distributed.system_ops import get_comm_ctx, nranks, rank, world_size
from pypto.ir.op.distributed.tensor_ops import (
    allgather,
    alloc_window_buffer,
    allreduce,
    barrier,
    broadcast,
    get,
    put,
    reduce_scatter,
    window,
)
from pypto.ir.op.distributed.tile_ops import remote_load

__all__ = ["allgather", "alloc_window_buffer", "allreduce", "barrier", "broadcast", "get", "get_comm_ctx", "nranks",
           "put", "rank", "reduce_scatter", "remote_load", "system_ops", "tensor_ops", "tile_ops", "window",
           "world_size"]
