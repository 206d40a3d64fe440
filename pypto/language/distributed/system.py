"""``pld.system``: signal primitives (notify a peer's cell, wait on a local cell) and the rank queries.

``world_size`` belongs to the ``@pl.jit.host`` orchestrator; ``get_comm_ctx`` / ``rank`` / ``nranks`` to
kernels. They are also ``pld.<name>`` (the same objects).
"""

from pypto.language.distributed._markers import HOST, KERNEL, construct

notify = construct("pld.system.notify", KERNEL)
wait = construct("pld.system.wait", KERNEL)
defer_wait = construct("pld.system.defer_wait", KERNEL)
world_size = construct("pld.world_size", HOST)
get_comm_ctx = construct("pld.get_comm_ctx", KERNEL)
rank = construct("pld.rank", KERNEL)
nranks = construct("pld.nranks", KERNEL)

__all__ = ["defer_wait", "get_comm_ctx", "notify", "nranks", "rank", "wait", "world_size"]
