"""Upstream's ``pypto.runtime.builtins.collectives.barrier``: no rank continues before every rank has arrived.

Floor: the runtime's; no imports. Written as ``pld.tensor.barrier(...)``; lowered to the ``rt_comm_barrier`` comm task.
"""
