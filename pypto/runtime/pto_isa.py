"""Upstream's ``pypto.runtime.pto_isa``: where the PTO-ISA headers kernels are built against live.

Upstream resolves a pinned PTO-ISA checkout; here the ISA is the simulator's own tile-ISA headers,
shipped in the package (``pypto/runtime/sim/include``, holding ``pto/pto-inst.hpp``), which every
kernel of the simulation platforms is compiled against. An out-of-tree kernel (``pl.jit.extern``)
includes ``pto_isa_include_dir()``.
"""

from __future__ import annotations

from pathlib import Path

from pypto.runtime.build import INCLUDE_DIR, SIM_DIR


def ensure_pto_isa_root() -> str:
    """The PTO-ISA root (the simulator's ``sim`` directory), also exported as ``PTO_ISA_ROOT``."""
    from pypto.toolchain.settings import export_upstream_env

    root = str(SIM_DIR.resolve())
    export_upstream_env("PTO_ISA_ROOT", root)
    return root


def pto_isa_include_dir() -> Path:
    """``<root>/include``: the directory holding ``pto/pto-inst.hpp`` that kernels are built with."""
    return Path(ensure_pto_isa_root()) / INCLUDE_DIR.name


__all__ = ["ensure_pto_isa_root", "pto_isa_include_dir"]
