"""The bf16 stand-in: what ptoas 0.1.1 is fed for a bf16 unit, what the artifact keeps, the repro command."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

import pypto.language as pl
from pypto import ir
from pypto.backend import bf16_standin
from pypto.backend.ptoas_stage import finish_cpp
from pypto.errors import UserError
from pypto.ir.dtypes import bf16_round, f16_exact

T = "!pto.tile_buf<loc=ub, dtype=bf16, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
UNIT = f'''module {{
  func.func @k(%arg0: !pto.ptr<bf16>, %bf16: index) {{
    %cst_bf16 = arith.constant 1.000000000e-01 : bf16
    %inf = arith.constant 0x7F80 : bf16
    %nnan = arith.constant 0xFFC1 : bf16
    %0 = pto.make_tensor_view %arg0, shape = [%bf16, %bf16] strides = [%bf16, %bf16] : !pto.tensor_view<2xbf16>
    %1 = pto.subview %0, offsets = [%bf16, %bf16], sizes = [%bf16, %bf16] : !pto.tensor_view<2xbf16> -> !pto.tile_view<?x16xbf16>
    %t = pto.alloc_tile : {T}
    pto.tadds ins(%t, %cst_bf16 : {T}, bf16) outs(%t : {T}) loc("kernels/my_bf16.py":3:4)
    return
  }}
}}
'''


def test_standin_respells_every_bf16_type_and_nothing_else():
    text = bf16_standin.to_standin(UNIT, "unit 'k'")
    assert bf16_standin.uses(UNIT) == (True, False) and bf16_standin.uses(text) == (False, True)
    for frag in ("!pto.ptr<f16>", "tensor_view<2xf16>", "tile_view<?x16xf16>", "dtype=f16", "%cst_bf16 :",
                 ": f16", 'loc("kernels/my_bf16.py":3:4)', "%bf16: index", "[%bf16, %bf16]"):
        assert frag in text, frag
    # the constant is written as its exact bf16 value (0.1 -> 0x3DCD), the inf bit pattern as f16's
    assert "arith.constant 1.000976562e-01 : f16" in text and "arith.constant 0x7C00 : f16" in text
    assert "arith.constant 0xFE00 : f16" in text
    assert text.count("\n") == UNIT.count("\n")


def test_standin_refuses_units_mixing_bf16_and_f16_and_unrepresentable_constants():
    with pytest.raises(UserError, match="unit 'k' uses both bf16 and f16"):
        bf16_standin.to_standin(UNIT.replace("!pto.ptr<bf16>", "!pto.ptr<f16>"), "unit 'k'")
    with pytest.raises(UserError, match="outside the range f16 can hold"):
        bf16_standin.to_standin(UNIT.replace("1.000000000e-01 : bf16", "1.000000000e+30 : bf16"), "unit 'k'")


def test_retype_cpp_names_bfloat16_t_for_every_half():
    cpp = "void k(__gm__ half* v1, half v2) {\n  Tile<TileType::Vec, half, 16, 16> t;\n  GlobalTensor<half, S> g;\n  int halfway = 0;\n}\n"
    assert bf16_standin.retype_cpp(cpp) == cpp.replace("half*", "bfloat16_t*").replace("half v2", "bfloat16_t v2") \
        .replace("Vec, half", "Vec, bfloat16_t").replace("<half,", "<bfloat16_t,")


def test_bf16_round_and_f16_exact():
    assert bf16_round(0.1) == 0.10009765625 and bf16_round(1 + 2 ** -8) == 1.0 and bf16_round(1 + 3 * 2 ** -8) == 1 + 2 ** -6
    assert bf16_round(3.4e38) == float("inf") and bf16_round(-1e-40) < 0 and bf16_round(1e-50) == 0.0
    assert f16_exact(0.10009765625) and f16_exact(65504.0) and not f16_exact(65536.0) and not f16_exact(1e-9)


SRC = '''
import pypto.language as pl

@pl.program
class Pair:
    @pl.function(type=pl.FunctionType.InCore)
    def narrow(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.BF16]]
               ) -> pl.Tensor[[16, 64], pl.BF16]:
        return pl.store(pl.cast(pl.load(x, [0, 0], [16, 64]), target_type=pl.BF16), [0, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def plain(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
              ) -> pl.Tensor[[16, 64], pl.FP32]:
        return pl.store(pl.exp(pl.load(x, [0, 0], [16, 64])), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], h: pl.Out[pl.Tensor[[16, 64], pl.BF16]],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        h = self.narrow(x, h)
        out = self.plain(x, out)
        return out
'''


def _ptoas() -> Path:
    from pypto.toolchain.ptoas import find_ptoas

    exe = find_ptoas()
    if exe is None:
        pytest.skip("ptoas 0.1.1 not installed")
    return exe


def test_skip_ptoas_artifact_keeps_the_true_bf16_text(tmp_path):
    ir.compile(pl.parse(SRC, filename="pair.py"), output_dir=tmp_path / "s", skip_ptoas=True, dump_passes=False)
    pto = (tmp_path / "s" / "kernels" / "aiv" / "narrow.pto").read_text()
    assert "dtype=bf16" in pto and "!pto.ptr<bf16>" in pto and bf16_standin.uses(pto) == (True, False)
    assert not list((tmp_path / "s").rglob(f"*.{bf16_standin.SUFFIX}"))


@pytest.mark.ptoas
@pytest.mark.parametrize("batch", [True, False])
def test_assembled_artifact_logs_the_standin_and_its_repro_reproduces_the_run(tmp_path, batch):
    exe = _ptoas()
    out = tmp_path / "a"
    ir.compile(pl.parse(SRC, filename="pair.py"), output_dir=out, dump_passes=False, dump_ptoas_passes=not batch)
    ptoas_dir = out / "ptoas"
    assert bf16_standin.uses((ptoas_dir / "narrow.pto").read_text()) == (True, False)
    fed = (ptoas_dir / f"narrow.{bf16_standin.SUFFIX}").read_text()
    assert fed == bf16_standin.to_standin((ptoas_dir / "narrow.pto").read_text(), "x")
    assert not (ptoas_dir / f"plain.{bf16_standin.SUFFIX}").exists()  # an f32 unit is fed its own .pto
    log = (ptoas_dir / "narrow.log").read_text()
    assert "# bf16 stand-in:" in log and "# bf16 stand-in:" not in (ptoas_dir / "plain.log").read_text()
    cpp = (ptoas_dir / "narrow.cpp").read_text()
    assert "__gm__ bfloat16_t*" in cpp and "Tile<TileType::Vec, bfloat16_t" in cpp and not re.search(r"\bhalf\b", cpp)
    assert "bfloat16_t" in (out / "kernels" / "aiv" / "narrow.cpp").read_text()
    # the logged command, run by hand, is fed the stand-in and gives the same C++ (before the retype)
    argv = shlex.split(log.splitlines()[0].removeprefix("$ "))
    assert argv[1] == f"ptoas/narrow.{bf16_standin.SUFFIX}"
    argv[argv.index("-o") + 1] = str(tmp_path / "again.cpp")
    subprocess.run([str(exe), *argv[1:]], cwd=out, capture_output=True, check=True, timeout=120)
    assert finish_cpp((tmp_path / "again.cpp").read_text(), True) == cpp


@pytest.mark.ptoas
def test_bf16_artifacts_are_byte_identical_across_compiles(tmp_path):
    _ptoas()
    for d in ("one", "two"):
        ir.compile(pl.parse(SRC, filename="pair.py"), output_dir=tmp_path / d, dump_passes=False)
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*")
                   if p.is_file() and p.suffix in (".pto", ".cpp", ".log", ".py", ".json"))
    assert any(str(f).endswith(bf16_standin.SUFFIX) for f in files)
    for f in files:
        assert (tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes(), f


MM = '''
import pypto.language as pl

@pl.program
class Mm:
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, a: pl.Tensor[[32, 64], pl.BF16], b: pl.Tensor[[64, 32], pl.BF16],
           out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        am = pl.load(a, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
        bm = pl.load(b, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
        acc = pl.matmul(pl.move(am, target_memory=pl.MemorySpace.Left), pl.move(bm, target_memory=pl.MemorySpace.Right))
        acc = pl.matmul_acc(acc, pl.move(am, target_memory=pl.MemorySpace.Left),
                            pl.move(bm, target_memory=pl.MemorySpace.Right))
        return pl.store(acc, [0, 0], out)

    @pl.function(type=pl.FunctionType.InCore)
    def probs(self, s: pl.Tensor[[32, 64], pl.FP32], p: pl.Out[pl.Tensor[[32, 64], pl.BF16]]
              ) -> pl.Tensor[[32, 64], pl.BF16]:
        t = pl.load(s, [0, 0], [32, 64])
        tmp = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        e = pl.exp(pl.row_expand_sub(t, pl.row_max(t, tmp)))
        return pl.store(pl.cast(e, target_type=pl.BF16), [0, 0], p)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.BF16], b: pl.Tensor[[64, 32], pl.BF16], s: pl.Tensor[[32, 64], pl.FP32],
             p: pl.Out[pl.Tensor[[32, 64], pl.BF16]], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]
             ) -> pl.Tensor[[32, 32], pl.FP32]:
        p = self.probs(s, p)
        out = self.mm(a, b, out)
        return out
'''


@pytest.mark.ptoas
def test_standin_cpp_is_the_f16_programs_cpp_with_the_type_renamed(tmp_path):
    """ptoas makes the same decisions for the stand-in as for the same program written in FP16."""
    _ptoas()
    ir.compile(pl.parse(MM, filename="mm.py"), output_dir=tmp_path / "bf", dump_passes=False)
    ir.compile(pl.parse(MM.replace("pl.BF16", "pl.FP16"), filename="mm.py"), output_dir=tmp_path / "h",
               dump_passes=False)
    for unit in ("mm", "probs"):
        bf, h = (tmp_path / d / "ptoas" for d in ("bf", "h"))
        assert (bf / f"{unit}.{bf16_standin.SUFFIX}").read_text() == (h / f"{unit}.pto").read_text()
        want = (h / f"{unit}.cpp").read_text()
        assert "half" in want and (bf / f"{unit}.cpp").read_text() == bf16_standin.retype_cpp(want)
