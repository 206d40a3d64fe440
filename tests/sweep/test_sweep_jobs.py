"""Targets, jobs, shards and content keys of a sweep (no compiles)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto.errors import UserError
from pypto.flows.sweep_jobs import (
    discover_kernels,
    expand_targets,
    input_digest,
    job_key,
    make_jobs,
    parse_shard,
    select_shard,
)
from pypto.flows.sweep_task import status_of, summarize


def test_discover_reads_entry_kernels_without_running_the_file(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text("import pypto.language as pl\nraise SystemExit('never executed')\n"
                    "@pl.jit.incore\ndef helper(a): pass\n@pl.jit\ndef entry(a): pass\n"
                    "@pl.jit(auto_scope=False)\ndef entry2(a): pass\n@pl.jit.graph\ndef g(a): pass\n"
                    "@pl.program\nclass Prog: pass\n@pl.jit\ndef _private(a): pass\ndef plain(): pass\n")
    assert discover_kernels(path) == ["entry", "entry2", "g", "Prog"]


def test_a_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_text("x = (\n")
    with pytest.raises(UserError, match=r"bad\.py:1:\d+: error: invalid Python syntax"):
        discover_kernels(path)


def test_directory_targets_expand_to_kernels_and_skip_helpers(kernels: Path) -> None:
    (kernels / "_helper.py").write_text("X = 1\n")
    found = expand_targets(["kernels", "kernels/sweep_add.py::sweep_add"])
    assert [(rel, name) for _, rel, name in found] == [
        ("kernels/sweep_add.py", "sweep_add"), ("kernels/sweep_mul.py", "sweep_mul"),
        ("kernels/sweep_sub.py", "sweep_sub")]


@pytest.mark.parametrize(("target", "message"), [
    ("missing.py", "does not exist"), ("kernels::x", "needs a file"), ("kernels/sweep_add.py::1x", "starts with a digit")])
def test_bad_targets_are_user_errors(kernels: Path, target: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        expand_targets([target])


def test_jobs_are_the_cross_product(kernels: Path) -> None:
    jobs = make_jobs(["kernels"], ["a2a3sim", "a5sim"], ["0.1.0"], "tensormap_and_ringbuffer", run=True)
    assert len(jobs) == 6 and {j.platform for j in jobs} == {"a2a3sim", "a5sim"}
    assert all(j.mode == "run" for j in jobs)


def test_shards_partition_the_jobs_deterministically(kernels: Path) -> None:
    jobs = make_jobs(["kernels"], ["a2a3sim", "a5sim"], ["0.1.0"], "tensormap_and_ringbuffer", run=False)
    parts = [select_shard(jobs, (i, 3)) for i in range(3)]
    assert sorted(j.target + j.platform for p in parts for j in p) == sorted(j.target + j.platform for j in jobs)
    again = make_jobs(["kernels"], ["a2a3sim", "a5sim"], ["0.1.0"], "tensormap_and_ringbuffer", run=False)
    assert [j.target for j in select_shard(again, (1, 3))] == [j.target for j in parts[1]]


@pytest.mark.parametrize("text", ["3/3", "-1/2", "a/b", "1", "0/0"])
def test_bad_shards_are_refused(text: str) -> None:
    with pytest.raises(UserError, match="is not I/N"):
        parse_shard(text)


def test_keys_follow_contents_not_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.sweep.conftest import write_kernels

    def key(root: Path) -> str:
        monkeypatch.chdir(root)
        [job] = make_jobs([f"{root}/k/sweep_add.py"], ["a5sim"], ["0.1.0"], "tensormap_and_ringbuffer", run=False)
        return job_key(job, "id", "settings", input_digest(Path(job.file)))

    write_kernels(tmp_path / "one" / "k")
    write_kernels(tmp_path / "two" / "k")
    assert key(tmp_path / "one") == key(tmp_path / "two")  # two checkouts share keys
    (tmp_path / "two" / "k" / "sweep_mul.py").write_text("# a sibling the kernel does not import changed\n")
    assert key(tmp_path / "one") == key(tmp_path / "two")
    kernel = tmp_path / "two" / "k" / "sweep_add.py"
    kernel.write_text("import sweep_mul\n" + kernel.read_text())
    one = tmp_path / "one" / "k" / "sweep_add.py"
    one.write_text("import sweep_mul\n" + one.read_text())
    assert key(tmp_path / "one") != key(tmp_path / "two")  # now it imports the changed sibling


def test_exit_codes_map_to_statuses_and_messages() -> None:
    assert [status_of(c) for c in (0, 1, 2, 3, 4, -9)] == [
        "ok", "internal_error", "user_error", "user_error", "toolchain_error", "internal_error"]
    assert summarize(3, '{"ok": false, "error": {"message": "bad kernel"}}', "") == "bad kernel"
    assert summarize(1, "", "a\nb\nTraceback: boom\n") .endswith("Traceback: boom")


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--platform", "a9sim", "Invalid platform 'a9sim'"), ("--toolchain", "9.9", "Unknown toolchain '9.9'"),
    ("--shard", "2/2", "is not I/N")])
def test_bad_options_fail_before_any_job_runs(kernels: Path, tmp_path: Path, option: str, value: str,
                                              message: str) -> None:
    from click.testing import CliRunner

    from pypto.cli.main import cli

    store, results = tmp_path / "store", tmp_path / "results.jsonl"
    result = CliRunner().invoke(cli, ["sweep", "kernels", option, value, "--store", str(store), "--results", str(results)])
    assert result.exit_code == 3 and message in result.output
    assert not store.exists() and not results.exists()  # nothing half-written
