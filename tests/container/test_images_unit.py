"""Image build inputs without an engine: hashes, args and labels from the manifest, hw refusals, lock."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

from pypto.errors import ToolchainError
from pypto.toolchain import hw_installers, images
from pypto.toolchain.manifest import Manifest, load_manifest

REPO = Path(__file__).resolve().parents[2]


def _wheelhouse_module():
    from pypto.toolchain import wheelhouse

    return wheelhouse


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
    hw_installers._simpler_archive(m2, tmp_path, problems)
    assert problems and "def5678" in problems[0]


def test_lock_matches_manifest_and_detects_staleness(tmp_path: Path) -> None:
    wh = _wheelhouse_module()
    m = load_manifest()
    pins = wh.read_lock(m)
    assert {p.name for p in pins} == {wh.normalize(n) for n in {**m.image.wheels, **m.image.torch_wheels}}
    stale = tmp_path / "stale.lock"
    stale.write_text(wh.lock_path().read_text().replace(f"{pins[0].name}=={pins[0].version} ",
                                                        f"{pins[0].name}==0.0.1 "))
    with pytest.raises(ToolchainError, match="regenerate"):
        wh.read_lock(m, stale)


def test_torch_is_locked_as_the_cpu_build_and_only_in_torch_flavors() -> None:
    wh = _wheelhouse_module()
    m = load_manifest()
    torch = {p.name: p for p in wh.read_lock(m)}["torch"]
    assert torch.version.startswith("2.13.0+cpu")  # the local version pins the CPU build: pip cannot pick CUDA
    with_torch = {p.name for p in wh.flavor_pins(m, with_torch=True)}
    slim = {p.name for p in wh.flavor_pins(m, with_torch=False)}
    assert {"torch", "sympy", "ptoas", "numpy"} <= with_torch
    assert "torch" not in slim and "sympy" not in slim and {"ptoas", "numpy", "docker"} <= slim
    assert images.has_torch("sim") and images.has_torch("hw") and not images.has_torch("sim-slim")
    facts = images.image_facts(m, "sim-slim")
    assert facts["torch"] is None and facts["flavor"] == "sim-slim" and "sim" in facts["flavors_with_torch"]
    assert images.image_facts(m, "sim")["torch"] == torch.version


def test_target_platform_follows_the_base_suite() -> None:
    wh = _wheelhouse_module()
    m = load_manifest()
    args = wh.target_args(m)
    assert args[args.index("--python-version") + 1] == m.python.version
    bad = m.model_copy(update={"base_image": m.base_image.model_copy(update={"suite": "nosuch"})})
    with pytest.raises(ToolchainError, match="Unknown base suite"):
        wh.target_args(bad)


def test_checkout_is_found_from_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wh = _wheelhouse_module()
    monkeypatch.setattr(wh, "_PACKAGE_REPO", tmp_path / "site-packages")  # as in a regular (non-editable) install
    monkeypatch.chdir(REPO)
    assert wh.find_checkout() == REPO
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ToolchainError, match="source checkout"):
        wh.find_checkout()


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


def test_missing_module_hints_name_the_image_and_the_flavor_that_has_it(tmp_path: Path) -> None:
    from pypto.toolchain.image_info import current_image, missing_module_hint

    m = load_manifest()
    facts = images.image_facts(m, "sim-slim")
    hint = missing_module_hint("torch.nn", facts)
    assert "flavor 'sim-slim'" in hint and "has no torch" in hint and "'sim'" in hint
    assert "--flavor sim" in hint and m.image.torch_wheels["torch"] in hint
    other = missing_module_hint("scipy", images.image_facts(m, "sim"))
    assert "flavor 'sim'" in other and "no module 'scipy'" in other and "[image.wheels]" in other
    host = missing_module_hint("torch", None, in_image=False)
    assert "pip install torch==2.13.0" in host and "--in-container" in host
    (tmp_path / "image.json").write_text(json.dumps(facts))
    assert current_image(tmp_path / "image.json") == facts and current_image(tmp_path / "none.json") is None


def test_a_shadowed_docker_sdk_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the SDK, `import docker` from the repo root finds the docker/ folder (a namespace package)."""
    from pypto.toolchain import docker as launcher

    (tmp_path / "docker").mkdir()
    monkeypatch.delitem(sys.modules, "docker", raising=False)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *[p for p in sys.path if "site-packages" not in p]])
    with pytest.raises(ToolchainError, match="not the docker SDK") as info:
        launcher.docker_sdk()
    assert str(tmp_path / "docker") in str(info.value) and "pip install 'docker>=7.0'" in str(info.value)
    monkeypatch.delitem(sys.modules, "docker", raising=False)


