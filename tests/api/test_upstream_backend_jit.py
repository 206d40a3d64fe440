"""Upstream's ``pypto.backend`` chip model, ``pypto.jit.cache``, ``pypto.jit.specializer``, ``pypto.tools.ir_trace``."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from pypto.backend import (
    Backend,
    Backend910B,
    Backend950,
    BackendType,
    Cluster,
    Core,
    Die,
    Mem,
    SoC,
    get_backend_instance,
    get_backend_type,
    is_backend_configured,
    reset_for_testing,
    set_backend_type,
)
from pypto.ir.dtypes import DataType
from pypto.ir.enums import CoreType, MemorySpace

KIB = 1024


def test_910b_and_950_carry_upstreams_chip_numbers() -> None:
    b, e = Backend910B.instance(), Backend950.instance()
    assert b is Backend910B.instance() and b.get_type_name() == "910B" and e.get_type_name() == "950"
    assert (b.get_core_count(CoreType.CUBE), b.get_core_count(CoreType.VECTOR)) == (24, 48)
    assert (e.get_core_count(CoreType.CUBE), e.get_core_count(CoreType.VECTOR)) == (36, 72)
    assert (b.soc.total_die_count(), b.soc.total_cluster_count(), b.soc.total_core_count()) == (1, 72, 72)
    assert (e.soc.total_die_count(), e.soc.total_cluster_count(), e.soc.total_core_count()) == (2, 36, 108)
    sizes = {m: (b.get_mem_size(m), e.get_mem_size(m)) for m in MemorySpace}
    assert sizes[MemorySpace.Acc] == (128 * KIB, 256 * KIB) and sizes[MemorySpace.Vec] == (184 * KIB, 240 * KIB)
    assert sizes[MemorySpace.Bias] == (1 * KIB, 4 * KIB) and sizes[MemorySpace.LeftScale] == (0, 4 * KIB)
    assert b.find_mem_path(MemorySpace.DDR, MemorySpace.Left) == [MemorySpace.DDR, MemorySpace.Mat, MemorySpace.Left]
    assert b.find_mem_path(MemorySpace.Acc, MemorySpace.Vec) == [MemorySpace.Acc, MemorySpace.DDR, MemorySpace.Vec]
    assert e.find_mem_path(MemorySpace.Acc, MemorySpace.Vec) == [MemorySpace.Acc, MemorySpace.Vec]
    assert b.find_mem_path(MemorySpace.Left, MemorySpace.DDR) == []
    assert b.find_mem_path(MemorySpace.Vec, MemorySpace.Vec) == [MemorySpace.Vec]


def test_hierarchy_counts_compose() -> None:
    core = Core(CoreType.VECTOR, [Mem(MemorySpace.Vec, 1024, 32)])
    cube = Core(CoreType.CUBE, [])
    cluster = Cluster({core: 2, cube: 1})
    die = Die(cluster, 3)
    soc = SoC({die: 2})
    assert cluster.total_core_count() == 3 and cluster.core_counts == {core: 2, cube: 1}
    assert (die.total_cluster_count(), die.total_core_count()) == (3, 9)
    assert (soc.total_die_count(), soc.total_cluster_count(), soc.total_core_count()) == (2, 6, 18)
    assert Backend(soc).get_core_count(CoreType.VECTOR) == 12 and core.mems[0].alignment == 32


def test_backend_round_trips_through_a_file(tmp_path) -> None:
    path = str(tmp_path / "b.msgpack")
    Backend950.instance().export_to_file(path)
    back = Backend.import_from_file(path)
    assert back.soc == Backend950.instance().soc and back.get_type_name() == "950"
    assert back.find_mem_path(MemorySpace.DDR, MemorySpace.RightScale) == [MemorySpace.DDR, MemorySpace.Mat,
                                                                          MemorySpace.RightScale]


def test_backend_configuration_is_set_once() -> None:
    reset_for_testing()
    try:
        assert not is_backend_configured()
        with pytest.raises(ValueError, match="not configured"):
            get_backend_type()
        set_backend_type(BackendType.Ascend950)
        set_backend_type(BackendType.Ascend950)  # the same again: fine
        assert is_backend_configured() and get_backend_type() is BackendType.Ascend950
        assert get_backend_instance() is Backend950.instance()
        assert get_backend_instance(BackendType.Ascend910B) is Backend910B.instance()
        with pytest.raises(ValueError, match="already set to Ascend950, cannot change to Ascend910B"):
            set_backend_type(BackendType.Ascend910B)
    finally:
        reset_for_testing()
    assert not is_backend_configured()


def test_cache_keys_follow_what_changes_the_artifact() -> None:
    from pypto.jit.cache import ScalarCacheInfo, TensorCacheInfo, compute_source_hash, make_cache_key

    h = compute_source_hash(["def f(): ...", "def g(): ..."])
    assert len(h) == 16 and h == compute_source_hash(["def f(): ...", "def g(): ..."])
    assert h != compute_source_hash(["def f(): ...", "def g(): pass"])

    def key(rows: int, scale: float = 2.0, platform: str = "a2a3sim") -> tuple:
        return make_cache_key(h, ["x", "s", "y"], {"x": (rows, 64), "y": (rows, 64)},
                              {"x": DataType.FP32, "y": DataType.FP32}, {("x", 0), ("y", 0)}, {"s": scale},
                              platform=platform)

    k = key(128)
    assert k[3] == (TensorCacheInfo("x", (None, 64), DataType.FP32), TensorCacheInfo("y", (None, 64), DataType.FP32))
    assert k[4] == (ScalarCacheInfo("s", 2.0),)
    assert hash(k) == hash(key(256)) and k == key(256)  # a dynamic axis: any extent shares the entry
    assert k != key(128, scale=3.0) and k != key(128, platform="a5sim")


def test_l2_store_and_lookup(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pypto.jit import cache

    monkeypatch.setattr(cache, "_l2_root", lambda: tmp_path / "l2")
    key = cache.make_cache_key("abc", ["x"], {"x": (4,)}, {"x": DataType.FP32}, set(), {})
    assert cache.l2_lookup(key) is None
    art = tmp_path / "art"
    art.mkdir()
    (art / "compiled_meta.json").write_text("{}")
    cache.l2_store(key, str(art))
    found = cache.l2_lookup(key)
    assert found is not None and (tmp_path / "l2").resolve() in Path(found).resolve().parents
    assert (Path(found) / "compiled_meta.json").read_text() == "{}"
    shutil.rmtree(found)
    assert cache.l2_lookup(key) is None  # the stored copy is gone: a miss


def test_specializer_writes_a_program_that_parses_compiles_and_runs(tmp_path, torch) -> None:
    import upstream_programs as k

    import pypto.language as pl
    from pypto import ir
    from pypto.jit.specializer import (
        DynDim,
        SpecializeContext,
        Specializer,
        TensorMeta,
        build_specialize_context,
        specialize,
    )

    metas = {"x": TensorMeta((128, 64), DataType.FP32), "y": TensorMeta((128, 64), DataType.FP32)}
    dep = build_specialize_context(k.add_scalar_tile, "add_scalar_tile", "incore", None, metas, {"a": 2.5},
                                   {"a": DataType.FP32}, [])
    entry = build_specialize_context(k.add_scalar, "add_scalar", "orchestration", None, metas, {"a": 2.5},
                                     {"a": DataType.FP32}, ["add_scalar_tile"])
    assert isinstance(entry, SpecializeContext) and entry.param_names == ["x", "a", "y"]
    src = specialize("AddScalar", [dep, entry])
    assert src == Specializer("AddScalar", [dep, entry]).specialize()
    assert "a: pl.Scalar[pl.FP32]" in src and "pl.add(t, 2.5)" in src and "[128, 64]" in src
    assert "self.add_scalar_tile(x, y, 2.5)" in src and "pl.Out[pl.Tensor[[128, 64], pl.FP32]]" in src
    compiled = ir.compile(pl.parse(src), output_dir=tmp_path / "out")
    assert compiled.param_names == ["x", "a", "y"]  # the specialized scalar stays a parameter, as upstream's
    x, y = torch.randn(128, 64), torch.zeros(128, 64)
    compiled(x, 2.5, y)
    np.testing.assert_allclose(y.numpy(), x.numpy() + 2.5, rtol=1e-6, atol=1e-6)

    dyn = TensorMeta((DynDim("M", "M", 128), 64), DataType.FP32)
    assert dyn.static_shape() == (128, 64) and dyn.dynamic_dim_indices() == {0}
    ctx = build_specialize_context(k.add_scalar, "add_scalar", "orchestration", None, {"x": dyn, "y": dyn},
                                   {"a": 1.0}, {"a": DataType.FP32}, [])
    assert ctx.dynamic_dims == {("x", 0), ("y", 0)} and ctx.dynvar_for("x", 0) == "M"
    assert 'M = pl.dynamic(\'M\')' in specialize("P", [ctx]) and "pl.Tensor[[M, 64], pl.FP32]" in specialize("P", [ctx])
    with pytest.raises(ValueError, match="neither a tensor"):
        specialize("P", [build_specialize_context(k.add_scalar, "add_scalar", None, None, {}, {}, {}, [])])
    with pytest.raises(ValueError, match="func_type 'kernel'"):
        specialize("P", [build_specialize_context(k.add_scalar, "add_scalar", "kernel", None, metas, {},
                                                  {"a": DataType.FP32}, [])])


def test_ir_trace_is_upstreams_package(tmp_path) -> None:
    from pypto.tools import ir_trace
    from pypto.tools.ir_trace import cli, diff, discovery, html, model

    assert ir_trace.IRTraceError is model.IRTraceError and ir_trace.main is cli.main
    with pytest.raises(model.IRTraceError, match="no 00_frontend.py"):
        discovery.collect(tmp_path)
    (tmp_path / "00_frontend.py").write_text("def f():\n    x = 1\n")
    (tmp_path / "01_after_P.py").write_text("def f():\n    x = 2\n")
    dumps = discovery.collect(tmp_path)
    assert [d.name for d in dumps] == ["frontend", "P"]
    assert diff.diff_pass(dumps[0], dumps[1], 1)["added"] == 1
    assert "IR trace" in html.render(tmp_path)
