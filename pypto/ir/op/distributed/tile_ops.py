"""``ir.op.distributed.tile_ops``: stand-ins; pypto builds comm ops from the pld DSL in @pl.jit kernels (pypto.language.distributed), not as IR calls."""

from pypto.ir.op._standin import stand_in

_WHY = "pypto builds comm ops from the pld DSL in @pl.jit kernels (pypto.language.distributed), not as IR calls"
_INSTEAD = "write the kernel with pld.* (import pypto.language.distributed as pld)"

get = stand_in("ir.op.distributed.tile_ops.get", _WHY, _INSTEAD)
put = stand_in("ir.op.distributed.tile_ops.put", _WHY, _INSTEAD)
remote_load = stand_in("ir.op.distributed.tile_ops.remote_load", _WHY, _INSTEAD)
remote_store = stand_in("ir.op.distributed.tile_ops.remote_store", _WHY, _INSTEAD)

__all__ = ["get", "put", "remote_load", "remote_store"]
