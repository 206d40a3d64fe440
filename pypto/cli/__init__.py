"""The ``pypto`` command line (also the container image's entrypoint).

Floor: the top; it calls :mod:`pypto.flows` (compile/run a file, ``run-pto``) and ``toolchain``.
"""
