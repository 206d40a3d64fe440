"""Lowerings for ops ptoas 0.1.1 has no instruction for: concat, assemble (deferred block stores), fillpad."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from ptocheck import verify_text

import pypto.language as pl
from pypto.codegen import generate
from pypto.errors import UserError
from pypto.runtime import RunConfig

CFG = RunConfig(platform="a2a3sim")


def _pto(kernel, *shapes: tuple[int, ...]) -> str:
    program = kernel.lower(*(np.zeros(s, dtype=np.float32) for s in shapes), config=CFG)
    art = generate(program, backend_type="Ascend910B", platform="a2a3sim", runtime="tensormap_and_ringbuffer",
                   emit_source_loc=False)
    return "\n".join(u.pto for u in art.units)


def _stores(text: str) -> list[tuple[str, str]]:
    """(source tile, subview offsets) of every tstore, in order."""
    views = dict(re.findall(r"%(\w+) = pto\.subview %\w+, offsets = \[([^\]]*)\]", text))
    return [(src, views[dst]) for src, dst in re.findall(r"pto\.tstore ins\(%(\w+) : [^)]*\) outs\(%(\w+)", text)]


@pl.jit
def concat_store(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.concat(pl.load(a, [0, 0], [32, 16]), pl.load(b, [0, 0], [32, 16])), [0, 0], out)
    return out


@pl.jit
def concat_then_add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.concat(pl.load(a, [0, 0], [32, 16]), pl.load(b, [0, 0], [32, 16]))
        pl.store(pl.add(c, 1.0), [0, 0], out)
    return out


@pl.jit
def assemble_store(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.assemble(pl.load(x, [0, 0], [64, 64]), pl.load(y, [0, 0], [16, 32]), [16, 32])
        pl.store(t, [0, 0], out)
    return out


@pl.jit
def assemble_then_exp(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.assemble(pl.load(x, [0, 0], [64, 64]), pl.load(y, [0, 0], [16, 32]), [16, 32])
        pl.store(pl.exp(t), [0, 0], out)
    return out


@pl.jit
def fillpad_max(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 64], valid_shape=[20, 64])
        pl.store(pl.fillpad(t, pad_value=pl.PadValue.max), [0, 0], out)
    return out


def test_concat_is_two_stores_at_column_offsets(tmp_path: Path) -> None:
    text = _pto(concat_store, (32, 16), (32, 16), (32, 32))
    assert "tconcat" not in text and "pto.subset" not in text
    assert [offs for _, offs in _stores(text)] == ["%c0, %c0", "%c0, %c16"]
    verify_text(tmp_path, "concat", text)


def test_assemble_stores_target_then_block(tmp_path: Path) -> None:
    text = _pto(assemble_store, (64, 64), (16, 32), (64, 64))
    stores = _stores(text)
    assert [offs for _, offs in stores] == ["%c0, %c0", "%c16, %c32"]
    assert "sizes = [%c16, %c32]" in text
    verify_text(tmp_path, "assemble", text)


@pytest.mark.parametrize(("kernel", "shapes", "op"), [
    (concat_then_add, ((32, 16), (32, 16), (32, 32)), "tile.concat"),
    (assemble_then_exp, ((64, 64), (16, 32), (64, 64)), "tile.assemble"),
])
def test_deferred_result_used_as_operand_is_rejected(kernel, shapes, op: str) -> None:
    with pytest.raises(UserError) as info:
        _pto(kernel, *shapes)
    msg = str(info.value)
    assert op in msg and "ptoas 0.1.1" in msg and "can only be stored" in msg
    assert "store" in (info.value.hint or "")


def test_fillpad_fills_into_full_tile_with_pad(tmp_path: Path) -> None:
    text = _pto(fillpad_max, (32, 64), (32, 64))
    m = re.search(r"pto\.tfillpad ins\(%\w+ : [^)]*\) outs\(%\w+ : ([^)]*)\)", text)
    assert m is not None, text
    assert "v_row=32, v_col=64" in m.group(1) and "pad=2" in m.group(1)
    verify_text(tmp_path, "fillpad", text)


@pytest.mark.sim
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_concat_operands_are_not_reused_before_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A same-shape tile computed between the concat and its store must not take an operand's buffer."""
    @pl.jit
    def concat_late_store(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor], out2: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.concat(pl.load(a, [0, 0], [32, 16]), pl.load(b, [0, 0], [32, 16]))
            e = pl.add(pl.mul(pl.load(a, [0, 0], [32, 16]), 3.0), 1.0)
            pl.store(c, [0, 0], out)
            pl.store(e, [0, 0], out2)
        return out

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((32, 16), dtype=np.float32), rng.standard_normal((32, 16), dtype=np.float32)
    out, out2 = np.zeros((32, 32), np.float32), np.zeros((32, 16), np.float32)
    concat_late_store(a, b, out, out2, config=CFG)
    np.testing.assert_allclose(out, np.concatenate([a, b], axis=1), rtol=0, atol=0)
    np.testing.assert_allclose(out2, a * 3.0 + 1.0, rtol=1e-6, atol=1e-6)
