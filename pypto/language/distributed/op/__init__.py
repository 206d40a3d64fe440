"""Upstream's ``pypto.language.distributed.op``: the pld constructs, by category (the same objects as pld's).

Floor: ``language``.
"""

from pypto.language.distributed import system, tensor, tile
from pypto.language.distributed.system import get_comm_ctx, nranks, rank, world_size
from pypto.language.distributed.tensor import alloc_window_buffer, window
from pypto.language.distributed.tile import remote_load, remote_store

__all__ = ["alloc_window_buffer", "get_comm_ctx", "nranks", "rank", "remote_load", "remote_store", "system",
           "tensor", "tile", "window", "world_size"]
