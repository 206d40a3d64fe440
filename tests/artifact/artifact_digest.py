"""Digests of the artifact directories of every example kernel (dumps and no dumps, ``skip_ptoas``).

Guards that compile-speed work changes no output byte. ``golden_digests.json`` holds, per kernel and
mode, a sha256 prefix of each artifact file and one of the whole ``passes_dump/`` tree; the checkout's
root path is replaced by ``<root>`` first (source locations name it). After a deliberate output
change, regenerate it with ``python tests/artifact/artifact_digest.py --update``.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("golden_digests.json")
MODES = {"dumps": True, "no_dumps": False}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def tree_digest(out: Path) -> dict[str, Any]:
    """``{"files": {relpath: sha}, "passes_dump": sha-or-None, "dump_files": n}`` for an artifact dir."""
    root = str(ROOT).encode()
    files: dict[str, str] = {}
    dump = hashlib.sha256()
    n_dump = 0
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = path.relative_to(out).as_posix()
        data = path.read_bytes().replace(root, b"<root>")
        if rel.startswith("passes_dump/"):
            dump.update(rel.encode() + b"\0" + data + b"\0")
            n_dump += 1
        else:
            files[rel] = _sha(data)
    return {"files": files, "passes_dump": dump.hexdigest()[:16] if n_dump else None, "dump_files": n_dump}


def example_programs() -> Iterator[tuple[str, Any]]:
    """(label, Program) for each entry kernel of each example (jit kernels specialized on SHAPES).

    A jit kernel also comes lowered (``kernel.lower(*args)``, label ``... lowered``): recompiling a
    pipeline output is what the upstream side-by-side timing does, and most passes find nothing to do.
    """
    from pypto.errors import UserError
    from pypto.flows.loader import kernel_targets, load_module, sample_args
    from pypto.ir.function import Program

    for path in sorted((ROOT / "examples").glob("*/[0-9][0-9]_*.py")):
        module = load_module(path)
        for name, target in kernel_targets(module).items():
            label = f"{path.parent.name}/{path.stem}::{name}"
            if isinstance(target, Program):
                yield label, target
                continue
            try:
                args = sample_args(module, name, target)
            except UserError:
                continue
            yield label, target.specialize(*target._classify(target._bind(args, {})))
            yield f"{label} lowered", target.lower(*args)


def compile_digest(program: Any, dump: bool) -> dict[str, Any]:
    import pypto

    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "out"
        pypto.ir.compile(program, output_dir=out, platform="a2a3sim", dump_passes=dump, skip_ptoas=True)
        return tree_digest(out)


def all_digests() -> dict[str, dict[str, Any]]:
    return {f"{label} [{mode}]": compile_digest(program, dump)
            for label, program in example_programs() for mode, dump in MODES.items()}


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/artifact/artifact_digest.py --update")
    from pypto.toolchain.logging import configure_logging

    configure_logging(level="error")
    GOLDEN.write_text(json.dumps(all_digests(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
