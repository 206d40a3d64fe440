"""bf16 tensors and tiles end to end: torch.bfloat16 in and out, casts, matmul, constants, row sums.

ptoas 0.1.1 cannot lower bf16; it is fed an f16 stand-in and its C++ is retyped to ``bfloat16_t``
(``pypto.backend.bf16_standin``). These programs check that the result is what bf16 hardware gives:
f32 -> bf16 rounds to nearest even (0.1.1 always emits CAST_RINT), matmul products of bf16 are exact
in f32 and are summed in f32.
"""

from __future__ import annotations

import pytest
from rt_marks import needs_gxx

import pypto.language as pl
from pypto import ir
from pypto.debug import torch_codegen
from pypto.errors import UserError
from pypto.toolchain.ptoas import find_ptoas

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
pytestmark = [needs_gxx, pytest.mark.sim, pytest.mark.ptoas,
              pytest.mark.skipif(find_ptoas() is None, reason="needs the pinned ptoas")]
PLATFORMS = ("a2a3sim", "a5sim")

ROUND_TRIP = '''
import pypto.language as pl

@pl.program
class Widen:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[32, 64], pl.BF16], y: pl.Tensor[[32, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[32, 64], pl.BF16]]) -> pl.Tensor[[32, 64], pl.BF16]:
        wide = pl.cast(pl.load(x, [0, 0], [32, 64]), target_type=pl.FP32)
        s = pl.add(wide, pl.load(y, [0, 0], [32, 64]))
        return pl.store(pl.cast(s, target_type=pl.BF16), [0, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, h: pl.Tensor[[32, 64], pl.BF16], sums: pl.Out[pl.Tensor[[32, 1], pl.FP32]],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> tuple[pl.Tensor[[32, 1], pl.FP32], pl.Tensor[[32, 64], pl.FP32]]:
        t = pl.add(pl.load(h, [0, 0], [32, 64]), 0.1)
        wide = pl.cast(t, target_type=pl.FP32)
        tmp = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        sums = pl.store(pl.row_sum(wide, tmp), [0, 0], sums)
        out = pl.store(wide, [0, 0], out)
        return sums, out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.BF16], y: pl.Tensor[[32, 64], pl.FP32],
             mid_out: pl.Out[pl.Tensor[[32, 64], pl.BF16]], sums: pl.Out[pl.Tensor[[32, 1], pl.FP32]],
             out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        mid = pl.create_tensor([32, 64], dtype=pl.BF16)
        mid = self.shift(x, y, mid)
        mid_out = self.shift(x, y, mid_out)
        sums, out = self.bump(mid, sums, out)
        return out
'''

MATMUL = '''
import pypto.language as pl

@pl.program
class Mm:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[64, 128], pl.BF16], b: pl.Tensor[[128, 32], pl.BF16],
           out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        a0 = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
        b0 = pl.load(b, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(a0, target_memory=pl.MemorySpace.Left),
                        pl.move(b0, target_memory=pl.MemorySpace.Right))
        a1 = pl.load(a, [0, 64], [64, 64], target_memory=pl.MemorySpace.Mat)
        b1 = pl.load(b, [64, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul_acc(acc, pl.move(a1, target_memory=pl.MemorySpace.Left),
                            pl.move(b1, target_memory=pl.MemorySpace.Right))
        return pl.store(acc, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 128], pl.BF16], b: pl.Tensor[[128, 32], pl.BF16],
             out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        out = self.mm(a, b, out)
        return out
'''


