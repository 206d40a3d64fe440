"""Per-pass validation: execute each pass dump's torch rendering and compare against expected tensors."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_DUMP = re.compile(r"^(\d+)_(frontend|after_\w+)\.py$")


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:  # pragma: no cover - torch is a test dependency here
        raise ImportError("pypto.debug validation runs the generated PyTorch code: install torch") from e
    return torch


def dump_files(path: str | Path) -> list[Path]:
    """The pass dumps of a ``passes_dump/`` directory in pass order, or ``[path]`` for one ``.py`` file."""
    p = Path(path)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise FileNotFoundError(f"no pass dump at {p} (compile with dump_passes enabled)")
    files = sorted((f for f in p.iterdir() if _DUMP.match(f.name)), key=lambda f: int(_DUMP.match(f.name).group(1)))
    if not files:
        raise FileNotFoundError(f"{p} holds no NN_after_<Pass>.py dumps")
    return files


def _bind(params: list[str], tensors: dict[str, Any]) -> list[Any]:
    """Arguments for the entry function: by name (``a__ssa_v0`` matches ``a``), else by position."""
    values = list(tensors.values())
    out = []
    for i, name in enumerate(params):
        base = name.split("__", 1)[0]
        if name in tensors:
            out.append(tensors[name])
        elif base in tensors:
            out.append(tensors[base])
        elif i < len(values):
            out.append(values[i])
        else:
            raise ValueError(f"no tensor for parameter '{name}' (given: {', '.join(tensors)})")
    return out


def run_dump(path: Path, tensors: dict[str, Any]) -> dict[str, Any]:
    """Run one dump's entry function on copies of ``tensors``; returns the tensors after the call."""
    import pypto.language as pl
    from pypto.debug.torch_codegen import entry_function, torch_codegen
    from pypto.ir.function import Program

    torch = _torch()
    node = pl.loads(path)
    fn = entry_function(node) if isinstance(node, Program) else node
    code = torch_codegen(node, check_shapes=True)
    ns: dict[str, Any] = {}
    exec(compile(code, f"<torch_codegen {path.name}>", "exec"), ns)  # noqa: S102 - our own generated code
    work = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in tensors.items()}
    args = _bind([p.name for p in fn.params], work)
    ns[re.sub(r"\W", "_", fn.name)](*args)
    return work


def validate_pass_ir_codegen_results(ir_dir: str | Path, tensors: dict[str, Any],
                                     expected: dict[str, Any] | None = None, *,
                                     rtol: float = 5e-2, atol: float = 5e-2) -> None:
    """Run every pass dump through torch and compare the ``expected`` tensors (by name) after each.

    ``expected=None`` takes the first dump's results (every tensor it changed) as the reference, so the
    report names the first pass that changed the program's meaning. Prints ``==== NN_after_Pass ====`` and
    one ``validate tensor`` line per expected tensor; raises ``AssertionError`` naming the first dump whose
    result differs.
    """
    torch = _torch()
    for path in dump_files(ir_dir):
        print(f"{'=' * 20} {path.stem} {'=' * 20}")
        got = run_dump(path, tensors)
        if expected is None:
            expected = {k: v for k, v in got.items()
                        if isinstance(v, torch.Tensor) and not torch.equal(v, tensors[k])}
            if not expected:
                raise AssertionError(f"{path}: the program changed none of the given tensors, so there is "
                                     "nothing to compare; pass expected=")
        for name, want in expected.items():
            if name not in got:
                raise KeyError(f"expected tensor '{name}' is not one of the inputs ({', '.join(got)})")
            have = got[name]
            diff = (have.double() - want.double()).abs().max().item() if have.numel() else 0.0
            ok = have.shape == want.shape and torch.allclose(have.double(), want.double(), rtol=rtol, atol=atol)
            print(f"validate tensor: '{name}', max_abs_diff: {diff:.6e}, pass: {ok}")
            if not ok:
                raise AssertionError(f"{path}: tensor '{name}' diverges from the expected result after this pass "
                                     f"(max_abs_diff {diff:.6e}, rtol={rtol}, atol={atol}); the previous dump "
                                     "still matched, so this pass changed the program's meaning")


def validate_ir(output_dir: str | Path, tensors: dict[str, Any], expected: dict[str, Any] | None = None, *,
                rtol: float = 5e-2, atol: float = 5e-2) -> None:
    """:func:`validate_pass_ir_codegen_results` on ``<output_dir>/passes_dump/``."""
    dump = Path(output_dir) / "passes_dump"
    if not dump.is_dir():
        raise FileNotFoundError(f"{dump} does not exist: compile with dump_passes enabled (the default) to "
                                "validate the IR per pass")
    validate_pass_ir_codegen_results(dump, tensors, expected, rtol=rtol, atol=atol)