def test_docker_sdk_is_a_core_dependency() -> None:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert any(dep.startswith("docker>=") for dep in data["project"]["dependencies"])


def test_build_progress_plain_lines_and_summary() -> None:
    from pypto.toolchain.build_progress import BuildProgress

    out = io.StringIO()
    with BuildProgress("img:1", stream=out, rich=False) as progress:
        progress.feed("Step 1/3 : FROM base\n ---> abc\nStep 2/3 : RUN ec")
        progress.feed("ho hi\n ---> Using cache\nStep 3/3 : COPY x /x\n")
    text = progress.summary("img:1", "sha256:" + "0" * 64, 12.3)
    lines = out.getvalue().splitlines()
    assert lines[0] == "pypto-images: building img:1"
    assert [line.split("]")[-1].strip() for line in lines[1:4]] == ["FROM base", "RUN echo hi", "COPY x /x"]
    assert lines[1].startswith("pypto-images: step 1/3 [") and "\r" not in out.getvalue()
    assert "built img:1" in text and "12 MB" in text and "1 from the layer cache" in text
    assert progress.failure_tail().splitlines()[-1] == "Step 3/3 : COPY x /x"


def test_build_progress_records_the_last_image_of_each_named_stage() -> None:
    from pypto.toolchain.build_progress import BuildProgress
    from pypto.toolchain.image_prune import stage_tag

    stream = ("Step 1/6 : FROM base AS os\n ---> 111111111111\nStep 2/6 : RUN a\n ---> Running in 999999999999\n"
              " ---> 222222222222\nStep 3/6 : FROM os AS deps\n ---> 222222222222\nStep 4/6 : RUN pip\n"
              " ---> Using cache\n ---> 333333333333\nStep 5/6 : FROM os\n ---> 222222222222\n"
              "Step 6/6 : COPY --from=deps /v /v\n ---> 444444444444\nSuccessfully built 444444444444\n")
    with BuildProgress("img:1", stream=io.StringIO(), rich=False) as progress:
        for i in range(0, len(stream), 7):  # chunks split lines anywhere
            progress.feed(stream[i:i + 7])
    assert progress.stages == {"os": "222222222222", "deps": "333333333333"}
    assert stage_tag("pypto-0.1.0-sim:abc123", "deps") == "pypto-0.1.0-sim-deps:abc123"


def test_the_cache_stages_carry_the_stage_label() -> None:
    from pypto.toolchain.images import docker_dir

    assert "FROM os AS deps\n# " in (docker_dir() / "sim.Dockerfile").read_text()
    for name, stage in (("sim.Dockerfile", "deps"), ("hw.Dockerfile", "install")):
        text = (docker_dir() / name).read_text()
        after = text.split(f" AS {stage}\n", 1)[1].split("\nFROM ", 1)[0]
        assert f"LABEL io.pypto.image.stage={stage}" in after, name


def test_build_progress_rich_on_a_terminal() -> None:
    from pypto.toolchain.build_progress import BuildProgress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    with BuildProgress("img:1", stream=out) as progress:
        assert progress.rich
        progress.feed("Step 1/2 : FROM base\nStep 2/2 : RUN make\nbuilding...\n")
    progress.summary("img:1", "sha256:" + "1" * 64, 5.0)
    import re

    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # rich styling
    assert "\r" in text and "img:1" in text and "2/2" in text and "built img:1 (sha256:111111111111): 5 MB" in text


