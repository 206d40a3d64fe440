"""The artifact directory: its one owner. Codegen, the assembler (backend) and the runtime meet here.

Floor: above ``ir``, ``toolchain`` and ``errors``; imports nothing else of pypto. ``model`` is what
codegen hands the assembler (:class:`Artifact`, kernel units), ``meta`` the one metadata record
(:class:`ArtifactMeta`, :class:`ParamInfo`: ``compiled_meta.json``), ``directory`` the layout (file
names inside an artifact directory are known only here), :func:`begin` / :func:`commit` (the metadata
written last, atomically) and :func:`load_artifact` for the runtime, ``kernel_config`` the
``kernel_config.py`` file (:func:`render_kernel_config`, :class:`ArgDirection`), ``names`` the one rule
for names that become files or symbols (``check_symbol``) and the writers' containment check.
"""

from pypto.artifact.directory import (
    CODEGEN_ERRORS,
    KERNEL_CONFIG,
    PASSES_DUMP_DIR,
    REPORT_DIR,
    STALE_MARKERS,
    ArtifactInfo,
    KernelSpec,
    begin,
    commit,
    is_assembled,
    is_complete,
    kernel_source,
    load_artifact,
    orchestration_source,
    ptoas_file,
    ptoas_passes_file,
    skip_ptoas_files,
)
from pypto.artifact.kernel_config import ArgDirection, render_kernel_config
from pypto.artifact.meta import META_FILE, META_SCHEMA, ArtifactMeta, ParamInfo
from pypto.artifact.model import Artifact, CoreKind, FuncId, KernelFunc, KernelParam, KernelUnit

__all__ = [
    "CODEGEN_ERRORS", "KERNEL_CONFIG", "META_FILE", "META_SCHEMA", "PASSES_DUMP_DIR", "REPORT_DIR", "STALE_MARKERS", "ArgDirection", "Artifact", "ArtifactInfo",
    "ArtifactMeta", "CoreKind", "FuncId", "KernelFunc", "KernelParam", "KernelSpec", "KernelUnit", "ParamInfo",
    "begin", "commit", "is_assembled", "is_complete", "kernel_source", "load_artifact", "orchestration_source",
    "ptoas_file", "ptoas_passes_file", "render_kernel_config", "skip_ptoas_files",
]
