"""The distributed artifact (meta, host orchestrator, one sub-build per chip program), reopening it at
another rank count, SubWorker callbacks and resident tensors, and the error paths."""

from __future__ import annotations

import inspect
import json

import bad_programs as bad
import dist_programs as dp
import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto import ir
from pypto.errors import UnsupportedFeatureError, UserError
from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
from pypto.runtime import DistributedWorker, RunConfig
from pypto.runtime.distributed_runner import _tensor_from_continuous


@pytest.fixture(autouse=True)
def _build_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))


def _cfg(n: int) -> RunConfig:
    return RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))))


def _line(module, marker: str) -> int:
    lines = inspect.getsource(module).splitlines()
    return next(i for i, text in enumerate(lines, start=1) if marker in text)


def test_artifact_layout_and_meta_and_one_build_for_any_rank_count(torch):
    x, y = torch.randn(2, 1, dp.W), torch.zeros(2, 1, dp.W)
    compiled = dp.host_pull.compile(x, y, config=_cfg(2))
    assert isinstance(compiled, DistributedCompiledProgram)
    out = compiled.output_dir
    meta = json.loads((out / "distributed_meta.json").read_text())
    assert meta["schema"] == 2 and meta["platform"] == "a2a3sim" and meta["chip_programs"] == ["chip_pull"]
    assert meta["distributed_config"]["device_ids"] == [0, 1]
    assert [(p["name"], p["direction"], p["dtype"]) for p in meta["params"]] == [("x", "In", "FP32"),
                                                                                ("y", "Out", "FP32")]
    host = (out / "orchestration" / "host_orch.py").read_text()
    assert "__rt__.dispatch('chip_pull'" in host and "__rt__.alloc_window_buffer" in host
    assert (out / "next_levels" / "chip_pull" / "compiled_meta.json").is_file()
    # the same artifact, reopened for 3 ranks: the chip build has no rank count in it
    again = DistributedCompiledProgram.from_dir(out, distributed_config=DistributedConfig(device_ids=[0, 1, 2]))
    x3, y3 = torch.randn(3, 1, dp.W), torch.zeros(3, 1, dp.W)
    again(x3, y3)
    np.testing.assert_allclose(y3.numpy(), 2 * np.stack([x3.numpy()[(r + 2) % 3] for r in range(3)]), rtol=1e-6)


