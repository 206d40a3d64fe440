"""The sim image and the launcher against a real engine (skipped without one: see conftest.py)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pypto.errors import ToolchainError
from pypto.toolchain import docker as launcher
from pypto.toolchain.images import LABEL_MANIFEST
from pypto.toolchain.settings import Settings

pytestmark = pytest.mark.container
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "beginner" / "01_hello_world.py"
SHAPES = ["--shape", "a=128x128:f32", "--shape", "b=128x128:f32", "--shape", "out=128x128:f32"]
PROBE = r"""
import json, os, socket
facts = {"uid": os.getuid(), "gid": os.getgid(), "interfaces": sorted(os.listdir("/sys/class/net"))}
try:
    socket.create_connection(("deb.debian.org", 80), timeout=3).close()
    facts["network"] = "reachable"
except OSError as exc:
    facts["network"] = type(exc).__name__
for line in open("/proc/self/status"):
    if line.startswith(("CapEff", "NoNewPrivs")):
        key, value = line.split(":")
        facts[key] = value.strip()
for target in ("/etc/probe", "/tmp/probe", "/src/probe", "/out/probe.txt"):
    try:
        open(target, "w").write("x")
        facts[target] = "writable"
    except OSError:
        facts[target] = "read-only"
print(json.dumps(facts))
"""


def _ref(image: Any) -> str:
    return image.tags[0] if image.tags else image.id


def _spec(settings: Settings, image: Any, src: Path, out: Path, entry: tuple[str, ...], argv: list[str],
          user: str | None = None) -> launcher.RunSpec:
    out.mkdir(parents=True, exist_ok=True)
    spec = launcher.plan_run(argv, settings=settings, source_dir=src, output_dir=out, image=_ref(image))
    return replace(spec, entrypoint=entry, user=user or spec.user)


def _leftover_containers(engine: Any) -> list[Any]:
    return engine.containers.list(all=True, filters={"label": "io.pypto.launcher=1"})


def test_version_and_exit_code(engine: Any, sim_image: Any, settings: Settings, workdirs: tuple[Path, Path],
                               capfd: pytest.CaptureFixture[str]) -> None:
    src, out = workdirs
    assert launcher.run_in_container(["--version"], settings=settings, source_dir=src, output_dir=out) == 0
    assert f"toolchain {settings.toolchain}" in capfd.readouterr().out
    code = launcher.run_in_container(["compile", "/src/missing.py"], settings=settings, source_dir=src,
                                     output_dir=out)
    assert code not in (0, 125, 126, 127)  # pypto's own usage/user error, passed through unchanged
    assert not _leftover_containers(engine)


@pytest.mark.parametrize("user", [None, "4321:4321"], ids=["caller", "other-uid"])
def test_sandbox(engine: Any, sim_image: Any, settings: Settings, workdirs: tuple[Path, Path],
                 capfd: pytest.CaptureFixture[str], user: str | None) -> None:
    src, out = workdirs
    out.mkdir()  # pre-created like the launcher does, owned by the user the container runs as
    uid = int(user.split(":")[0]) if user else os.getuid()
    os.chown(out, uid, uid if user else os.getgid())
    spec = _spec(settings, sim_image, src, out, ("python", "-c"), [PROBE], user)
    assert launcher.execute(engine, spec, timeout=120) == 0
    facts = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    assert facts["uid"] == uid
    assert facts["interfaces"] == ["lo"] and facts["network"] != "reachable"
    assert int(facts["CapEff"], 16) == 0 and facts["NoNewPrivs"] == "1"
    assert facts["/etc/probe"] == "read-only" and facts["/src/probe"] == "read-only"
    assert facts["/tmp/probe"] == "writable" and facts["/out/probe.txt"] == "writable"
    assert (out / "probe.txt").stat().st_uid == uid
    assert not _leftover_containers(engine)


def test_timeout_kills_and_removes(engine: Any, sim_image: Any, settings: Settings,
                                   workdirs: tuple[Path, Path]) -> None:
    src, out = workdirs
    spec = _spec(settings, sim_image, src, out, ("sleep",), ["60"])
    with pytest.raises(ToolchainError, match="did not finish within 3s"):
        launcher.execute(engine, spec, timeout=3)
    assert not _leftover_containers(engine)


def test_label_mismatch_refused(engine: Any, sim_image: Any, settings: Settings,
                                workdirs: tuple[Path, Path]) -> None:
    dockerfile = f"FROM {_ref(sim_image)}\nLABEL {LABEL_MANIFEST}={'0' * 64}\n".encode()
    tag = "pypto-test-mismatch:latest"
    engine.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, rm=True)
    src, out = workdirs
    try:
        with pytest.raises(ToolchainError) as info:
            launcher.run_in_container(["--version"], settings=settings, source_dir=src, output_dir=out, image=tag)
        assert "does not match toolchain" in str(info.value)
        assert "python -m pypto.toolchain.images build --flavor sim" in str(info.value)
    finally:
        engine.images.remove(tag, force=True)
    assert not _leftover_containers(engine)


def _example_tree(src: Path) -> Path:
    if not EXAMPLE.is_file():
        pytest.skip(f"{EXAMPLE.relative_to(REPO)} does not exist yet")
    (src / "beginner").mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLE, src / "beginner" / EXAMPLE.name)
    shutil.copy(EXAMPLE.parents[1] / "_common.py", src / "_common.py")
    return src / "beginner" / EXAMPLE.name


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("emit_loc", ["false", "true"], ids=["no-loc", "loc"])
def test_compile_in_image_matches_host(engine: Any, same_source_image: Any, tmp_path: Path, emit_loc: str) -> None:
    """`pypto compile --in-container` writes the same bytes as the host compile, loc paths included."""
    src = tmp_path / "src"
    kernel = _example_tree(src)
    target = f"{kernel.relative_to(src)}::add"
    cli = [sys.executable, "-c", "import sys; from pypto.cli.main import main; sys.exit(main())"]
    env = {**os.environ, "PYPTO_CONTAINER_IMAGE": _ref(same_source_image), "PYPTO_PLATFORM": "a2a3sim",
           "PYPTO_EMIT_PTO_LOC": emit_loc}
    host = subprocess.run([*cli, "compile", target, *SHAPES, "-o", str(tmp_path / "host")], cwd=src, env=env,
                          capture_output=True, text=True)
    assert host.returncode == 0, host.stderr
    boxed = subprocess.run([*cli, "compile", target, *SHAPES, "-o", str(src / "boxed"), "--in-container"],
                           cwd=src, env=env, capture_output=True, text=True)
    assert boxed.returncode == 0, boxed.stderr
    assert boxed.stdout.strip() == str(src / "boxed")  # /out mapped back to the caller's path
    want, got = _tree(tmp_path / "host"), _tree(src / "boxed")
    assert any(k.endswith(".pto") for k in want) and any("orchestration" in k for k in want)
    has_loc = any(b'loc("' + str(src).encode() in v for v in want.values())
    assert has_loc == (emit_loc == "true")
    assert got == want  # every file, byte for byte: no /src path leaks into the image's artifact
    assert all(p.stat().st_uid == os.getuid() for p in (src / "boxed").rglob("*"))


TORCH_PROGRAM = """\
import torch

