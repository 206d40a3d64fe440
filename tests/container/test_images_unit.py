"""Image build inputs without an engine: hashes, args and labels from the manifest, hw refusals, lock."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

from pypto.errors import ToolchainError
from pypto.toolchain import images
from pypto.toolchain.manifest import Manifest, load_manifest

REPO = Path(__file__).resolve().parents[2]


def _wheelhouse_module():
    spec = importlib.util.spec_from_file_location("pypto_wheelhouse", REPO / "docker" / "wheelhouse.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _manifest_with(tmp_path: Path, **cann: str) -> Manifest:
    """The current manifest with some [hardware.cann] values replaced (written to a temp file)."""
    base = load_manifest()
    data = tomllib.loads(base.path.read_text())
    data["hardware"]["cann"].update(cann)
    m = Manifest.model_validate(data)
    m._path = tmp_path / f"{m.version}.toml"
    m._sha256 = "0" * 64
    return m


def test_inputs_hash_covers_files_and_args(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("x")
    h1 = images.inputs_hash(tmp_path, {"A": "1"})
    assert images.inputs_hash(tmp_path, {"A": "1"}) == h1
    assert images.inputs_hash(tmp_path, {"A": "2"}) != h1
    (tmp_path / "a").write_text("y")
    assert images.inputs_hash(tmp_path, {"A": "1"}) != h1


def test_build_args_and_labels_come_from_the_manifest() -> None:
    m = load_manifest()
    args = images.build_args(m, "sim", "base:1", "0")
    assert args["PYTHON_VERSION"] == m.python.version
    assert args["GXX_MIN"] == str(m.compilers.gxx_min)
    assert args["TOOLCHAIN_VERSION"] == m.version
    labels = images.image_labels(m, "sim", "f" * 64, "0")
    assert labels[images.LABEL_MANIFEST] == m.sha256
    assert labels[images.LABEL_VERSION] == m.version
    assert labels["org.opencontainers.image.created"] == "1970-01-01T00:00:00Z"
    assert images.image_repository(m, "sim") == f"pypto-{m.version}-sim"


def test_dockerfiles_pin_nothing() -> None:
    m = load_manifest()
    for name in ("sim.Dockerfile", "hw.Dockerfile"):
        text = (REPO / "docker" / name).read_text()
        for value in (m.python.version, m.ptoas.version, m.ptoas.sha256, m.base_image.suite, m.hardware.cann.version):
            assert value not in text, f"{name} contains the pinned value {value}"


def test_hw_refuses_without_installers(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError, match="supplied by you") as info:
        images.stage_installers(load_manifest(), None, tmp_path / "ctx")
    assert "--flavor hw" in str(info.value)


def test_hw_refuses_unpinned_manifest(tmp_path: Path) -> None:
    m = _manifest_with(tmp_path, toolkit_sha256="")
    (tmp_path / "inst").mkdir()
    with pytest.raises(ToolchainError, match="pins no sha256") as info:
        images.stage_installers(m, tmp_path / "inst", tmp_path / "ctx")
    assert "hardware.cann.toolkit_sha256" in str(info.value)


def test_hw_refuses_wrong_and_missing_installers(tmp_path: Path) -> None:
    inst = tmp_path / "inst"
    inst.mkdir()
    m = _manifest_with(tmp_path, toolkit_sha256=hashlib.sha256(b"the real installer").hexdigest())
    with pytest.raises(ToolchainError, match="missing"):
        images.stage_installers(m, inst, tmp_path / "ctx")
    (inst / m.hardware.cann.toolkit_installer).write_bytes(b"a tampered installer")
    with pytest.raises(ToolchainError, match="has sha256") as info:
        images.stage_installers(m, inst, tmp_path / "ctx")
    assert "Refusing to build the hw image" in str(info.value)
    assert not (tmp_path / "ctx").exists()


def test_simpler_archive_commit_is_checked(tmp_path: Path) -> None:
    m = load_manifest()
    m2 = Manifest.model_validate({**tomllib.loads(m.path.read_text()),
                                  "hardware": {**m.hardware.model_dump(), "simpler": {
                                      **m.hardware.simpler.model_dump(), "commit": "abc1234"}}})
    archive = tmp_path / "simpler-abc1234.tar.gz"
    with tarfile.open(archive, "w:gz", format=tarfile.PAX_FORMAT, pax_headers={"comment": "def5678"}) as tar:
        info = tarfile.TarInfo("simpler/README")
        tar.addfile(info, io.BytesIO(b""))
    problems: list[str] = []
    images._simpler_archive(m2, tmp_path, problems)
    assert problems and "def5678" in problems[0]


def test_lock_matches_manifest_and_detects_staleness(tmp_path: Path) -> None:
    wh = _wheelhouse_module()
    data, _ = wh.load_manifest(None)
    pins = wh.read_lock(data)
    assert {p.name for p in pins} == {wh.normalize(n) for n in data["image"]["wheels"]}
    stale = tmp_path / "stale.lock"
    stale.write_text(wh.LOCK.read_text().replace(f"{pins[0].name}=={pins[0].version} ", f"{pins[0].name}==0.0.1 "))
    with pytest.raises(wh.WheelhouseError, match="regenerate"):
        wh.read_lock(data, stale)


def test_target_platform_follows_the_base_suite() -> None:
    wh = _wheelhouse_module()
    data, _ = wh.load_manifest(None)
    args = wh.target_args(data)
    assert args[args.index("--python-version") + 1] == data["python"]["version"]
    with pytest.raises(wh.WheelhouseError, match="unknown base suite"):
        wh.target_args({**data, "base_image": {**data["base_image"], "suite": "nosuch"}})


def test_base_tag_depends_on_script_and_suite() -> None:
    tag = images.base_tag(load_manifest())
    assert tag.startswith(f"pypto-base-{load_manifest().base_image.suite}:")


def test_nox_lists_sessions() -> None:
    if shutil.which("nox") is None:
        pytest.skip("nox not installed")
    proc = subprocess.run(["nox", "-l", "-f", str(REPO / "noxfile.py")], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    for name in ("tests(a2a3sim)", "tests(a5sim)", "lint", "typecheck", "images(sim)", "container_tests",
                 "examples(a2a3sim)", "bench"):
        assert name in proc.stdout


def test_hw_build_cli_refuses_before_any_engine_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(images, "_client", lambda: pytest.fail("the engine must not be contacted"))
    assert images.main(["build", "--flavor", "hw", "--installers", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "Refusing to build the hw image" in err or "supplied by you" in err
