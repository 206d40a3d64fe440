"""Upstream's ``pypto.runtime.builtins.collectives.reduce_scatter``: rank r ends with block r of the reduction of all ranks' buffers.

Floor: the runtime's; no imports. Written as ``pld.tensor.reduce_scatter(...)``; lowered to ``rt_comm_reduce_scatter`` comm tasks.
"""
