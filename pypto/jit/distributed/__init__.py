"""Distributed (HOST-level) programs: compile a host orchestrator and its chip-level programs, run ranks.

- :mod:`.plan`: the ``__rt__`` object the generated host function runs against; it records window
  buffers and per-rank dispatches into phases.
- :mod:`.build`: the artifact (``orchestration/host_orch.py``, ``next_levels/<program>/`` one chip
  sub-build per chip-level program, ``distributed_meta.json``).
- :mod:`.program`: :class:`DistributedCompiledProgram`; :mod:`.worker`: :class:`DistributedWorker`
  (rank processes through :mod:`pypto.runtime.distributed`).
- :mod:`.host`: ``@pl.jit.host``.

Floor: ``jit`` (above the driver and the runtime; it compiles and runs).
"""
