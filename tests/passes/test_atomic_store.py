"""Atomic-add stores (``pl.store(..., atomic=pl.AtomicType.Add)``) as runtime-ordered read-modify-writes."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError, UserError
from pypto.ir.enums import ArgDirection
from pypto.ir.verifier import calls


@pl.jit
def _add_rows_into(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """Each of three tasks adds its 16-row block of ``x`` into the same window of ``out``."""
    for i in pl.parallel(0, 3):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_block"):
            t = pl.load(x, [i * 16, 0], [16, 32])
            pl.store(t, [8, 0], out, atomic=pl.AtomicType.Add)
    return out


@pl.jit
def _add_once(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(x, [0, 0], [16, 32]), [0, 0], out, atomic=pl.AtomicType.Add)
    return out


def test_parallel_tasks_adding_into_one_window_sum_exactly(torch) -> None:
    g = torch.Generator().manual_seed(5)
    x = torch.randn(48, 32, generator=g)
    out = torch.full((32, 32), 0.5)
    _add_rows_into(x, out)
    want = torch.full((32, 32), 0.5)
    want[8:24] += x[0:16] + x[16:32] + x[32:48]
    torch.testing.assert_close(out, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "int8", "int32"])
def test_atomic_store_adds_onto_the_baseline_in_the_tensor_dtype(torch, dtype: str) -> None:
    dt = getattr(torch, dtype)
    g = torch.Generator().manual_seed(7)
    if dt.is_floating_point:
        x = torch.randn(16, 32, generator=g).to(dt)
    else:
        x = torch.randint(-20, 20, (16, 32), generator=g).to(dt)
    out = torch.full((16, 32), 3, dtype=dt)
    _add_once(x, out)
    want = (x.float() + 3).to(dt)  # one rounding of the exact sum
    assert torch.equal(out, want)


def test_the_kernel_reads_adds_and_stores_its_target_as_inout(torch) -> None:
    prog = _add_once.lower(torch.zeros(16, 32), torch.zeros(16, 32))
    kernel = next(f for f in prog.functions if f.is_incore)
    ops = [c.op for c in calls(kernel.body) if isinstance(c.op, str) and not c.op.endswith("alloc")]
    assert ops == ["tile.load", "tile.load", "tile.add", "tile.store"]
    assert all("atomic" not in c.kwargs for c in calls(kernel.body))
    orch = next(f for f in prog.functions if not f.is_incore)
    launch = next(c for c in calls(orch.body) if getattr(c.op, "name", None) == kernel.name)
    assert launch.attrs["arg_directions"][-1] is ArgDirection.InOut  # the runtime orders its writers


def test_an_atomic_store_in_a_multi_block_launch_is_a_located_error() -> None:
    text = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):
        with pl.spmd(core_num=2):
            i = pl.tile.get_block_idx()
            t = pl.load(x, [i * 8, 0], [8, 32])
            out = pl.store(t, [0, 0], out, atomic=pl.AtomicType.Add)
        return out
"""
    from pypto.driver import lower

    with pytest.raises(UnsupportedFeatureError, match="launched with 2 blocks") as info:
        lower(pl.parse(text))
    assert ":11:19:" in str(info.value) and "pl.parallel" in str(info.value)


@pl.jit
def _split_k_into_f16(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero"):
        c = pl.assemble(c, pl.full([32, 32], dtype=pl.FP16, value=0.0), [0, 0])
    for k in pl.parallel(0, 2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="part"):
            part = pl.matmul(a[:, k * 64 : k * 64 + 64], b[k * 64 : k * 64 + 64, :], out_dtype=pl.FP32)
            c = pl.assemble(c, part, [0, 0], atomic=pl.AtomicType.Add)
    return c


def test_an_f32_partial_is_rounded_to_the_f16_target_then_added(torch) -> None:
    g = torch.Generator().manual_seed(9)
    a, b = (torch.randn(32, 128, generator=g) * 0.1).half(), (torch.randn(128, 32, generator=g) * 0.1).half()
    c = torch.full((32, 32), 5.0, dtype=torch.float16)
    _split_k_into_f16(a, b, c)
    parts = [(a[:, i:i + 64].float() @ b[i:i + 64, :].float()).half().float() for i in (0, 64)]
    want = (parts[0] + parts[1]).half()  # each partial rounded once, the sum rounded once (the zero-init first)
    torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-3)


def test_a_plain_assemble_of_another_dtype_is_still_a_type_error() -> None:
    text = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP16]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.assemble(out, pl.add(x, 1.0), [0, 0])
        return out
"""
    with pytest.raises(UserError, match="dtype mismatch FP16 vs FP32"):
        pl.parse(text)