def _bits(t):
    return t.view(torch.int16)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bf16_round_trip_constant_and_row_sum(tmp_path, platform):
    compiled = ir.compile(pl.parse(ROUND_TRIP, filename="widen.py"), platform=platform, output_dir=tmp_path / "a",
                          dump_passes=False)
    g = torch.Generator().manual_seed(11)
    x = (torch.randn(32, 64, generator=g) * 4).to(torch.bfloat16)
    y = torch.randn(32, 64, generator=g)
    # ties to even (down, up), a sum that rounds to inf in bf16 (finite in f32), a subnormal
    y[0, :4] = torch.tensor([2.0 ** -8, 3 * 2.0 ** -8, 1.3e36, -1e-40])
    x[0, :4] = torch.tensor([1.0, 1.0, 3.3895313892515355e38, 0.0]).to(torch.bfloat16)
    mid = torch.zeros(32, 64, dtype=torch.bfloat16)
    sums, out = torch.zeros(32, 1), torch.zeros(32, 64)
    compiled(x, y, mid, sums, out)
    want_mid = (x.float() + y).to(torch.bfloat16)
    assert torch.equal(_bits(mid), _bits(want_mid))  # bit for bit, incl. the ties, inf and the subnormal
    assert _bits(mid)[0, :4].tolist() == [0x3F80, 0x3F82, 0x7F80, -0x7FFF]
    want = (want_mid + torch.tensor(0.1).to(torch.bfloat16)).float()  # bf16 + bf16(0.1), rounded to bf16
    finite = torch.isfinite(want)
    assert torch.equal(out[finite], want[finite]) and torch.isinf(out[~finite]).all()
    rows = torch.isfinite(want).all(dim=1)
    torch.testing.assert_close(sums[rows], want[rows].sum(dim=1, keepdim=True), rtol=1e-5, atol=1e-4)
    # the program's meaning in PyTorch (pypto.debug) agrees bit for bit
    ns: dict = {}
    exec(torch_codegen(compiled.program), ns)  # noqa: S102
    mid2, sums2, out2 = torch.zeros_like(mid), torch.zeros_like(sums), torch.zeros_like(out)
    ns["main"](x, y, mid2, sums2, out2)
    assert torch.equal(_bits(mid2), _bits(mid)) and torch.equal(out2, out)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bf16_matmul_accumulates_in_f32(tmp_path, platform):
    compiled = ir.compile(pl.parse(MATMUL, filename="mm.py"), platform=platform, output_dir=tmp_path / "m",
                          dump_passes=False)
    g = torch.Generator().manual_seed(5)
    a = torch.randn(64, 128, generator=g).to(torch.bfloat16)
    b = torch.randn(128, 32, generator=g).to(torch.bfloat16)
    out = torch.zeros(64, 32)
    compiled(a, b, out)
    af, bf = a.float(), b.float()
    halves = []
    for k0 in (0, 64):  # f32 products of bf16 are exact; each instruction adds its own per k, ascending
        part = torch.zeros(64, 32)
        for k in range(k0, k0 + 64):
            part = part + af[:, k:k + 1] * bf[k:k + 1, :]
        halves.append(part)
    assert torch.equal(out, halves[0] + halves[1])  # then matmul_acc adds its sum to the accumulator
    torch.testing.assert_close(out, af @ bf, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(out, (a @ b).float(), rtol=1e-2, atol=5e-2)  # torch's own bf16 matmul


MIXED = '''
import pypto.language as pl

@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.InCore)
    def both(self, x: pl.Tensor[[16, 64], pl.BF16], out: pl.Out[pl.Tensor[[16, 64], pl.FP16]]
             ) -> pl.Tensor[[16, 64], pl.FP16]:
        wide = pl.cast(pl.load(x, [0, 0], [16, 64]), target_type=pl.FP32)
        return pl.store(pl.cast(wide, target_type=pl.FP16), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.BF16], out: pl.Out[pl.Tensor[[16, 64], pl.FP16]]
             ) -> pl.Tensor[[16, 64], pl.FP16]:
        out = self.both(x, out)
        return out
'''


def test_a_kernel_mixing_bf16_and_f16_is_a_located_user_error(tmp_path):
    with pytest.raises(UserError) as ei:
        ir.compile(pl.parse(MIXED, filename="mixed.py"), output_dir=tmp_path / "x", dump_passes=False)
    msg = str(ei.value)
    assert "mixed.py:7:" in msg and "kernel 'both' uses both BF16 and FP16" in msg, msg
    assert "ptoas 0.1.1 cannot lower bf16" in msg and "pl.cast through FP32" in msg, msg


def test_a_bf16_constant_outside_f16_range_is_a_located_user_error(tmp_path):
    src = ROUND_TRIP.replace("0.1)", "1.0e6)")
    with pytest.raises(UserError) as ei:
        ir.compile(pl.parse(src, filename="big.py"), output_dir=tmp_path / "b", dump_passes=False)
    msg = str(ei.value)
    assert "big.py:" in msg and "BF16 constant 1000000.0" in msg and "outside f16's range" in msg, msg


NARROW_PTO = """\
!f = !pto.tile_buf<loc=ub, dtype=f32, rows=16, cols=32, v_row=16, v_col=32, blayout=row_major, slayout=none_box, \
fractal=512, pad=0>
!h = !pto.tile_buf<loc=ub, dtype=bf16, rows=16, cols=32, v_row=16, v_col=32, blayout=row_major, slayout=none_box, \
fractal=512, pad=0>
module {
  func.func @narrow(%x: !pto.ptr<f32>, %y: !pto.ptr<bf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %gx = pto.make_tensor_view %x, shape = [%c16, %c32] strides = [%c32, %c1] : !pto.tensor_view<2xf32>
    %gy = pto.make_tensor_view %y, shape = [%c16, %c32] strides = [%c32, %c1] : !pto.tensor_view<2xbf16>
    %vx = pto.subview %gx, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<2xf32> -> !pto.tile_view<16x32xf32>
    %vy = pto.subview %gy, offsets = [%c0, %c0], sizes = [%c16, %c32] : !pto.tensor_view<2xbf16> -> !pto.tile_view<16x32xbf16>
    %a = pto.alloc_tile : !f
    %b = pto.alloc_tile : !h
    pto.tload ins(%vx : !pto.tile_view<16x32xf32>) outs(%a : !f)
    pto.tcvt ins(%a : !f) outs(%b : !h)
    pto.tstore ins(%b : !h) outs(%vy : !pto.tile_view<16x32xbf16>)
    return
  }
}
"""


def test_run_pto_takes_a_hand_written_bf16_kernel(tmp_path, monkeypatch):
    from pypto.runtime import run_pto

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "narrow.pto"
    path.write_text(NARROW_PTO)
    x = torch.randn(16, 32, generator=torch.Generator().manual_seed(2))
    y = torch.zeros(16, 32, dtype=torch.bfloat16)
    run_pto(path, x, y, directions={"y": "out"})
    assert torch.equal(_bits(y), _bits(x.to(torch.bfloat16)))


HANDOFF = '''
import pypto.language as pl

@pl.program
class Handoff:
    @pl.function(type=pl.FunctionType.InCore)
    def probs(self, s: pl.Tensor[[16, 64], pl.FP32], p: pl.Out[pl.Tensor[[16, 64], pl.BF16]]
              ) -> pl.Tensor[[16, 64], pl.BF16]:
        t = pl.load(s, [0, 0], [16, 64], target_memory=pl.MemorySpace.Vec)
        tmp = pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        e = pl.exp(pl.row_expand_sub(t, pl.row_max(t, tmp)))
        return pl.store(pl.cast(e, target_type=pl.BF16), [0, 0], p)

    @pl.function(type=pl.FunctionType.InCore)
    def weigh(self, p: pl.Tensor[[16, 64], pl.BF16], v: pl.Tensor[[64, 32], pl.BF16],
              o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        pm = pl.load(p, [0, 0], [16, 64], target_memory=pl.MemorySpace.Mat)
        vm = pl.load(v, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(pm, target_memory=pl.MemorySpace.Left), pl.move(vm, target_memory=pl.MemorySpace.Right))
        return pl.store(acc, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, s: pl.Tensor[[16, 64], pl.FP32], v: pl.Tensor[[64, 32], pl.BF16],
             o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        p = pl.create_tensor([16, 64], dtype=pl.BF16)
        p = self.probs(s, p)
        o = self.weigh(p, v, o)
        return o
'''


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bf16_probabilities_cross_from_vector_to_cube_through_gm(tmp_path, platform):
    compiled = ir.compile(pl.parse(HANDOFF, filename="handoff.py"), platform=platform, output_dir=tmp_path / "h",
                          dump_passes=False)
    orch = next((tmp_path / "h" / "orchestration").glob("*.cpp")).read_text()
    assert "DataType::BFLOAT16" in orch
    g = torch.Generator().manual_seed(9)
    s, v = torch.randn(16, 64, generator=g) * 3, torch.randn(64, 32, generator=g).to(torch.bfloat16)
    o = torch.zeros(16, 32)
    compiled(s, v, o)
    p = torch.exp(s - s.max(dim=1, keepdim=True).values).to(torch.bfloat16)
    torch.testing.assert_close(o, p.float() @ v.float(), rtol=1e-2, atol=2e-2)


SCORES = '''
import pypto.language as pl

@pl.program
class Scores:
    @pl.function(type=pl.FunctionType.InCore)
    def qk(self, q: pl.Tensor[[16, 128], pl.BF16], k: pl.Tensor[[64, 128], pl.BF16],
           s: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        ql = pl.move(pl.load(q, [0, 0], [16, 128], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        kt = pl.tile.transpose_view(pl.load(k, [0, 0], [64, 128], target_memory=pl.MemorySpace.Mat))
        return pl.store(pl.matmul(ql, pl.move(kt, target_memory=pl.MemorySpace.Right)), [0, 0], s)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[16, 128], pl.BF16], k: pl.Tensor[[64, 128], pl.BF16],
             s: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        s = self.qk(q, k, s)
        return s
'''


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bf16_scores_against_a_transposed_key_view(tmp_path, platform):
    compiled = ir.compile(pl.parse(SCORES, filename="scores.py"), platform=platform, output_dir=tmp_path / "q",
                          dump_passes=False)
    g = torch.Generator().manual_seed(4)
    q, k = (torch.randn(r, 128, generator=g).to(torch.bfloat16) for r in (16, 64))
    s = torch.zeros(16, 64)
    compiled(q, k, s)
    exact = torch.zeros(16, 64)
    for d in range(128):
        exact = exact + q.float()[:, d:d + 1] * k.float()[:, d:d + 1].T
    assert torch.equal(s, exact)


SPLIT = '''
import pypto.language as pl

@pl.program
class Split:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 32], pl.BF16], b: pl.Tensor[[32, 32], pl.BF16],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP16]]) -> pl.Tensor[[32, 32], pl.FP16]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="mix"):
            am = pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            bm = pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            c = pl.matmul(pl.move(am, target_memory=pl.MemorySpace.Left),
                          pl.move(bm, target_memory=pl.MemorySpace.Right))
            out = pl.store(pl.cast(pl.move(c, target_memory=pl.MemorySpace.Vec), target_type=pl.FP16), [0, 0], out)
        return out
'''


def test_bf16_and_f16_in_different_kernels_of_one_region(tmp_path):
    """The cube half (bf16 operands) is fed the stand-in, the vector half (f16 result) its own .pto."""
    compiled = ir.compile(pl.parse(SPLIT, filename="split.py"), output_dir=tmp_path / "s", dump_passes=False)
    ptoas_dir = tmp_path / "s" / "ptoas"
    assert (ptoas_dir / "mix_aic.bf16-as-f16.pto").is_file() and not (ptoas_dir / "mix_aiv.bf16-as-f16.pto").exists()
    g = torch.Generator().manual_seed(8)
    a, b = (torch.randn(32, 32, generator=g).to(torch.bfloat16) for _ in range(2))
    out = torch.zeros(32, 32, dtype=torch.float16)
    compiled(a, b, out)
    exact = torch.zeros(32, 32)
    for k in range(32):
        exact = exact + a.float()[:, k:k + 1] * b.float()[k:k + 1, :]
    assert torch.equal(out, exact.half())
