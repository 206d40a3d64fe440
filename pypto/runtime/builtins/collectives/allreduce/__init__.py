"""Upstream's ``pypto.runtime.builtins.collectives.allreduce``: every rank ends with the elementwise reduction (Sum, Max, Min, Prod) of all ranks' buffers.

Floor: the runtime's; no imports. Written as ``pld.tensor.allreduce(...)`` in a HOST-level program; the compiler lowers it to the
simulated runtime's ``rt_comm_allreduce`` comm tasks.
"""
