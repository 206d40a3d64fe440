"""Upstream's ``pypto.runtime.builtins.collectives.all_to_all``: rank r sends its block j to rank j and receives block r of every rank.

Floor: the runtime's; no imports. Written as ``pld.tensor.all_to_all(...)``; lowered to ``rt_comm_all_to_all`` comm tasks.
"""
