"""ROUNDTRIP verification over the whole pipeline for every example kernel and the tests/passes programs.

Every intermediate program (the input and the result of each pass) is printed, re-parsed with
``pl.parse`` and compared structurally by the PassManager's RoundtripInstrument.

Examples are discovered dynamically: every ``examples/<group>/NN_*.py`` is imported and each public
``@pl.program`` object and entry ``@pl.jit`` kernel is lowered. A jit kernel needs sample inputs:
the module's ``SHAPES = {"kernel": {"param": "64x64:f32", ...}}`` (the same table ``pypto compile``
reads), or, for kernels taking scalars or non-tensor arguments, ``sample_args() -> {"kernel":
(arg, ...)}`` returning positional sample arguments.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pypto.errors import UserError
from pypto.flows.loader import kernel_targets, load_module, sample_args
from pypto.ir.function import Program
from pypto.ir.options import BackendType, VerificationLevel
from pypto.jit import JITFunction
from pypto.passes.context import PassContext

TESTS = Path(__file__).resolve().parents[1]
EXAMPLES = TESTS.parent / "examples"
PASS_TESTS = TESTS / "passes"
PASS_TEST_SHAPE = ((64, 64), np.float32)


def _example_files() -> list[Path]:
    return sorted(p for p in EXAMPLES.glob("*/[0-9][0-9]_*.py"))


def _example_cases() -> list[Any]:
    cases = []
    for path in _example_files():
        module = load_module(path)
        rel = path.relative_to(EXAMPLES).as_posix()
        targets = kernel_targets(module)
        assert targets, f"examples/{rel} defines no @pl.program or @pl.jit entry kernel"
        cases += [pytest.param(module, name, target, id=f"{rel}::{name}") for name, target in targets.items()]
    return cases


def example_args(module: Any, name: str, fn: JITFunction) -> tuple[Any, ...]:
    """Sample args of a jit kernel (``pypto.flows.loader.sample_args``); a missing or incomplete table fails."""
    try:
        return sample_args(module, name, fn)
    except UserError as exc:
        if name in getattr(module, "SHAPES", {}):
            raise AssertionError(str(exc)) from None  # the table exists but lacks a parameter
        pytest.fail(str(exc))


def lower_roundtrip(target: Program | JITFunction, args: tuple[Any, ...], backend: BackendType) -> Program:
    """Run the whole Default pipeline with ROUNDTRIP verification; returns the post-pass program."""
    from pypto.driver import lower

    with PassContext(verification_level=VerificationLevel.ROUNDTRIP, backend_type=backend):
        if isinstance(target, Program):
            return lower(target)
        return target.lower(*args)


@pytest.mark.parametrize("backend", [BackendType.Ascend910B, BackendType.Ascend950], ids=["a2a3", "a5"])
@pytest.mark.parametrize("module,name,target", _example_cases())
def test_example_roundtrips_after_every_pass(module, name, target, backend):
    args = () if isinstance(target, Program) else example_args(module, name, target)
    assert isinstance(lower_roundtrip(target, args, backend), Program)


def test_every_example_group_is_covered():
    groups = {p.parent.name for p in _example_files()}
    assert {"beginner", "intermediate", "models"} <= groups, groups


# -- the programs of tests/passes (mixed kernels, break/continue, multi-output regions) -----------


def _import_pass_test(path: Path) -> Any:
    if str(PASS_TESTS) not in sys.path:
        sys.path.insert(0, str(PASS_TESTS))
    spec = importlib.util.spec_from_file_location(f"_roundtrip_passes_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # before exec: inspect finds a module-level @pl.program's source through it
    spec.loader.exec_module(module)
    return module


def _builders(module: Any) -> dict[str, Callable[[], Program]]:
    """Zero-argument ``*_program()`` builders (tests/passes/kernels.py)."""
    out = {}
    for key, obj in vars(module).items():
        if key.endswith("_program") and inspect.isfunction(obj) and obj.__module__ == module.__name__:
            if all(p.default is not p.empty for p in inspect.signature(obj).parameters.values()):
                out[key] = obj
    return out


# Known gap, kept visible (strict: these fail loudly once it is fixed): the read-loop lifting gives the
# orchestration a loop that carries tensors; InitMemRef types the loop's results with DDR MemRefs, and
# the printed `for` has no place for a result's type, so the re-parsed loop results have none.
LOOP_LOCAL_AFTER_LOOP = {"passes/test_read_loops.py::_TwoOutputs", "passes/test_read_loops.py::_Guarded"}


# Known gap: a name rebound in both branches of an if inside a loop (``if k == 0: acc = matmul(...)
# else: acc = matmul_acc(acc, ...)``) gets a fresh Var in one branch only in the pipeline input, and
# the printed text reads that Var after the loop, which the parser refuses (bound in one branch).
BRANCH_REBIND_IN_LOOP = {"passes/test_kernel_carry.py::k_split", "passes/test_kernel_carry.py::k_split_pipelined",
                         "passes/test_auto_tile_carried.py::carried", "passes/test_auto_tile_carried.py::wide"}


def _pass_param(obj: Any, case_id: str) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason="an orchestration loop's tensor results lose their "
                               "MemRef in the printed form")] if case_id in LOOP_LOCAL_AFTER_LOOP else []
    if case_id in BRANCH_REBIND_IN_LOOP:
        marks = [pytest.mark.xfail(strict=True, reason="a name rebound in both branches of an if in a loop "
                                   "prints as two names in the pipeline input")]
    return pytest.param(obj, id=case_id, marks=marks)


def _pass_cases() -> list[Any]:
    cases = []
    for path in sorted(PASS_TESTS.glob("*.py")):
        if path.name == "conftest.py":
            continue
        module = _import_pass_test(path)
        for key, obj in vars(module).items():
            if isinstance(obj, Program) or (isinstance(obj, JITFunction) and obj.kind == "orchestration"):
                cases.append(_pass_param(obj, f"passes/{path.name}::{key}"))
        cases += [pytest.param(fn, id=f"passes/{path.name}::{key}") for key, fn in _builders(module).items()]
    return cases


def _pass_test_args(fn: JITFunction) -> tuple[Any, ...]:
    shape, dtype = PASS_TEST_SHAPE
    return tuple(np.zeros(shape, dtype) for _ in inspect.signature(fn.func).parameters)


@pytest.mark.parametrize("target", _pass_cases())
def test_pass_test_program_roundtrips(target):
    """Kernels the pipeline rejects on purpose (UserError) are skipped; everything else must round-trip."""
    if callable(target) and not isinstance(target, JITFunction | Program):
        target = target()
    args = _pass_test_args(target) if isinstance(target, JITFunction) else ()
    try:
        lower_roundtrip(target, args, BackendType.Ascend910B)
    except UserError as exc:
        pytest.skip(f"rejected by design: {type(exc).__name__}: {str(exc).splitlines()[0]}")
