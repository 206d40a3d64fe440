"""``ir.op.distributed.system_ops``: stand-ins; pypto builds comm ops from the pld DSL in @pl.jit kernels (pypto.language.distributed), not as IR calls."""

from pypto.ir.op._standin import stand_in

_WHY = "pypto builds comm ops from the pld DSL in @pl.jit kernels (pypto.language.distributed), not as IR calls"
_INSTEAD = "write the kernel with pld.* (import pypto.language.distributed as pld)"

defer_wait = stand_in("ir.op.distributed.system_ops.defer_wait", _WHY, _INSTEAD)
get_comm_ctx = stand_in("ir.op.distributed.system_ops.get_comm_ctx", _WHY, _INSTEAD)
notify = stand_in("ir.op.distributed.system_ops.notify", _WHY, _INSTEAD)
nranks = stand_in("ir.op.distributed.system_ops.nranks", _WHY, _INSTEAD)
rank = stand_in("ir.op.distributed.system_ops.rank", _WHY, _INSTEAD)
wait = stand_in("ir.op.distributed.system_ops.wait", _WHY, _INSTEAD)
world_size = stand_in("ir.op.distributed.system_ops.world_size", _WHY, _INSTEAD)

__all__ = ["defer_wait", "get_comm_ctx", "notify", "nranks", "rank", "wait", "world_size"]
