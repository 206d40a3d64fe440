"""ExpandMixedKernel: a loop nest mixing cube and vector work with too many iterations to unroll is split
in two loops over the same iterations (``pypto.passes._loop_fission``): the cube loop stores each
iteration's matmul result into a GM temp at row ``i * rows``, the vector loop loads it back from there.
A nest whose cube half reads what its vector half writes keeps the located refusal."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir.function import FunctionType
from tests.passes.filecheck import filecheck

M, K, N, JI = 16, 32, 64, 2
JB = 12  # 12 x 2 = 24 iterations in all, more than the 16 a mixed loop nest is unrolled to


def _kernel(lhs: str, jb: int = JB) -> str:
    """DSL source of ``main(a, w, out)``: ``out[:, j] = out[:, j] + lhs @ w[:, j]`` over a 2-level nest of
    column blocks ``j``, in one InCore kernel; ``lhs`` is computed (vector work) before the nest."""
    cols = f"N * {jb} * JI"
    return f"""import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def acc_proj(self, a: pl.Tensor[[M, K], pl.FP32], w: pl.Tensor[[K, {cols}], pl.FP32],
                 out: pl.Out[pl.Tensor[[M, {cols}], pl.FP32]]) -> pl.Tensor[[M, {cols}], pl.FP32]:
        a_t = pl.mul(pl.slice(a, [M, K], [0, 0]), 2.0)
        for jb in pl.range({jb}):
            j0 = jb * (N * JI)
            for ji in pl.range(0, N * JI, N):
                j = j0 + ji
                prev = pl.slice(out, [M, N], [0, j])
                nxt = pl.add(prev, pl.matmul({lhs}, pl.slice(w, [K, N], [0, j])))
                out = pl.assemble(out, nxt, [0, j])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], w: pl.Tensor[[K, {cols}], pl.FP32],
             out: pl.Out[pl.Tensor[[M, {cols}], pl.FP32]]) -> pl.Tensor[[M, {cols}], pl.FP32]:
        out = self.acc_proj(a, w, out)
        return out
"""


SPLIT = _kernel("a_t")
# the matmul reads a block of ``out``, which the vector half of every iteration writes; 20 outer iterations
# are too many to unroll as well
CARRIED = _kernel("pl.slice(out, [M, K], [0, 0])", jb=20)


# vector -> cube: each iteration scales a block of ``a`` (vector), then multiplies it and stores the product
VEC_FIRST = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def scaled_proj(self, a: pl.Tensor[[M, K * JB * JI], pl.FP32], w: pl.Tensor[[K, N * JB * JI], pl.FP32],
                    out: pl.Out[pl.Tensor[[M, N * JB * JI], pl.FP32]]) -> pl.Tensor[[M, N * JB * JI], pl.FP32]:
        for jb in pl.range(JB):
            for ji in pl.range(JI):
                blk = jb * JI + ji
                x = pl.mul(pl.slice(a, [M, K], [0, blk * K]), 2.0)
                out = pl.assemble(out, pl.matmul(x, pl.slice(w, [K, N], [0, blk * N])), [0, blk * N])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K * JB * JI], pl.FP32], w: pl.Tensor[[K, N * JB * JI], pl.FP32],
             out: pl.Out[pl.Tensor[[M, N * JB * JI], pl.FP32]]) -> pl.Tensor[[M, N * JB * JI], pl.FP32]:
        out = self.scaled_proj(a, w, out)
        return out
"""


def _parse(src: str) -> pl.Program:
    return pl.parse(src, env={"M": M, "K": K, "N": N, "JI": JI, "JB": JB})


def _lower(src: str) -> pl.Program:
    from pypto.driver import lower

    return lower(_parse(src))


def _kernels(prog, kind):
    return [f for f in prog.functions.values() if f.func_type is kind]


def test_the_nest_becomes_a_cube_loop_storing_and_a_vector_loop_loading():
    prog = _lower(SPLIT)
    (aic,) = _kernels(prog, FunctionType.AIC)
    # the scaling before the loop is vector work too: a first AIV stage, then the cube loop, then the vector loop
    prep, aiv = sorted(_kernels(prog, FunctionType.AIV), key=lambda f: f.name)
    assert "pl.range" not in prep.as_python()
    filecheck(aic.as_python(), f"""
        CHECK: pl.range({JB})
        CHECK: pl.range({JI})
        CHECK: pl.tile.matmul(
        CHECK-NOT: pl.tile.add(
        CHECK: = pl.tile.store(t__tile, [(jb__idx_v0 * {JI} + ji_k) * {M}, 0], t_loop_gm)
    """)
    filecheck(aiv.as_python(), f"""
        CHECK: pl.range({JB}, init_values=
        CHECK: pl.range({JI}, init_values=
        CHECK: = pl.tile.load(t_loop_gm, [(jb__idx_v0 * {JI} + ji_k) * {M}, 0]
        CHECK-NOT: pl.tile.matmul(
        CHECK: pl.tile.add(
        CHECK: pl.tile.store(
    """)
    main = prog.functions["main"].as_python()
    filecheck(main, f"""
        CHECK: pl.tensor.create([{JB * JI * M}, {N}], dtype=pl.FP32
        CHECK: self.{aic.name}(
        CHECK: self.{aiv.name}(
    """)


