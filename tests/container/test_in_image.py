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


def _artifacts(root: Path) -> dict[str, bytes]:
    files = [p for p in root.rglob("*") if p.is_file() and (p.suffix == ".pto" or "orchestration" in p.parts)]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files if p.suffix in (".pto", ".cpp", ".h")}


@pytest.mark.parametrize("emit_loc", ["false", "true"], ids=["no-loc", "loc"])
def test_compile_in_image_matches_host(engine: Any, sim_image: Any, tmp_path: Path, emit_loc: str) -> None:
    src = tmp_path / "src"
    kernel = _example_tree(src)
    target = f"{kernel.relative_to(src)}::add"
    cli = [sys.executable, "-c", "import sys; from pypto.cli.main import main; sys.exit(main())"]
    env = {**os.environ, "PYPTO_CONTAINER_IMAGE": _ref(sim_image), "PYPTO_PLATFORM": "a2a3sim",
           "PYPTO_EMIT_PTO_LOC": emit_loc}
    host = subprocess.run([*cli, "compile", target, *SHAPES, "-o", str(tmp_path / "host")], cwd=src, env=env,
                          capture_output=True, text=True)
    assert host.returncode == 0, host.stderr
    boxed = subprocess.run([*cli, "compile", target, *SHAPES, "-o", str(src / "boxed"), "--in-container"],
                           cwd=src, env=env, capture_output=True, text=True)
    assert boxed.returncode == 0, boxed.stderr
    want, got = _artifacts(tmp_path / "host"), _artifacts(src / "boxed")
    assert want and any(k.endswith(".pto") for k in want) and any("orchestration" in k for k in want)
    assert got.keys() == want.keys()
    # With loc() enabled the .pto files name the source as seen by the compiler: /src/... in the image.
    host_root, boxed_root = str(src).encode(), launcher.CONTAINER_SRC.encode()
    assert [k for k in want if want[k].replace(host_root, boxed_root) != got[k]] == []
    assert all(p.stat().st_uid == os.getuid() for p in (src / "boxed").rglob("*"))


def test_run_in_image_matches_numpy(engine: Any, sim_image: Any, settings: Settings, workdirs: tuple[Path, Path],
                                    capfd: pytest.CaptureFixture[str]) -> None:
    src, out = workdirs
    kernel = _example_tree(src)
    spec = _spec(settings, sim_image, src, out, ("python",), [f"/src/{kernel.relative_to(src)}", "a2a3sim"])
    assert launcher.execute(engine, spec, timeout=600) == 0  # the example asserts allclose vs numpy
    assert "OK (max abs error" in capfd.readouterr().out
