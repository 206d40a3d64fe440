"""``pld.system``: signal primitives (notify a peer's cell, wait on a local cell)."""

from pypto.language.distributed._markers import KERNEL, construct

notify = construct("pld.system.notify", KERNEL)
wait = construct("pld.system.wait", KERNEL)
defer_wait = construct("pld.system.defer_wait", KERNEL)

__all__ = ["defer_wait", "notify", "wait"]
