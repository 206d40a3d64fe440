"""``pypto sweep --render k8s``: an Indexed Job manifest, checked against the batch/v1 Job schema (not applied)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from pypto.cli.main import cli
from pypto.flows.sweep_jobs import make_jobs, select_shard

SCHEMA = json.loads((Path(__file__).parent / "data" / "k8s_batch_v1_job.schema.json").read_text())
IMAGE = "registry.example/pypto-0.1.0-sim@sha256:" + "ab" * 32


def render(*args: str) -> dict:
    result = CliRunner().invoke(cli, ["sweep", "kernels", "--platform", "a2a3sim", "--platform", "a5sim",
                                      "--render", "k8s", "--image", IMAGE, *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_manifest_is_a_valid_indexed_job(kernels: Path) -> None:
    job = render("--batch", "4", "--workers", "1", "--run")
    jsonschema.validate(job, SCHEMA)
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == 2  # 6 jobs / 4 per shard
    assert spec["parallelism"] == 1 and spec["maxFailedIndexes"] <= spec["completions"]
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"  # required by backoffLimitPerIndex
    [container] = pod["containers"]
    assert container["image"] == IMAGE
    words = shlex.split(container["args"][0].split("exec ", 1)[1].replace("$JOB_COMPLETION_INDEX", "I"))
    assert words[:3] == ["pypto", "sweep", "kernels"] and "--run" in words
    assert words[words.index("--shard") + 1] == "I/2"


def test_pods_cover_every_job_once(kernels: Path) -> None:
    job = render("--batch", "2")
    shards = job["spec"]["completions"]
    jobs = make_jobs(["kernels"], ["a2a3sim", "a5sim"], ["0.1.0"], "tensormap_and_ringbuffer", run=False)
    picked = [j.target + j.platform for i in range(shards) for j in select_shard(jobs, (i, shards))]
    assert sorted(picked) == sorted(j.target + j.platform for j in jobs)


def test_schema_rejects_a_misspelt_field(kernels: Path) -> None:
    job = render()
    job["spec"]["completionMod"] = job["spec"].pop("completionMode")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(job, SCHEMA)


def test_targets_outside_the_working_directory_are_refused(kernels: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    result = CliRunner().invoke(cli, ["sweep", str(kernels / "sweep_add.py"), "--render", "k8s", "--image", IMAGE])
    assert result.exit_code == 3 and "under the working directory" in result.output
