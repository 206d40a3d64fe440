"""pypto.artifact: the metadata record, the directory's begin/commit, and reading a directory back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pypto.language as pl
from pypto.artifact import (
    META_FILE,
    STALE_MARKERS,
    ArgDirection,
    ArtifactMeta,
    FuncId,
    KernelFunc,
    KernelParam,
    KernelUnit,
    ParamInfo,
    begin,
    commit,
    is_assembled,
    is_complete,
    load_artifact,
    render_kernel_config,
    skip_ptoas_files,
)
from pypto.compiled import CompiledProgram
from pypto.ir.dtypes import DataType

SRC = '''
import pypto.language as pl

N = pl.dynamic("N")

@pl.program
class Scale:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[32, 32], pl.FP16], out: pl.Out[pl.Tensor[[32, 32], pl.FP16]]) \\
            -> pl.Tensor[[32, 32], pl.FP16]:
        t: pl.Tile[[32, 32], pl.FP16] = pl.load(x, [0, 0], [32, 32])
        r: pl.Tensor[[32, 32], pl.FP16] = pl.store(pl.add(t, t), [0, 0], out)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP16], rows: pl.Tensor[[N, 32], pl.INT32],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP16]]) -> pl.Tensor[[32, 32], pl.FP16]:
        out = self.twice(x, out)
        return out
'''


def _meta() -> ArtifactMeta:
    return ArtifactMeta((ParamInfo("x", "In", (32, 32), DataType.FP16), ParamInfo("n", "In", None, DataType.INT64),
                         ParamInfo("y", "Out", (None, 32), DataType.FP32)),
                        1, "a5sim", "Ascend950", "host_build_graph", "0.1.0", extra={"func": "k"})


def test_meta_from_program_records_the_orchestration_signature():
    meta = ArtifactMeta.from_program(pl.parse(SRC, filename="scale.py"), platform="a2a3sim",
                                     backend_type="Ascend910B", runtime="tensormap_and_ringbuffer", toolchain=None)
    assert meta.params == (ParamInfo("x", "In", (32, 32), DataType.FP16),
                           ParamInfo("rows", "In", None, DataType.INT32),  # a dynamic dim: shape unknown
                           ParamInfo("out", "Out", (32, 32), DataType.FP16))
    assert meta.num_return_types == 1 and meta.output_indices == (2,)


def test_meta_json_round_trip_keeps_key_order_and_extra_keys():
    doc = _meta().to_json()
    assert list(doc) == ["schema", "params", "num_return_types", "platform", "backend_type", "runtime",
                         "toolchain", "func"]
    assert doc["params"][2] == {"name": "y", "direction": "Out", "shape": [None, 32], "dtype": "fp32"}
    assert ArtifactMeta.from_json(json.loads(json.dumps(doc))) == _meta()


def test_read_names_what_is_wrong(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="not a complete pypto artifact directory"):
        ArtifactMeta.read(tmp_path)
    (tmp_path / META_FILE).write_text("{")
    with pytest.raises(ValueError, match="corrupt metadata"):
        ArtifactMeta.read(tmp_path)
    (tmp_path / META_FILE).write_text('{"schema": 2, "params": []}')
    with pytest.raises(ValueError, match=r"compiled_meta.json: unsupported metadata schema 2 \(expected 1\)"):
        ArtifactMeta.read(tmp_path)


def test_begin_drops_stale_markers_and_commit_writes_the_record_last(tmp_path: Path):
    out = tmp_path / "art"
    out.mkdir()
    for marker in STALE_MARKERS:
        (out / marker).parent.mkdir(parents=True, exist_ok=True)
        (out / marker).write_text("old")
    (out / "kept.txt").write_text("stays for inspection")
    assert begin(out) == out
    assert (out / "report").is_dir() and (out / "kept.txt").is_file()
    assert not any((out / m).exists() for m in STALE_MARKERS)
    assert not is_complete(out) and not is_assembled(out)
    commit(out, _meta())
    assert is_complete(out) and sorted(p.name for p in out.iterdir()) == ["compiled_meta.json", "kept.txt",
                                                                          "orchestration", "report"]
    assert ArtifactMeta.read(out) == _meta()


def test_compiled_program_from_meta_and_from_dir_agree(tmp_path: Path):
    commit(tmp_path, _meta())
    a = CompiledProgram.from_dir(tmp_path)
    b = CompiledProgram.from_meta(None, tmp_path, _meta())
    assert a == b and a.params == b.params == list(_meta().params)
    assert a.platform == "a5sim" and a.backend_type.value == "Ascend950" and a.runtime_name == "host_build_graph"
    assert a.meta() == ArtifactMeta(_meta().params, 1, "a5sim", "Ascend950", "host_build_graph", "0.1.0")


def _write_config(root: Path, text: str) -> None:
    (root / "orchestration").mkdir(parents=True)
    (root / "orchestration" / "main.cpp").write_text("// orchestration\n")
    (root / "kernels" / "aiv").mkdir(parents=True)
    (root / "kernels" / "aiv" / "k.cpp").write_text("// kernel\n")
    (root / "kernel_config.py").write_text(text)


@pytest.mark.parametrize("home", ["pypto.artifact.kernel_config", "pypto.runtime.kernel_config"])
def test_kernel_config_loads_with_the_current_and_the_older_import(tmp_path: Path, home: str):
    text = render_kernel_config("main", [FuncId(0, "k", "aiv", ("In", "Out"))], runtime="tensormap_and_ringbuffer",
                                orch_signature=("In", "Out"))
    assert "from pypto.artifact.kernel_config import ArgDirection as _D" in text
    _write_config(tmp_path, text.replace("pypto.artifact.kernel_config", home))
    commit(tmp_path, _meta())
    info = load_artifact(tmp_path)
    assert [(k.func_id, k.name, k.core_type) for k in info.kernels] == [(0, "k", "aiv")]
    assert info.orchestration == tmp_path.resolve() / "orchestration" / "main.cpp"
    assert info.params == _meta().params and info.output_indices == (2,)
    assert is_assembled(tmp_path) and ArgDirection.OUT == 2


def test_skip_ptoas_layout():
    one = KernelUnit("k", "module {}\n", (KernelFunc("k", "aic", (KernelParam("a", "tensor", "fp32", "float", 0),)),))
    group = KernelUnit("g", "module {}\n", (KernelFunc("v", "aiv", ()), KernelFunc("c", "aic", ())))
    assert skip_ptoas_files([one, group]) == {"kernels/aic/k.pto": "module {}\n", "kernels/g.pto": "module {}\n"}
