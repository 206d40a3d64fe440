"""torch rendering of ``tile.random`` / ``tensor.random``: the frontend program renders the op through the
prelude's ``_random`` and the lowered one renders pypto's integer-op lowering of it; both must give the
A5 instruction's words (a plain-Python model of its lanes) bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.debug import torch_codegen
from pypto.driver import lower

pytestmark = pytest.mark.torch
_M = 0xFFFFFFFF


def _words(ctr: int, k0: int, k1: int, rounds: int) -> list[int]:
    x = [(ctr >> (32 * i)) & _M for i in range(4)]
    for _ in range(rounds):
        a, b = x[0] * 0xD2511F53, x[2] * 0xCD9E8D57
        x = [(b >> 32) ^ x[1] ^ k0, b & _M, (a >> 32) ^ x[3] ^ k1, a & _M]
        k0, k1 = (k0 + 0x9E3779B9) & _M, (k1 + 0xBB67AE85) & _M
    return x


def _model(key, counter, rows, cols, vcols, rounds) -> np.ndarray:
    start = sum((w & _M) << (32 * i) for i, w in enumerate(counter))
    blocks = -(-vcols // 256)
    out = np.zeros((rows, cols), np.uint32)
    for r in range(rows):
        for c in range(vcols):
            ctr = start + (c & 63) + (r * blocks + (c >> 8)) * (cols // 4)
            out[r, c] = _words(ctr % (1 << 128), key[0] & _M, key[1] & _M, rounds)[(c >> 6) & 3]
    return out


SRC = """import pypto.language as pl

@pl.program
class Rng:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, seed: pl.Scalar[pl.INT32], u: pl.Out[pl.Tensor[[4, 320], pl.UINT32]],
          i: pl.Out[pl.Tensor[[2, 64], pl.INT32]]) -> pl.Tensor[[4, 320], pl.UINT32]:
        a: pl.Tile[[4, 320], pl.UINT32] = pl.tile.random(seed, 0x66, 0xFFFFFFFE, 0xFFFFFFFF, 5, 0, [4, 320],
                                                         valid_shape=[4, 300])
        b: pl.Tensor[[2, 64], pl.INT32] = pl.random(1, 2, 3, 4, 5, 6, [2, 64], dtype=pl.INT32, rounds=7)
        i = pl.assemble(i, b, [0, 0])
        return pl.store(a, [0, 0], u)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, seed: pl.Scalar[pl.INT32], u: pl.Out[pl.Tensor[[4, 320], pl.UINT32]],
             i: pl.Out[pl.Tensor[[2, 64], pl.INT32]]) -> pl.Tensor[[4, 320], pl.UINT32]:
        u = self.k(seed, u, i)
        return u
"""


@pytest.mark.parametrize("stage", ["frontend", "lowered"])
def test_random_renders_the_instructions_words(torch, stage: str) -> None:
    program = pl.parse(SRC)
    ns: dict = {}
    exec(torch_codegen(program if stage == "frontend" else lower(program), check_shapes=True), ns)  # noqa: S102
    u, i = torch.zeros((4, 320), dtype=torch.uint32), torch.zeros((2, 64), dtype=torch.int32)
    ns["main"](-7, u, i)
    want = _model((-7, 0x66), (0xFFFFFFFE, 0xFFFFFFFF, 5, 0), 4, 320, 300, 10)
    np.testing.assert_array_equal(u.view(torch.int32).numpy()[:, :300], want.view(np.int32)[:, :300])
    np.testing.assert_array_equal(i.numpy(), _model((1, 2), (3, 4, 5, 6), 2, 64, 64, 7).view(np.int32))
