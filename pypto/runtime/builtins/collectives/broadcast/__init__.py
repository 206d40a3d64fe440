"""Upstream's ``pypto.runtime.builtins.collectives.broadcast``: every rank ends with the root rank's buffer.

Floor: the runtime's; no imports. Written as ``pld.tensor.broadcast(...)``; lowered to ``rt_comm_broadcast`` comm tasks.
"""
