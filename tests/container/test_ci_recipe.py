"""From a clean clone and a fresh venv: the README's commands and the CI recipes of docker/README.md.

What a new user and a CI job do, run for real: clone this repository (its committed HEAD), make a
venv, run the README's first command and the image build command of docs/containers.md from the
clone's root, then
compile an upstream-style ``@pl.program`` file that imports torch with ``docker run <image>
compile FILE::NAME`` and check the artifact is byte-identical to the host compile. The GitHub
Actions and GitLab CI jobs of docker/README.md run their ``run:``/``script:`` commands verbatim;
provisioning (checkout, setup-python, cache actions, ``before_script``) is replaced by the clone and
the venv. Slow (a venv install, an image build from the layer cache): marked ``slow``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.container, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]

TORCH_KERNEL = '''\
"""An upstream-style program file: it imports torch at the top and uses it for the golden."""
import torch

import pypto.language as pl


@pl.program
class ScaledAdd:
    @pl.function(type=pl.FunctionType.InCore)
    def add_tile(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Tensor[[32, 64], pl.FP32],
                 z: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        tx = pl.load(x, [0, 0], [32, 64])
        ty = pl.load(y, [0, 0], [32, 64])
        z = pl.store(pl.add(tx, ty), [0, 0], z)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 64], pl.FP32], y: pl.Tensor[[32, 64], pl.FP32],
             z: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        z = self.add_tile(x, y, z)
        return z


def golden(x, y, z):
    return (torch.from_numpy(x) + torch.from_numpy(y)).numpy()
'''


def _sh(cmd: str, cwd: Path, env: dict[str, str], timeout: int = 1200) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"`{cmd}` failed in {cwd} (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n" \
                                 f"{proc.stderr[-5000:]}"
    return proc


def _host_compile(target: str, out: Path, cwd: Path) -> None:
    """The reference: ``pypto compile`` on the host with this interpreter (torch installed, this checkout)."""
    pytest.importorskip("torch")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env = {k: v for k, v in env.items() if not k.startswith("PYPTO_")}
    proc = subprocess.run([sys.executable, "-m", "pypto", "compile", target, "--output-dir", str(out)], cwd=cwd,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _fenced(text: str, lang: str, after: str) -> str:
    """The first ```lang block after the line containing ``after``."""
    start = text.index(after)
    match = re.search(rf"```{lang}\n(.*?)```", text[start:], re.S)
    assert match, f"no ```{lang} block after {after!r}"
    return match.group(1)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory, engine: Any) -> dict[str, Any]:
    """A clone of HEAD and a fresh venv (environment without this process' PYTHONPATH and PYPTO_*)."""
    if shutil.which("git") is None:
        pytest.skip("git not found")
    root = tmp_path_factory.mktemp("fresh")
    clone = root / "pypto"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYPTO_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PATH=f"{root / 'venv' / 'bin'}{os.pathsep}{env['PATH']}", VIRTUAL_ENV=str(root / "venv"),
               PYPTO_CACHE_DIR=str(root / "cache"))
    return {"root": root, "clone": clone, "env": env}


@pytest.fixture(scope="module")
def built(fresh: dict[str, Any]) -> dict[str, Any]:
    """README's first command, then the image build command of the containers page, from the clone's root."""
    readme = (fresh["clone"] / "README.md").read_text()
    first = _fenced(readme, "bash", "# pypto").splitlines()[0]
    assert first.startswith("python -m pip install -e .")
    _sh(first, fresh["clone"], fresh["env"])
    page = (fresh["clone"] / "docs" / "containers.md").read_text()
    block = _fenced(page, "bash", "## Building and using the images")
    build = next(line.split("#")[0].strip() for line in block.splitlines()
                 if line.startswith("python -m pypto.toolchain.images build --flavor sim"))
    proc = _sh(build, fresh["clone"], fresh["env"])
    image = json.loads(proc.stdout)
    assert "built " in proc.stderr or "reused" in proc.stderr  # the final summary line
    return {**fresh, "image": image}


def test_readme_install_then_image_build_from_the_repo_root(built: dict[str, Any], engine: Any) -> None:
    image = built["image"]
    found = engine.images.get(image["tag"])
    assert found.labels["io.pypto.image.flavor"] == "sim" and image["size_mb"] > 0
    proc = _sh(f"pypto toolchain verify --image {image['tag']} --json", built["clone"], built["env"])
    report = json.loads(proc.stdout)
    assert report["ok"], report
    assert {c["name"] for c in report["checks"]} >= {"manifest inside", "ptoas sha256", "torch", "installed versions"}


