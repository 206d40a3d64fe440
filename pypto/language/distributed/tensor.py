"""``pld.tensor``: whole-tensor comm ops (barrier, put/get), the collectives, and window buffers.

``alloc_window_buffer`` / ``window`` belong to the ``@pl.jit.host`` orchestrator (also ``pld.<name>``).
``remote_store`` of a whole tensor and ``all_to_all_v`` are stand-ins: UnsupportedFeatureError on use.
"""

from pypto.language.distributed._markers import HOST, KERNEL, construct
from pypto.language.unsupported import Unsupported

barrier = construct("pld.tensor.barrier", KERNEL)
put = construct("pld.tensor.put", KERNEL)
get = construct("pld.tensor.get", KERNEL)
# collectives (docs 01-collectives): recognized by name, rejected with a located error when compiled
allreduce = construct("pld.tensor.allreduce", KERNEL)
allgather = construct("pld.tensor.allgather", KERNEL)
reduce_scatter = construct("pld.tensor.reduce_scatter", KERNEL)
broadcast = construct("pld.tensor.broadcast", KERNEL)
all_to_all = construct("pld.tensor.all_to_all", KERNEL)
alloc_window_buffer = construct("pld.alloc_window_buffer", HOST)
window = construct("pld.window", HOST)
remote_store = Unsupported("pld.tensor.remote_store", "distributed")
all_to_all_v = Unsupported("pld.tensor.all_to_all_v", "distributed")

__all__ = ["all_to_all", "all_to_all_v", "allgather", "alloc_window_buffer", "allreduce", "barrier", "broadcast",
           "get", "put", "reduce_scatter", "remote_store", "window"]
