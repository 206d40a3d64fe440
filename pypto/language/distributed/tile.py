"""``pld.tile``: tile-level remote memory access (load a peer's window slice, store into it).

Tile-level ``get`` / ``put`` are stand-ins: UnsupportedFeatureError on use.
"""

from pypto.language.distributed._markers import KERNEL, construct
from pypto.language.unsupported import Unsupported

remote_load = construct("pld.tile.remote_load", KERNEL)
remote_store = construct("pld.tile.remote_store", KERNEL)
get = Unsupported("pld.tile.get", "distributed")
put = Unsupported("pld.tile.put", "distributed")

__all__ = ["get", "put", "remote_load", "remote_store"]