def test_torch_program_with_docker_run_compile_is_byte_identical_to_the_host(built: dict[str, Any],
                                                                              tmp_path: Path) -> None:
    """docker/README.md's `docker run ... compile FILE::NAME --file-prefix-map /src=$PWD` vs the host."""
    src = tmp_path / "kernels"
    src.mkdir()
    (src / "scaled_add.py").write_text(TORCH_KERNEL)
    doc = (built["clone"] / "docker" / "README.md").read_text()
    command = _fenced(doc, "sh", "### Byte-identical to the host compile").split("\n# same bytes")[0]
    command = command.replace("<image>", built["image"]["tag"]).replace("kernel.py::MyProgram", "scaled_add.py::ScaledAdd")
    command = command.replace("/out/kernel", "/out/scaled_add")
    _sh(command, src, built["env"])
    host = tmp_path / "host"
    _host_compile("scaled_add.py::ScaledAdd", host, src)
    boxed, want = _tree(src / "out" / "scaled_add"), _tree(host)
    assert any(k.endswith(".pto") for k in want) and any(b'loc("' + str(src).encode() in v for v in want.values())
    assert boxed == want
    assert all(p.stat().st_uid == os.getuid() for p in (src / "out").rglob("*"))


def _kernel_dir(ws: Path) -> None:
    kernels = ws / "kernels"
    (kernels / "basics").mkdir(parents=True)
    (kernels / "scaled_add.py").write_text(TORCH_KERNEL)
    shutil.copy(REPO / "examples" / "beginner" / "01_hello_world.py", kernels / "basics" / "hello.py")
    shutil.copy(REPO / "examples" / "_common.py", kernels / "_common.py")  # skipped: a helper, not a kernel


def _workspace(built: dict[str, Any], tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "clone", "-q", str(built["clone"]), str(ws / ".pypto")], check=True)
    _kernel_dir(ws)
    return ws


def _yaml(doc: str, after: str) -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load(_fenced(doc, "yaml", after))


def test_github_actions_recipe(built: dict[str, Any], tmp_path: Path) -> None:
    job = _yaml((REPO / "docker" / "README.md").read_text(), "GitHub Actions")["jobs"]["compile-kernels"]
    ws = _workspace(built, tmp_path)
    github_env = tmp_path / "github_env"
    github_env.touch()
    env = {**built["env"], **{k: str(v) for k, v in job["env"].items()}, "GITHUB_ENV": str(github_env)}
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert len(runs) == 4 and any("compile-kernels.sh" in r for r in runs)
    for run in runs:
        _sh(f"set -eo pipefail\n{run}", ws, env)
        env.update(line.split("=", 1) for line in github_env.read_text().splitlines() if "=" in line)
    assert env["IMAGE"].startswith("pypto-0.1.0-sim:")
    _check_outputs_json_paths(ws)
    _check_cache_reused(ws, env, runs[-1])


def _check_outputs_json_paths(ws: Path) -> None:
    out = ws / "build" / "kernels"
    for name in ("scaled_add", "basics/hello"):
        result = json.loads((out / f"{name}.json").read_text())  # the container's view of its paths
        assert result["ok"] and result["artifact"] == f"/out/{name}"
        assert (out / name / "compiled_meta.json").is_file()
    assert not (out / "_common.json").exists()
    cache = ws / ".pypto-cache"
    assert (cache / "jit").is_dir() and any((cache / "jit").iterdir())  # the hello @pl.jit kernel's entry


def _check_cache_reused(ws: Path, env: dict[str, str], compile_step: str) -> None:
    """A second run (the next CI job, cache restored) reuses the cache and writes the same bytes."""
    out = ws / "build" / "kernels"
    first = {name: _tree(out / name) for name in ("scaled_add", "basics/hello")}
    cache = ws / ".pypto-cache"
    before = {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()}
    shutil.rmtree(out)
    _sh(compile_step, ws, env)
    assert {name: _tree(out / name) for name in first} == first
    after = {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()}
    assert before and all(after.get(p) == t for p, t in before.items())  # nothing rebuilt or rewritten
    host = ws / "host"
    _host_compile("scaled_add.py", host, ws / "kernels")
    assert _tree(out / "scaled_add") == _tree(host)


def test_gitlab_ci_recipe(built: dict[str, Any], tmp_path: Path) -> None:
    job = _yaml((REPO / "docker" / "README.md").read_text(), "GitLab CI")["compile-kernels"]
    ws = _workspace(built, tmp_path)
    env = {**built["env"], **{k: str(v) for k, v in job["variables"].items()}}
    assert job["cache"]["paths"] == [".pypto-cache/"]
    script = "\n".join(job["script"])
    _sh(f"set -eo pipefail\n{script}\necho \"IMAGE=$IMAGE\" > image.env", ws, env)
    assert (ws / ".venv" / "bin" / "pypto").is_file()  # the job's own venv
    _check_outputs_json_paths(ws)
    env = {**env, "PATH": f"{ws / '.venv' / 'bin'}{os.pathsep}{env['PATH']}",
           "IMAGE": (ws / "image.env").read_text().strip().split("=", 1)[1]}
    _check_cache_reused(ws, env, job["script"][-1])
