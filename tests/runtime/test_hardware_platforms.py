"""Hardware platforms compile here; running them names what is missing and the commands it would run."""

from __future__ import annotations

import numpy as np
import pytest

from pypto import ir
from pypto.artifact.directory import load_artifact
from pypto.errors import ToolchainError
from pypto.runtime.hardware import build_plan, missing_pieces

SRC = '''
import pypto.language as pl

@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.Orchestration)
    def scale(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.mul(a, 3.0)
        return out
'''


@pytest.mark.parametrize(("platform", "arch"), [("a2a3", "dav-c220-vec"), ("a5", "dav-c310-vec")])
def test_hardware_artifact_and_clear_refusal(tmp_path, platform, arch):
    import pypto.language as pl

    compiled = ir.compile(pl.parse(SRC), output_dir=tmp_path / "o", platform=platform, dump_passes=False)
    assert compiled.platform == platform
    assert (compiled.output_dir / "kernels" / "aiv" / "scale_incore_0.cpp").is_file()
    a = np.ones((64, 64), np.float32)
    with pytest.raises(ToolchainError) as ei:
        compiled(a, np.zeros_like(a))
    text = str(ei.value)
    assert f"platform '{platform}' needs the hardware toolchain" in text
    assert "CANN (set ASCEND_HOME_PATH" in text and f"--cce-aicore-arch={arch}" in text
    assert "ld.lld -e kernel_entry" in text and "hw image" in text


def test_build_plan_lists_every_kernel_and_the_orchestration(tmp_path):
    import pypto.language as pl

    compiled = ir.compile(pl.parse(SRC), output_dir=tmp_path / "o", platform="a2a3", dump_passes=False)
    plan = build_plan(load_artifact(compiled.output_dir), "a2a3", tmp_path / "cann")
    assert [c.argv[0] for c in plan] == ["ccec", "ld.lld", "aarch64-target-linux-gnu-g++"]
    assert f"-I{tmp_path / 'cann' / 'include'}" in plan[0].argv
    assert any("device" in m for m in missing_pieces(None))
