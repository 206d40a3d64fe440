"""Run one system-test case on pypto: compile, run on a simulator, compare with the case's golden.

:meth:`TestRunner.run` compiles ``case.get_program()`` with ``ir.compile`` (through the runtime's
``compile_program``) for the backend of the platform, makes the tensors the case describes, computes
the expected outputs from copies of the inputs *before* the run (so in/out tensors start equal; inputs
of :data:`SHARED_INPUT_ELEMENTS` elements or more are shared, and a golden that writes one fails),
runs the artifact with its orchestration parameters taken by name, and compares every output with
``torch.isclose`` at the case's own ``config.rtol``/``config.atol``. A NaN in the golden marks an
element the kernel leaves undefined by contract (outside a valid shape, say): it is not compared, and
a golden that is NaN everywhere fails (nothing was compared), so NaN is never a pass by itself. Every failure is a :class:`CaseResult` with ``passed`` False and an
``error`` text (the exception and its traceback, or which output differs, where and by how much).
An onboard platform (``a2a3``, ``a5``) runs on the simulator of the same architecture.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.harness import ONBOARD_PLATFORM_IDS, PTOTestCase, platform_to_backend
from pypto.artifact.directory import load_artifact
from pypto.runtime.runner import RunConfig, compile_program, execute_compiled
from pypto.runtime.tensor_spec import TensorSpec as RuntimeTensorSpec

_last_device: dict[str, int | None] = {"value": None}
"""The device id of the case run last (upstream's harness reports it; a test may set it)."""


@dataclass
class CaseResult:
    """Outcome of one case (upstream's ``RunResult`` fields)."""

    passed: bool
    test_name: str
    error: str | None = None
    execution_time: float = 0.0

    def __str__(self) -> str:
        head = f"{'PASS' if self.passed else 'FAIL'}: {self.test_name} ({self.execution_time:.2f}s)"
        return head if self.passed else f"{head}\n  {self.error}"


def resolve_platform(config: RunConfig, case: PTOTestCase | None = None) -> str:
    """The simulator a case runs on: the case's pinned platform, else the session's."""
    platform = (case.get_platform() if case is not None else None) or config.platform
    return f"{platform}sim" if platform in ONBOARD_PLATFORM_IDS else platform


def make_tensors(case: PTOTestCase) -> dict[str, Any]:
    """The case's tensors as torch tensors, by name (``init_value`` as the runtime's TensorSpec reads it)."""
    out = {}
    for spec in case.tensor_specs:
        rt = RuntimeTensorSpec(spec.name, list(spec.shape), spec.dtype.torch_dtype, spec.init_value, spec.is_output)
        out[spec.name] = rt.create_tensor().contiguous()
    return out


SHARED_INPUT_ELEMENTS = 1 << 26
"""Inputs at least this large are handed to the golden as they are (a copy of upstream's paged-attention
KV caches is 4 GB and seconds); the run checks, by torch's version counter, that the golden left them alone."""


def golden_tensors(case: PTOTestCase, tensors: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """The tensors ``compute_expected`` fills: copies, but large inputs shared; and those shared, by version."""
    outputs = {s.name for s in case.tensor_specs if s.is_output}
    shared = {n: t._version for n, t in tensors.items() if n not in outputs and t.numel() >= SHARED_INPUT_ELEMENTS}
    return {n: t if n in shared else t.clone() for n, t in tensors.items()}, shared


def ordered_args(work_dir: Path, case: PTOTestCase, tensors: dict[str, Any]) -> list[Any]:
    """The run's arguments in orchestration-parameter order, matched by name."""
    scalars = {s.name: s.value for s in case.scalar_specs}
    params = load_artifact(work_dir).params
    missing = [p.name for p in params if p.name not in tensors and p.name not in scalars]
    if missing:
        if len(params) == len(tensors) + len(scalars):  # names differ: the specs' own order, as TaskArgs
            return [*tensors.values(), *scalars.values()]
        raise ValueError(f"orchestration parameters {missing} have no TensorSpec/ScalarSpec of that name "
                         f"(the case defines {sorted(tensors) + sorted(scalars)})")
    return [tensors[p.name] if p.name in tensors else scalars[p.name] for p in params]


def compare_outputs(case: PTOTestCase, actual: dict[str, Any], expected: dict[str, Any]) -> str | None:
    """None when every output is within the case's tolerances, else what differs, where and by how much."""
    import torch

    rtol, atol = case.config.rtol, case.config.atol
    problems = []
    for spec in (s for s in case.tensor_specs if s.is_output):
        got, want = actual[spec.name], expected[spec.name]
        if got.dtype.is_floating_point or want.dtype.is_floating_point:
            got, want = got.to(torch.float64), want.to(torch.float64)
        else:
            got, want = got.to(torch.int64), want.to(torch.int64)
        care = ~torch.isnan(want)  # NaN in the golden: an element the kernel leaves undefined by contract
        if not bool(care.any()):
            problems.append(f"output '{spec.name}': the golden marks every element don't-care (NaN): "
                            "nothing was compared")
            continue
        close = torch.isclose(got, want, rtol=rtol, atol=atol) | ~care
        bad = int((~close).sum())
        if bad:
            diff = (got - want).abs().nan_to_num(float("inf")).masked_fill(close, 0)
            at = tuple(int(i) for i in torch.unravel_index(torch.argmax(diff), got.shape))
            skipped = f" ({int((~care).sum())} don't-care skipped)" if not bool(care.all()) else ""
            problems.append(f"output '{spec.name}': {bad}/{got.numel()} elements differ beyond rtol={rtol}, "
                            f"atol={atol}{skipped}; e.g. at {list(at)} got {got[at].item()} expected {want[at].item()}")
    return "; ".join(problems) or None


class TestRunner:
    """Runs cases with a session ``RunConfig`` (platform, device id, codegen-only, kept artifacts)."""

    __test__ = False

    def __init__(self, config: RunConfig | None = None) -> None:
        self.config = config or RunConfig()

    def run(self, test_case: PTOTestCase) -> CaseResult:
        start = time.time()
        name = test_case.get_name()
        keep = self.config.save_kernels_dir
        work = Path(keep) / name if keep else Path(tempfile.mkdtemp(prefix=f"st_{name}_"))
        try:
            error = self._compile_and_run(test_case, work)
            _last_device["value"] = self.config.device_id
            return CaseResult(error is None, name, error, time.time() - start)
        except Exception as exc:  # noqa: BLE001 - a case's failure is its result, as upstream reports it
            return CaseResult(False, name, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}",
                              time.time() - start)
        finally:
            if not keep:
                shutil.rmtree(work, ignore_errors=True)

    def _compile_and_run(self, case: PTOTestCase, work: Path) -> str | None:
        platform = resolve_platform(self.config, case)
        program = case.get_program()
        if program is None:
            raise ValueError(f"test case {case.get_name()} must implement get_program() "
                             "to return a @pl.program class or ir.Program")
        compile_program(program, work, strategy=case.get_strategy(), backend_type=platform_to_backend(platform),
                        dump_passes=self.config.dump_passes or False, memory_planner=case.get_memory_planner(),
                        enable_pypto_l0c_double_buffer=case.get_enable_pypto_l0c_double_buffer())
        if self.config.codegen_only:
            return None
        tensors = make_tensors(case)
        expected, shared = golden_tensors(case, tensors)
        params = {s.name: s.value for s in case.scalar_specs} or None
        case.compute_expected(expected, params)
        changed = [n for n, version in shared.items() if tensors[n]._version != version]
        if changed:
            return f"compute_expected modified the input tensor(s) {changed} in place (large inputs are shared " \
                   "with the run, not copied)"
        execute_compiled(work, ordered_args(work, case, tensors), platform=platform, device_id=self.config.device_id)
        return compare_outputs(case, tensors, expected)


class TestSuite:
    """A named list of cases run by one runner."""

    __test__ = False

    def __init__(self, name: str, config: RunConfig | None = None) -> None:
        self.name = name
        self.config = config or RunConfig()
        self.cases: list[PTOTestCase] = []

    def add_test(self, test_case: PTOTestCase) -> TestSuite:
        self.cases.append(test_case)
        return self

    def run_all(self, runner: TestRunner | None = None) -> dict[str, CaseResult]:
        runner = runner or TestRunner(self.config)
        return {case.get_name(): runner.run(case) for case in self.cases}

    def summary(self, results: dict[str, CaseResult]) -> str:
        passed = sum(r.passed for r in results.values())
        lines = [f"Test Suite: {self.name}", f"Passed: {passed}/{len(results)}"]
        lines += [f"  {r}" for r in results.values() if not r.passed]
        return "\n".join(lines)
