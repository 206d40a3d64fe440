"""``pld.tensor.*`` at upstream's module path."""

from pypto.language.distributed.tensor import (
    all_to_all,
    all_to_all_v,
    allgather,
    alloc_window_buffer,
    allreduce,
    barrier,
    broadcast,
    get,
    put,
    reduce_scatter,
    remote_store,
    window,
)

__all__ = ["all_to_all", "all_to_all_v", "allgather", "alloc_window_buffer", "allreduce", "barrier", "broadcast",
           "get", "put", "reduce_scatter", "remote_store", "window"]
