"""``pld.tile.*`` at upstream's module path."""

from pypto.language.distributed.tile import get, put, remote_load, remote_store

__all__ = ["get", "put", "remote_load", "remote_store"]
