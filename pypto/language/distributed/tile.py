"""``pld.tile``: tile-level remote memory access (load a peer's window slice, store into it)."""

from pypto.language.distributed._markers import KERNEL, construct

remote_load = construct("pld.tile.remote_load", KERNEL)
remote_store = construct("pld.tile.remote_store", KERNEL)

__all__ = ["remote_load", "remote_store"]
