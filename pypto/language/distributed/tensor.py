"""``pld.tensor``: whole-tensor comm ops (barrier, put/get) and the collectives."""

from pypto.language.distributed._markers import KERNEL, construct

barrier = construct("pld.tensor.barrier", KERNEL)
put = construct("pld.tensor.put", KERNEL)
get = construct("pld.tensor.get", KERNEL)
# collectives (docs 01-collectives): recognized by name, rejected with a located error when compiled
allreduce = construct("pld.tensor.allreduce", KERNEL)
allgather = construct("pld.tensor.allgather", KERNEL)
reduce_scatter = construct("pld.tensor.reduce_scatter", KERNEL)
broadcast = construct("pld.tensor.broadcast", KERNEL)
all_to_all = construct("pld.tensor.all_to_all", KERNEL)

__all__ = ["all_to_all", "allgather", "allreduce", "barrier", "broadcast", "get", "put", "reduce_scatter"]
