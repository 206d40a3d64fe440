"""Upstream's ``pypto.runtime.builtins.collectives``: one package per collective.

Floor: the runtime's; no imports. Upstream keeps a collective's kernel source templates in its
package. Here a collective is a ``pld`` op (``pld.allreduce``, ``pld.allgather``, ...) that the
compiler lowers to a comm task of the simulated runtime (``rt_comm_*``, run on a chip's comm thread,
see "The distributed runtime" in docs/distributed.md); each package says which op and which task it is.
"""
