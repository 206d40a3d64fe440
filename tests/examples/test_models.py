"""The model examples (examples/models/*.py) run and check themselves on both sim platforms."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from example_runner import load_example

from pypto.toolchain.ptoas import find_ptoas

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODELS = sorted(p.name for p in (EXAMPLES / "models").glob("[0-9][0-9]_*.py"))

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++"),
    pytest.mark.skipif(find_ptoas() is None, reason="needs the pinned ptoas"),
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


def test_all_model_examples_are_listed() -> None:
    assert MODELS == ["01_ffn.py", "02_vector_dag.py", "03_flash_attention.py", "04_dynamic_shape.py",
                      "05_paged_attention.py", "06_decoder_layer.py"]


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("name", MODELS)
def test_model_example(name: str, platform: str, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(workdir)  # build_output/ goes to a temp dir
    load_example(f"models/{name}").main(platform)
    out = capsys.readouterr().out
    assert f"on {platform}: OK" in out


def test_model_pto_files_pass_the_dialect_checker(workdir: Path) -> None:
    """Every .pto the model examples produced (runs above) passes pto_verify --ptoas --strict."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
    from ptocheck import verify

    files = sorted(workdir.glob("build_output/*/ptoas/*.pto"))
    if not files:
        pytest.skip("no model example ran in this session")
    verify(*files)