def test_a_cube_half_reading_what_the_vector_half_writes_keeps_the_refusal():
    with pytest.raises(UnsupportedFeatureError, match="for-loop that mixes cube ops .* with vector ops") as exc:
        _lower(CARRIED)
    assert exc.value.span.line == 9  # the outer ``for jb``
    assert "(both halves touch 'out' and one of them writes it)" in str(exc.value)  # why no split
    assert "do the cube work in one loop and the vector work in another" in (exc.value.hint or "")


def test_a_nest_with_a_runtime_trip_count_is_refused_saying_so():
    src = _kernel("a_t", jb=20).replace("for jb in pl.range(20):", "for jb in pl.range(nb):")
    src = src.replace("pl.FP32]]) -> pl.Tensor[[M, N * 20 * JI], pl.FP32]:\n        a_t",
                      "pl.FP32]], nb: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, N * 20 * JI], pl.FP32]:\n        a_t", 1)
    src = src.replace("self.acc_proj(a, w, out)", "self.acc_proj(a, w, out, 20)")
    with pytest.raises(UnsupportedFeatureError, match=r"cannot be split .*\(its trip count is not a constant\)") as exc:
        _lower(src)
    assert exc.value.span.line == 9


def test_a_split_needing_a_huge_buffer_is_refused_naming_the_loop():
    with pytest.raises(UnsupportedFeatureError, match=r"GM buffer of 64\.\d MiB .* more than 64 MiB") as exc:
        _lower(_kernel("a_t", jb=8200))  # 16400 iterations x a 16 x 64 FP32 tile
    assert exc.value.span.line == 9


def _check_accumulation(src: str, jb: int, platform: str, tmp_path) -> None:
    from pypto import ir

    rng = np.random.default_rng(7)
    a = rng.standard_normal((M, K)).astype(np.float32)
    w = rng.standard_normal((K, N * jb * JI)).astype(np.float32)
    out = rng.standard_normal((M, N * jb * JI)).astype(np.float32)
    expected = out + (2.0 * a) @ w
    ir.compile(_parse(src), platform=platform, output_dir=str(tmp_path / "build"))(a, w, out)
    np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-3)


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_split_nest_matches_numpy(platform, tmp_path):
    _check_accumulation(SPLIT, JB, platform, tmp_path)


def test_a_nest_of_at_most_16_iterations_is_still_unrolled():
    prog = _lower(_kernel("a_t", jb=4))  # 4 x 2 iterations
    assert len(_kernels(prog, FunctionType.AIC)) == 1
    assert all("pl.range" not in f.as_python() for f in prog.functions.values() if f.is_incore)


@pytest.mark.sim
@pytest.mark.ptoas
def test_the_unrolled_nest_matches_numpy(tmp_path):
    # the unrolled copies thread ``out`` through plain copies: the kernel still returns its output param
    _check_accumulation(_kernel("a_t", jb=4), 4, "a2a3sim", tmp_path)


def test_vector_then_cube_puts_the_vector_loop_first():
    prog = _lower(VEC_FIRST)
    (aiv,), (aic,) = _kernels(prog, FunctionType.AIV), _kernels(prog, FunctionType.AIC)
    filecheck(aiv.as_python(), f"""
        CHECK: pl.range({JB})
        CHECK: pl.tile.muls(
        CHECK: = pl.tile.store(x__tile, [(jb__idx_v0 * {JI} + ji__idx_v0) * {M}, 0], x_loop_gm)
    """)
    filecheck(aic.as_python(), f"""
        CHECK: pl.range({JB}
        CHECK: = pl.tile.load(x_loop_gm, [(jb__idx_v0 * {JI} + ji__idx_v0) * {M}, 0], [{M}, {K}], [{M}, {K}], target_memory=pl.Mem.Mat)
        CHECK: pl.tile.matmul(
    """)
    filecheck(prog.functions["main"].as_python(), f"""
        CHECK: self.{aiv.name}(
        CHECK: self.{aic.name}(
    """)


@pytest.mark.sim
@pytest.mark.ptoas
def test_the_vector_first_split_matches_numpy(tmp_path):
    from pypto import ir

    rng = np.random.default_rng(8)
    a = rng.standard_normal((M, K * JB * JI)).astype(np.float32)
    w = rng.standard_normal((K, N * JB * JI)).astype(np.float32)
    out = np.zeros((M, N * JB * JI), np.float32)
    blocks = [2.0 * a[:, b * K:(b + 1) * K] @ w[:, b * N:(b + 1) * N] for b in range(JB * JI)]
    ir.compile(_parse(VEC_FIRST), platform="a2a3sim", output_dir=str(tmp_path / "build"))(a, w, out)
    np.testing.assert_allclose(out, np.concatenate(blocks, axis=1), rtol=1e-3, atol=1e-3)
