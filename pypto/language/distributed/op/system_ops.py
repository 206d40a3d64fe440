"""``pld.system.*`` at upstream's module path."""

from pypto.language.distributed.system import defer_wait, get_comm_ctx, notify, nranks, rank, wait, world_size

__all__ = ["defer_wait", "get_comm_ctx", "notify", "nranks", "rank", "wait", "world_size"]