@pl.program
class Summed:
    @pl.function(type=pl.FunctionType.InCore)
    def add_k(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        s = pl.add(pl.load(a, [0, 0], [16, 32]), pl.load(b, [0, 0], [16, 32]))
        return pl.store(s, [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        return self.add_k(a, b, c)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def observe(c: pl.Tensor[[16, 32], pl.FP32]):
        """Bound at prepare()."""
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        done = self.chip(a, b, c)
        self.observe(done)
        return done


def test_subworker_callback_sees_the_chip_result_and_a_missing_binding_fails_at_prepare(torch):
    assert Summed.get_function("observe").requires_runtime_binding
    assert not Summed.get_function("host").requires_runtime_binding
    compiled = ir.compile(Summed, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0]))
    with pytest.raises(ValueError, match=r"\['observe'\].*callbacks"):
        compiled.prepare()
    with pytest.raises(ValueError, match="not sub-workers"):
        compiled.prepare(callbacks={"observe": print, "nobody": print})
    a, b = torch.full((16, 32), 1.5), torch.arange(16 * 32, dtype=torch.float32).reshape(16, 32)
    c = torch.zeros(16, 32)
    seen = []

    def observe(args):
        seen.append(_tensor_from_continuous(args[0]).clone())

    with compiled.prepare(callbacks={"observe": observe}) as rt:
        rt(a, b, c)
    np.testing.assert_allclose(c.numpy(), (a + b).numpy(), rtol=0, atol=0)
    assert len(seen) == 1 and torch.equal(seen[0], a + b)


def test_two_programs_share_a_resident_tensor_on_one_worker(torch):
    dc = _cfg(1)
    x, kv = torch.full((1, 1, dp.W), 2.0), torch.zeros(1, 1, dp.W)
    scale = dp.host_scale.compile(x, kv, config=dc)  # kv = 3 * x + 0
    pull = dp.host_pull.compile(x, kv, config=dc)  # single rank: y = 2 * x (its own row)
    with DistributedWorker([scale, pull]) as rt:
        with pytest.raises(TypeError, match="ambiguous"):
            rt(x, kv)
        kv_dev = rt.alloc_tensor((1, 1, dp.W), torch.float32)
        out = torch.zeros(1, 1, dp.W).share_memory_()
        rt.run(scale, x, kv_dev)
        resident = torch.from_numpy(kv_dev.numpy().copy())
        rt.run(pull, x, out)
        np.testing.assert_allclose(resident.numpy(), np.full((1, 1, dp.W), 6.0, np.float32))
        np.testing.assert_allclose(out.numpy(), np.full((1, 1, dp.W), 4.0, np.float32))
        rt.free_tensor(kv_dev)
        with pytest.raises(ValueError, match="freed"):
            rt.run(scale, x, kv_dev)


def test_a_dispatch_to_a_rank_the_config_does_not_have_is_refused(torch):
    with pytest.raises(UserError, match=r"device=1.*1 rank\(s\)"):
        bad.host_two_fixed.compile(torch.zeros(2, 1, bad.W), torch.zeros(2, 1, bad.W), config=_cfg(1))


def test_a_comm_op_on_a_plain_tensor_is_located(torch):
    args = torch.zeros(2, 1, bad.W), torch.zeros(2, 1, bad.W), torch.zeros(2, 1, 1, dtype=torch.int32)
    with pytest.raises(UnsupportedFeatureError, match="not a pld.DistributedTensor parameter") as exc:
        bad.host_notify_plain.compile(*args, config=_cfg(2))
    assert exc.value.span.line == _line(bad, "NOTIFY_PLAIN_LINE")


def test_unsupported_collectives_are_located(torch):
    args = torch.zeros(2, 1, bad.W), torch.zeros(2, 1, bad.W)
    with pytest.raises(UnsupportedFeatureError, match="pld.system.defer_wait is not supported") as exc:
        bad.host_allreduce.compile(*args, config=_cfg(2))
    assert exc.value.span.line == _line(bad, "COLLECTIVE_LINE")
    with pytest.raises(UnsupportedFeatureError, match="only mode='mesh'") as exc:
        bad.host_allreduce_max.compile(*args, config=_cfg(2))
    assert exc.value.span.line == _line(bad, "ALLREDUCE_RING_LINE")


def test_an_unsupported_host_statement_is_located(torch):
    with pytest.raises(UnsupportedFeatureError, match="'While' statements") as exc:
        bad.host_while.compile(torch.zeros(2, 1, bad.W), torch.zeros(2, 1, bad.W), config=_cfg(2))
    assert exc.value.span.line == _line(bad, "WHILE_LINE")


def test_a_distributed_program_needs_a_distributed_config(torch):
    with pytest.raises(UserError, match="distributed_config=DistributedConfig"):
        dp.host_scale.compile(torch.zeros(2, 1, dp.W), torch.zeros(2, 1, dp.W), config=RunConfig(platform="a2a3sim"))
    with pytest.raises(UserError, match="HOST-level functions.*distributed program") as exc:
        ir.compile(Summed, platform="a2a3sim")
    assert "distributed_config=DistributedConfig" in str(exc.value)


def test_pld_constructs_called_as_python_say_where_they_belong():
    with pytest.raises(UserError, match="pld.world_size.*@pl.jit.host"):
        pld.world_size()
    with pytest.raises(UserError, match="pld.tile.remote_load.*@pl.jit.incore"):
        pld.tile.remote_load(None)


def test_numpy_arguments_are_staged_through_shared_memory_and_copied_back(torch):
    x = np.random.default_rng(5).standard_normal((3, 1, dp.W)).astype(np.float32)
    y = np.zeros_like(x)
    dp.host_scale(x, y, config=_cfg(3))
    np.testing.assert_allclose(y, 3 * x + np.arange(3, dtype=np.float32).reshape(3, 1, 1), rtol=1e-6, atol=1e-6)


def test_a_wait_nobody_answers_fails_the_run_naming_each_rank(torch):
    from pypto.runtime.distributed import DistributedRunError

    x, y = torch.zeros(2, 1, bad.W), torch.zeros(2, 1, bad.W)
    compiled = bad.host_wait_forever.compile(x, y, config=_cfg(2))
    with compiled.prepare(wait_timeout_s=0.5) as rt, pytest.raises(DistributedRunError) as exc:
        rt(x, y)
    text = str(exc.value)
    assert "rank 0:" in text and "rank 1:" in text and "expected == 5" in text, text


@pl.program
class Doubled:
    @pl.function(type=pl.FunctionType.InCore)
    def dbl(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 32])
        return pl.store(pl.add(t, t), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, a: pl.Tensor[[16, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        return self.dbl(a, c)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, a: pl.Tensor[[16, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.chip(a, c)
        return out


def test_a_return_style_call_allocates_and_returns_the_output(torch):
    compiled = ir.compile(Doubled, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0]))
    a = torch.arange(16 * 32, dtype=torch.float32).reshape(16, 32)
    out = compiled(a)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_array_equal(out.numpy(), 2 * a.numpy())
    with pytest.raises(TypeError, match="expects 2 arguments"):
        compiled()


def test_stacked_device_tensor_feeds_every_rank_and_submit_returns_a_handle(torch):
    """Upstream's resident stacked input: shard r of x on worker r, the host orchestrator slices x[r]."""
    from pypto.runtime import DistributedRunHandle, StackedDeviceTensor, execute_distributed_compiled

    dc = _cfg(2)
    x, y = torch.arange(2 * dp.W, dtype=torch.float32).reshape(2, 1, dp.W), torch.zeros(2, 1, dp.W)
    scale = dp.host_scale.compile(x, y, config=dc)
    with scale.prepare() as rt:
        xs = rt.alloc_stacked_tensor(x)
        assert isinstance(xs, StackedDeviceTensor) and xs.worker_ids == (0, 1) and xs.shape == (2, 1, dp.W)
        handle = rt.submit(scale, xs, y)
        assert isinstance(handle, DistributedRunHandle) and handle.done
        handle.result()
        np.testing.assert_allclose(y.numpy(), 3 * x.numpy() + np.arange(2, dtype=np.float32).reshape(2, 1, 1))
        back = torch.zeros(2, 1, dp.W)
        rt.copy_stacked_from(xs, back)
        assert torch.equal(back, x)
        bad = rt.submit(scale, xs)  # a wrong call fails through its handle, as upstream's submit reports it
        with pytest.raises(TypeError):
            bad.wait()
        rt.free_stacked_tensor(xs)
        with pytest.raises(ValueError, match="freed"):
            rt.run(scale, xs, y)
    y2 = torch.zeros(2, 1, dp.W)
    assert execute_distributed_compiled(scale.output_dir, [x, y2]) is None
    np.testing.assert_allclose(y2.numpy(), y.numpy())


def test_a_run_without_torch_says_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    x = np.zeros((2, 1, dp.W), np.float32)
    compiled = dp.host_scale.compile(x, np.zeros_like(x), config=_cfg(2))
    monkeypatch.setitem(sys.modules, "torch", None)  # as if torch were not installed
    with pytest.raises(UserError, match="needs torch") as exc:
        compiled(x, np.zeros_like(x))
    assert "pip install torch==2.13.0" in str(exc.value.hint)
