"""``ir.op.distributed.tensor_ops``: stand-ins; pypto builds comm ops from the pld DSL in @pl.jit kernels (pypto.language.distributed), not as IR calls."""

from pypto.ir.op._standin import stand_in

_WHY = "pypto builds comm ops from the pld DSL in @pl.jit kernels (pypto.language.distributed), not as IR calls"
_INSTEAD = "write the kernel with pld.* (import pypto.language.distributed as pld)"

all_to_all = stand_in("ir.op.distributed.tensor_ops.all_to_all", _WHY, _INSTEAD)
all_to_all_v = stand_in("ir.op.distributed.tensor_ops.all_to_all_v", _WHY, _INSTEAD)
allgather = stand_in("ir.op.distributed.tensor_ops.allgather", _WHY, _INSTEAD)
alloc_window_buffer = stand_in("ir.op.distributed.tensor_ops.alloc_window_buffer", _WHY, _INSTEAD)
allreduce = stand_in("ir.op.distributed.tensor_ops.allreduce", _WHY, _INSTEAD)
barrier = stand_in("ir.op.distributed.tensor_ops.barrier", _WHY, _INSTEAD)
broadcast = stand_in("ir.op.distributed.tensor_ops.broadcast", _WHY, _INSTEAD)
get = stand_in("ir.op.distributed.tensor_ops.get", _WHY, _INSTEAD)
put = stand_in("ir.op.distributed.tensor_ops.put", _WHY, _INSTEAD)
reduce_scatter = stand_in("ir.op.distributed.tensor_ops.reduce_scatter", _WHY, _INSTEAD)
remote_store = stand_in("ir.op.distributed.tensor_ops.remote_store", _WHY, _INSTEAD)
window = stand_in("ir.op.distributed.tensor_ops.window", _WHY, _INSTEAD)

__all__ = ["all_to_all", "all_to_all_v", "allgather", "alloc_window_buffer", "allreduce", "barrier", "broadcast", "get", "put", "reduce_scatter", "remote_store", "window"]
