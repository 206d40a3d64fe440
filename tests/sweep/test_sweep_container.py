"""``pypto sweep --in-container``: batch scripts, labels, reaping; an end-to-end batch when the image exists."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pypto.cli.main import cli
from pypto.errors import ToolchainError
from pypto.flows.sweep_container import batch_script, remove_sweep_containers, run_batch_in_container
from pypto.flows.sweep_jobs import make_jobs
from pypto.toolchain.docker import RunSpec


def _tasks(kernels: Path, platforms=("a5sim",)) -> list[dict[str, Any]]:
    jobs = make_jobs(["kernels"], list(platforms), ["0.1.0"], "tensormap_and_ringbuffer", run=True)
    return [{**j.to_task(), "key": f"{i:064x}"} for i, j in enumerate(jobs)]


def test_batch_script_runs_each_job_into_its_own_out_dir(kernels: Path, tmp_path: Path) -> None:
    script = batch_script(_tasks(kernels), tmp_path, tmp_path / "batch")
    lines = script.strip().splitlines()
    assert lines[0] == "cd /src" and len(lines) == 4
    for i, (line, name) in enumerate(zip(lines[1:], ("sweep_add", "sweep_mul", "sweep_sub"), strict=True)):
        command = shlex.split(line.split("; ")[1].split(" >")[0])
        assert command[:4] == ["pypto", "--toolchain", "0.1.0", "run"]
        assert command[4] == f"/src/kernels/{name}.py::{name}"
        assert command[command.index("--output-dir") + 1] == f"/out/{i}/artifact"
        assert line.endswith(f"echo $? $s $(date +%s%N) >/out/{i}/rc")


def test_a_kernel_outside_the_mounted_dir_is_a_user_error_line(kernels: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ctx = {"store": str(tmp_path / "store"), "sweep_id": "t", "cwd": str(elsewhere), "label": "io.pypto.sweep"}
    records = run_batch_in_container(_tasks(kernels)[:2], ctx)
    assert [r["status"] for r in records] == ["user_error", "user_error"]
    assert "outside the directories mounted" in records[0]["message"]


def test_containers_carry_the_sweep_labels() -> None:
    spec = RunSpec("img", ("-c", "true"), "1:1", (), labels={"io.pypto.sweep": "abc"}, entrypoint=("/bin/sh",))
    assert spec.create_kwargs()["labels"] == {"io.pypto.sweep": "abc", "io.pypto.launcher": "1"}
    argv = spec.cli_argv()
    assert argv[argv.index("--label") + 1] == "io.pypto.sweep=abc"


@pytest.fixture
def image() -> Any:
    from pypto.toolchain.docker import select_image
    from pypto.toolchain.engine import docker_client
    from pypto.toolchain.settings import resolve_settings

    try:
        client = docker_client(timeout=10)
        return client, select_image(client, resolve_settings(platform="a5sim"))
    except ToolchainError as exc:
        pytest.skip(f"no engine or sim image: {exc.args[0].splitlines()[0]}")


@pytest.mark.container
def test_a_batch_runs_in_one_container_and_leaves_none(kernels: Path, tmp_path: Path, image: Any) -> None:
    client, _ = image
    store = tmp_path / "store"
    args = ["sweep", "kernels/sweep_add.py", "kernels/sweep_mul.py", "--platform", "a5sim", "--run",
            "--in-container", "--batch", "2", "--store", str(store)]
    result = CliRunner().invoke(cli, args)
    lines = [json.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]
    assert result.exit_code == 0 and [r["status"] for r in lines] == ["ok", "ok"], result.output
    assert all(r["message"].startswith("passed") for r in lines)
    assert not client.containers.list(all=True, filters={"label": "io.pypto.sweep"})
    again = CliRunner().invoke(cli, args)
    assert all(json.loads(x)["cached"] for x in again.stdout.splitlines() if x.startswith("{"))


@pytest.mark.container
def test_containers_of_dead_attempts_are_removed(image: Any) -> None:
    client, selected = image
    container = client.containers.run(selected.id, entrypoint=["sleep", "60"], detach=True, network_mode="none",
                                      labels={"io.pypto.sweep": "deadbeef0001"})
    try:
        assert remove_sweep_containers("deadbeef0001") == 1
        assert not client.containers.list(all=True, filters={"label": "io.pypto.sweep=deadbeef0001"})
    finally:
        try:
            container.remove(force=True)
        except Exception:  # noqa: BLE001 - already removed by the reaper
            pass
