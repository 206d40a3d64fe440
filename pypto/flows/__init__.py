"""Flows that combine compiling and running: the top of the library, below only the CLI.

Floor: above ``driver`` (``ir.compile``), ``jit`` and ``runtime``, which never import each other's
flows. ``harness`` (``run``, ``benchmark``, ``compare``), ``loader`` (a user's ``.py`` file: what
``pypto compile|run FILE[::NAME]`` does), ``pto_runner`` and ``pto_file`` (a hand-written ``.pto``
kernel run without the DSL), ``sweep`` (``pypto sweep``: many jobs fanned out on a process pool or
Dask, with ``sweep_jobs``, ``sweep_task``, ``sweep_exec``, ``sweep_container``, ``sweep_k8s``).
``pypto.runtime.run``/``benchmark``/``run_pto`` re-export these names.
"""
