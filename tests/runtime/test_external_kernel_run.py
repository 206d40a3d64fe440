"""An external kernel (``@pl.function(external_source=...)``) dispatched by a pypto orchestration.

The hand-written kernel lives in ``kernels/aiv/`` and includes a header from ``kernels/common/`` by a relative
path; it reads a tensor, a tensor it writes and a scalar through the runtime's argument array and its SPMD block
index. Checked on both sim platforms against numpy, plus: an edit of the included header rebuilds the kernel,
and a group calling an external kernel is a located refusal.
"""

from __future__ import annotations

import numpy as np
import pytest
from rt_marks import needs_gxx

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError
from pypto.runtime import ChipWorker, RunConfig

pytestmark = [needs_gxx, pytest.mark.sim]

KERNEL = r'''
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
#include "intrinsic.h"
#include "../common/scale.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* x_t = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ ChipTensor* y_t = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
  __gm__ float* x = reinterpret_cast<__gm__ float*>(x_t->buffer.addr) + x_t->start_offset;
  __gm__ float* y = reinterpret_cast<__gm__ float*>(y_t->buffer.addr) + y_t->start_offset;
  int32_t n = static_cast<int32_t>(args[2]);
  int32_t b = get_block_idx(args);
  for (int32_t i = b * n; i < (b + 1) * n; ++i) y[i] = x[i] * kScale + static_cast<float>(b);
  dcci(&y[b * n], SINGLE_CACHE_LINE, CACHELINE_OUT);
}
'''

PROGRAM = '''
import pypto.language as pl

@pl.program
class ScaleAdd:
    @pl.function(type=pl.FunctionType.AIV, external_source={src!r})
    def scale_add(self, x: pl.Tensor[[64], pl.FP32], y: pl.InOut[pl.Tensor[[64], pl.FP32]],
                  n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64], pl.FP32], y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        with pl.spmd(core_num=4):
            y = self.scale_add(x, y, 16)
        return y
'''


def _kernel_tree(root, scale: float) -> str:
    (root / "kernels" / "aiv").mkdir(parents=True, exist_ok=True)
    (root / "kernels" / "common").mkdir(parents=True, exist_ok=True)
    (root / "kernels" / "common" / "scale.h").write_text(f"#pragma once\nstatic constexpr float kScale = {scale}f;\n")
    src = root / "kernels" / "aiv" / "scale_add.cpp"
    src.write_text(KERNEL)
    return str(src)


def _run(program, platform: str) -> np.ndarray:
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    y = np.zeros(64, np.float32)
    with ChipWorker(RunConfig(platform=platform)) as worker:
        worker.run(program, x, y)
    return x, y


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_external_kernel_runs_and_rebuilds_when_its_header_changes(tmp_path, platform: str) -> None:
    src = _kernel_tree(tmp_path, 2.0)
    prog = pl.parse(PROGRAM.format(src=src), filename="scale_add.py")
    compiled = ir.compile(prog, output_dir=tmp_path / "out", platform=platform, dump_passes=False)
    wrapper = (compiled.output_dir / "kernels" / "aiv" / "scale_add.cpp").read_text()
    assert f'#include "{src}"' in wrapper
    assert not (compiled.output_dir / "ptoas").exists()  # no PTO unit for it
    blocks = np.repeat(np.arange(4, dtype=np.float32), 16)
    x, y = _run(compiled, platform)
    np.testing.assert_allclose(y, x * 2.0 + blocks, rtol=1e-6, atol=1e-6)

    _kernel_tree(tmp_path, 3.0)  # the relatively included header changes: a new build key
    compiled = ir.compile(prog, output_dir=tmp_path / "out", platform=platform, dump_passes=False)
    assert (compiled.output_dir / "kernels" / "aiv" / "scale_add.cpp").read_text() != wrapper
    x, y = _run(compiled, platform)
    np.testing.assert_allclose(y, x * 3.0 + blocks, rtol=1e-6, atol=1e-6)


def test_an_external_kernel_in_a_group_is_a_located_refusal(tmp_path) -> None:
    src = _kernel_tree(tmp_path, 2.0)
    text = f'''
import pypto.language as pl

@pl.program
class Grouped:
    @pl.function(type=pl.FunctionType.AIV, external_source={src!r})
    def vec(self, y: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.AIC, external_source={src!r})
    def cube(self, y: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]: ...

    @pl.function(type=pl.FunctionType.Group)
    def both(self, y: pl.InOut[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        y = self.cube(y)
        y = self.vec(y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, y: pl.Out[pl.Tensor[[64], pl.FP32]]) -> pl.Tensor[[64], pl.FP32]:
        y = self.both(y)
        return y
'''
    with pytest.raises(UnsupportedFeatureError, match=r"group 'both' calls the external kernel\(s\)") as e:
        ir.compile(pl.parse(text, filename="grouped.py"), output_dir=tmp_path / "g", platform="a2a3sim",
                   dump_passes=False)
    assert e.value.span.file == "grouped.py" and "pl.spmd" in str(e.value)
