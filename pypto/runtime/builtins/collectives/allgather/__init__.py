"""Upstream's ``pypto.runtime.builtins.collectives.allgather``: every rank ends with all ranks' blocks, in rank order.

Floor: the runtime's; no imports. Written as ``pld.tensor.allgather(...)``; lowered to ``rt_comm_allgather`` comm tasks.
"""
