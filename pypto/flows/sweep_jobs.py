"""The jobs of a sweep: targets expanded to kernels, crossed with platforms and toolchains, keyed by content.

A target is ``FILE::NAME``, ``FILE`` (every entry kernel the file defines, found by reading its syntax
tree: module-level ``@pl.jit`` / ``@pl.jit.graph`` functions and ``@pl.program`` classes; the file is
not executed) or a directory (its ``*.py`` files, recursively, minus ``_*.py`` helpers).

A job's *key* is the sha256 of everything that decides its result and nothing host-specific: the
compiler identity (the image, or the pypto sources plus the toolchain manifest), the job itself
(kernel name, platform, toolchain, runtime, mode), the contents of the input files (the kernel file
and every module under its directory that it imports, transitively: packages in subdirectories,
relative imports and ``from x import y`` included; :mod:`pypto.flows.sweep_imports`) and the settings
that change a compile
(:func:`pypto.toolchain.settings.compile_fingerprint`). Paths never enter it, so two checkouts share
keys. A job's *shard id* is a digest of its path relative to the working directory plus the job, so
``--shard I/N`` picks the same jobs on every machine that runs from the same directory.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from pypto.artifact.names import check_symbol
from pypto.errors import UserError

_ENTRY_DECORATORS = {("jit",), ("jit", "graph"), ("program",)}


@dataclass(frozen=True, slots=True)
class Job:
    """One compile (or compile-and-run) of one kernel on one platform with one toolchain."""

    file: str
    """Absolute path of the kernel file."""
    rel: str
    """The file relative to the working directory (POSIX); the absolute path when it lies outside."""
    name: str | None
    platform: str
    toolchain: str
    runtime: str
    run: bool
    key: str = ""

    @property
    def target(self) -> str:
        return f"{self.rel}::{self.name}" if self.name else self.rel

    @property
    def mode(self) -> str:
        return "run" if self.run else "compile"

    @property
    def shard_id(self) -> int:
        text = json.dumps([self.rel, self.name, self.platform, self.toolchain, self.runtime, self.run])
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")

    def to_task(self) -> dict[str, object]:
        """The plain-JSON form the worker task reads."""
        return {**asdict(self), "target": self.target}


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"I/N"`` with 0 <= I < N -> (I, N); a clear UserError otherwise."""
    if text is None:
        return None
    index, _, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i, n = -1, 0
    if n < 1 or not 0 <= i < n:
        raise UserError(f"--shard '{text}' is not I/N with 0 <= I < N", hint="example: --shard 0/4 (the first of 4 shards)")
    return i, n


def _decorator_path(node: ast.expr) -> tuple[str, ...]:
    """``@pl.jit.graph(...)`` -> ("pl", "jit", "graph")."""
    if isinstance(node, ast.Call):
        node = node.func
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return tuple(reversed(parts))


def discover_kernels(path: Path) -> list[str]:
    """Names of the entry kernels a file defines at module level (syntax only; the file is not run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read the kernel file: {exc}") from exc
    except SyntaxError as exc:
        raise UserError(f"{path}:{exc.lineno}:{exc.offset}: error: invalid Python syntax: {exc.msg}") from exc
    names = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.ClassDef) or node.name.startswith("_"):
            continue
        for deco in node.decorator_list:
            path_ = _decorator_path(deco)
            if any(path_[-len(d):] == d and len(path_) > len(d) for d in _ENTRY_DECORATORS):
                names.append(node.name)
                break
    return names


def _relative(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return path.as_posix()


def expand_targets(targets: Sequence[str], cwd: Path | None = None) -> list[tuple[Path, str, str | None]]:
    """``FILE[::NAME]`` / directories -> sorted, de-duplicated (absolute path, relative path, name)."""
    cwd = (cwd or Path.cwd()).resolve()
    out: dict[tuple[str, str | None], tuple[Path, str, str | None]] = {}
    for spec in targets:
        text, sep, name = spec.partition("::")
        path = (cwd / text).resolve()
        if not path.exists():
            raise UserError(f"sweep target '{text}' does not exist", hint="pass FILE[::NAME] or a directory of kernel files")
        if sep:
            check_symbol(name, f"sweep target '{spec}': kernel name")
        if path.is_dir():
            if sep:
                raise UserError(f"sweep target '{spec}': ::NAME needs a file, not a directory")
            files = sorted(p for p in path.rglob("*.py") if not p.name.startswith("_"))
            if not files:
                raise UserError(f"sweep target '{text}' holds no *.py kernel files")
        else:
            files = [path]
        for file in files:
            names: Iterable[str | None] = [name] if sep else (discover_kernels(file) or [None])
            for kernel in names:
                out[(str(file), kernel)] = (file, _relative(file, cwd), kernel)
    return [out[k] for k in sorted(out, key=lambda k: (k[0], k[1] or ""))]


def make_jobs(targets: Sequence[str], platforms: Sequence[str], toolchains: Sequence[str], runtime: str,
              run: bool, cwd: Path | None = None) -> list[Job]:
    """The cross product targets x platforms x toolchains, in a stable order."""
    return [Job(str(file), rel, name, platform, toolchain, runtime, run)
            for file, rel, name in expand_targets(targets, cwd) for toolchain in toolchains for platform in platforms]


def select_shard(jobs: Sequence[Job], shard: tuple[int, int] | None) -> list[Job]:
    """The jobs of shard I of N (by shard id modulo N); all jobs without a shard."""
    if shard is None:
        return list(jobs)
    index, count = shard
    return [j for j in jobs if j.shard_id % count == index]


def digest_files(paths: Iterable[Path], root: Path | None = None) -> str:
    """sha256 over (name relative to root, content) pairs, sorted by name."""
    h = hashlib.sha256()
    items = sorted(((p.relative_to(root).as_posix() if root else p.name), p) for p in paths)
    for name, path in items:
        data = path.read_bytes()
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def input_digest(file: Path) -> str:
    """The kernel file and every local module it imports, transitively (:mod:`pypto.flows.sweep_imports`)."""
    from pypto.flows.sweep_imports import local_closure

    root = file.resolve().parent
    return digest_files(local_closure(file), root) + ":" + file.name


def job_key(job: Job, identity: str, fingerprint: str, inputs: str) -> str:
    """Content address of a job's result (no host paths)."""
    payload = json.dumps({"identity": identity, "name": job.name, "file": Path(job.file).name,
                          "platform": job.platform, "toolchain": job.toolchain, "runtime": job.runtime,
                          "mode": job.mode, "inputs": inputs, "settings": fingerprint}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()