import pypto.language as pl


@pl.program
class Doubler:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        y = pl.store(pl.add(t, t), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        y = self.twice(x, y)
        return y


def golden(x, y):
    return (2 * torch.from_numpy(x)).numpy()
"""


def test_torch_program_runs_in_the_sim_image(engine: Any, sim_image: Any, tmp_path: Path) -> None:
    """An upstream-style file that imports torch compiles and runs in the sim image (golden via torch)."""
    assert sim_image.labels["io.pypto.image.flavor"] == "sim"
    src = tmp_path / "src"
    src.mkdir()
    (src / "doubler.py").write_text(TORCH_PROGRAM)
    cli = [sys.executable, "-c", "import sys; from pypto.cli.main import main; sys.exit(main())"]
    env = {**os.environ, "PYPTO_CONTAINER_IMAGE": _ref(sim_image), "PYPTO_PLATFORM": "a2a3sim"}
    proc = subprocess.run([*cli, "run", "doubler.py::Doubler", "-o", str(src / "out"), "--in-container", "--json"],
                          cwd=src, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["passed"] is True and result["max_error"] == 0.0 and result["artifact"] == str(src / "out")


def _slim_image(engine: Any, settings: Settings) -> Any:
    images = engine.images.list(filters={"label": ["io.pypto.image.flavor=sim-slim",
                                                   f"io.pypto.toolchain.manifest-sha256={settings.manifest.sha256}"]})
    if not images:
        pytest.skip("no sim-slim image; build it with: python -m pypto.toolchain.images build --flavor sim-slim")
    return images[0]


def test_torch_missing_in_sim_slim_is_a_user_error_naming_the_image(engine: Any, settings: Settings,
                                                                   tmp_path: Path) -> None:
    slim = _slim_image(engine, settings)
    src = tmp_path / "src"
    src.mkdir()
    (src / "doubler.py").write_text(TORCH_PROGRAM)
    cli = [sys.executable, "-c", "import sys; from pypto.cli.main import main; sys.exit(main())"]
    env = {**os.environ, "PYPTO_CONTAINER_IMAGE": _ref(slim), "PYPTO_PLATFORM": "a2a3sim"}
    proc = subprocess.run([*cli, "compile", "doubler.py::Doubler", "-o", str(src / "out"), "--in-container"],
                          cwd=src, env=env, capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    assert f"{src / 'doubler.py'}:1:1: error: importing doubler.py failed: no module named 'torch'" in proc.stderr
    assert f"image {_ref(slim)}, flavor 'sim-slim', which has no torch" in proc.stderr
    assert "--flavor sim`" in proc.stderr and "pypto bug" not in proc.stderr


def test_verify_image_passes_and_catches_a_tampered_image(engine: Any, sim_image: Any) -> None:
    from pypto.toolchain.image_verify import verify_image
    from pypto.toolchain.manifest import load_manifest

    manifest = load_manifest()
    checks = verify_image(_ref(sim_image), manifest)
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    # same labels, but a lock that pins another ptoas wheel and an extra package installed by hand
    dockerfile = (f"FROM {_ref(sim_image)}\nUSER root\n"
                  "RUN sed -i 's/^ptoas==\\(.*\\)sha256:[0-9a-f]*/ptoas==\\1sha256:" + "0" * 64 + "/' "
                  "/opt/pypto/image.lock && echo tampered >> /opt/pypto/toolchain.toml\n").encode()
    tag = "pypto-test-tampered:latest"
    engine.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, rm=True)
    try:
        bad = {c.name: c for c in verify_image(tag, manifest) if not c.ok}
    finally:
        engine.images.remove(tag, force=True)
    assert set(bad) == {"manifest inside", "ptoas sha256", "image.lock"}, bad
    assert not _leftover_containers(engine)


def test_run_in_image_matches_numpy(engine: Any, sim_image: Any, settings: Settings, workdirs: tuple[Path, Path],
                                    capfd: pytest.CaptureFixture[str]) -> None:
    src, out = workdirs
    kernel = _example_tree(src)
    spec = _spec(settings, sim_image, src, out, ("python",), [f"/src/{kernel.relative_to(src)}", "a2a3sim"])
    assert launcher.execute(engine, spec, timeout=600) == 0  # the example asserts allclose vs numpy
    assert "OK (max abs error" in capfd.readouterr().out


@pytest.mark.slow
def test_rebuilding_gives_the_same_image_id(engine: Any, settings: Settings) -> None:
    """Same inputs, built again (layer cache allowed; `.ci/run`-sized): the normalized image ID repeats.

    The cold case (two `--rebuild --no-cache` builds) was measured the same way; see docker/README.md.
    """
    from pypto.toolchain.images import BuildOptions, build_image

    first = build_image(BuildOptions(flavor="sim-slim"))
    again = build_image(BuildOptions(flavor="sim-slim", rebuild=True))
    assert not again.cached and again.tag == first.tag
    assert again.id == first.id
    created = engine.images.get(again.tag).attrs["Created"]
    assert created.startswith(again.labels["org.opencontainers.image.created"][:19])