def _layer(dir_mtime: int, content: bytes) -> bytes:
    """A layer tarball: a directory stamped ``dir_mtime`` (as a COPY's parent is) and a file."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        d = tarfile.TarInfo("opt/pypto")
        d.type, d.mode, d.mtime = tarfile.DIRTYPE, 0o755, dir_mtime
        tar.addfile(d)
        f = tarfile.TarInfo("opt/pypto/f.txt")
        f.size, f.mtime = len(content), 1000
        tar.addfile(f, io.BytesIO(content))
    return buf.getvalue()


def _saved_image(created: str, layer: bytes) -> bytes:
    """A minimal `docker save` archive: one layer, its v1 json, a config, manifest.json, repositories."""
    config = {"created": created, "container": "c0ffee", "history": [{"created": created, "created_by": "RUN x"}],
              "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]},
              "container_config": {"Hostname": "c0ffee", "Image": "sha256:" + created.encode().hex()},
              "config": {"Image": "sha256:" + created.encode().hex(), "Env": ["A=1"]}}
    raw = json.dumps(config).encode()
    cfg = hashlib.sha256(raw).hexdigest()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in ((f"{cfg}.json", raw), ("aaaa/json", b'{"created": "%s"}' % created.encode()),
                           ("aaaa/layer.tar", layer),
                           ("manifest.json", json.dumps([{"Config": f"{cfg}.json", "RepoTags": ["x:1"],
                                                          "Layers": ["aaaa/layer.tar"]}]).encode()),
                           ("repositories", b"{}")):
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1234567
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_normalized_image_id_ignores_build_times_but_not_contents() -> None:
    from pypto.toolchain.image_normalize import rewrite_saved

    epoch = 1700000000

    def run(created: str, dir_mtime: int, content: bytes) -> tuple[str, tarfile.TarFile]:
        out = io.BytesIO()
        new_id = rewrite_saved(io.BytesIO(_saved_image(created, _layer(dir_mtime, content))), out, epoch,
                               "pypto-x:tag")
        return new_id, tarfile.open(fileobj=io.BytesIO(out.getvalue()))

    id1, tar = run("2026-01-01T10:00:00.1Z", epoch + 500, b"same")
    id2, _ = run("2026-02-03T11:12:13.4Z", epoch + 900, b"same")   # other build times, same contents
    id3, _ = run("2026-01-01T10:00:00.1Z", epoch + 500, b"diff")   # other contents
    assert id1 == id2 != id3
    digest = id1.split(":")[1]
    config = json.loads(tar.extractfile(f"{digest}.json").read())
    assert config["created"] == config["history"][0]["created"] == "2023-11-14T22:13:20Z"
    assert "container" not in config and config["container_config"]["Hostname"] == ""
    assert config["config"] == {"Image": "", "Env": ["A=1"]} and config["container_config"]["Image"] == ""
    assert hashlib.sha256(tar.extractfile(f"{digest}.json").read()).hexdigest() == digest
    layer = tar.extractfile("aaaa/layer.tar").read()
    assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(layer).hexdigest()]
    inner = tarfile.open(fileobj=io.BytesIO(layer))
    assert [(m.name, m.mtime) for m in inner] == [("opt/pypto", epoch), ("opt/pypto/f.txt", 1000)]
    manifest = json.loads(tar.extractfile("manifest.json").read())
    assert manifest[0]["Config"] == f"{digest}.json" and manifest[0]["RepoTags"] == ["pypto-x:tag"]
    assert "repositories" not in tar.getnames() and "aaaa/json" not in tar.getnames()


def test_context_times_are_clamped(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_text("x")
    images.clamp_times(tmp_path, 1700000000)
    assert {p.stat().st_mtime for p in tmp_path.rglob("*")} == {1700000000}
