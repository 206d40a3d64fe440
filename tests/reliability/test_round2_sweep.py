"""Reliability findings, round 2, part C: the sweep's store key and records, files that end the
interpreter at import, container and Dask errors. Each test is named after its finding id.

The sweeps here run as ``python -m pypto sweep`` processes with a private result store; the g++ build
cache stays shared (as in tests/sweep), so a kernel run costs a few seconds once warm.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from relkit import REPO, Outcome, needs_gxx, run

KERNEL = '''\
import pypto.language as pl
{imports}


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


SHAPES = {{"add": {{"a": "32x32:f32", "b": "32x32:f32", "out": "32x32:f32"}}}}


def golden_add(a, b, out):
    return {golden}
{tail}'''


def kernel(imports: str = "", golden: str = "a + b", tail: str = "") -> str:
    return KERNEL.format(imports=imports, golden=golden, tail=tail)


def env_for(tmp: Path, **extra: str) -> dict[str, str]:
    """This checkout first on sys.path, no inherited PYPTO_*, a private build dir (the g++ cache is shared)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update(PYPTO_PROG_BUILD_DIR=str(tmp / "build"), PYPTO_LOG_FORMAT="json", **extra)
    return env


def pypto(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> Outcome:
    return run([sys.executable, "-m", "pypto", *args], env, cwd, timeout)


def lines(out: Outcome) -> list[dict]:
    return [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]


def no_crash(out: Outcome) -> None:
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr, out.describe()


# --- C2: the store key covers the local modules the kernel imports -----------------------------------------

def _helper_tree(root: Path) -> Path:
    """``useshelper.py`` importing the package ``helpers/`` (whose ``sub.py`` holds the golden's expression)."""
    (root / "helpers" / "deep").mkdir(parents=True)
    (root / "helpers" / "__init__.py").write_text("from .sub import expected\n")
    (root / "helpers" / "sub.py").write_text("from .deep import leaf\n\n\ndef expected(a, b):\n"
                                             "    return leaf.combine(a, b)\n")
    (root / "helpers" / "deep" / "__init__.py").write_text("")
    (root / "helpers" / "deep" / "leaf.py").write_text("def combine(a, b):\n    return a + b\n")
    path = root / "useshelper.py"
    path.write_text(kernel(imports="from helpers import expected", golden="expected(a, b)"))
    return path


@needs_gxx
@pytest.mark.sim
def test_C2_editing_an_imported_helper_package_reruns_the_job(tmp_path: Path) -> None:
    _helper_tree(tmp_path)
    env = env_for(tmp_path)
    args = ["sweep", "useshelper.py", "--run", "--store", "S", "--workers", "1", "--platform", "a2a3sim"]
    first = pypto(args, tmp_path, env)
    assert first.code == 0 and [r["status"] for r in lines(first)] == ["ok"], first.describe()
    leaf = tmp_path / "helpers" / "deep" / "leaf.py"  # two packages deep, reached by relative imports
    leaf.write_text(leaf.read_text().replace("a + b", "a - b"))  # the golden is now wrong
    second = pypto(args, tmp_path, env)
    [record] = lines(second)
    assert record["cached"] is False and record["status"] == "user_error", second.describe()
    assert second.code == 3 and "do not match the golden" in record["message"], record["message"]


def test_C2_key_follows_imports_resolved_from_the_kernel_directory(tmp_path: Path) -> None:
    from pypto.flows.sweep_imports import local_closure

    path = _helper_tree(tmp_path)
    (tmp_path / "unrelated.py").write_text("X = 1\n")  # beside it, never imported
    (tmp_path / "helpers" / "unused.py").write_text("X = 1\n")
    (tmp_path / "mod_a.py").write_text("import mod_b.inner\n")
    (tmp_path / "mod_b").mkdir()  # a namespace package (no __init__.py)
    (tmp_path / "mod_b" / "inner.py").write_text("from importlib import import_module\nimport_module('mod_c')\n")
    (tmp_path / "mod_c.py").write_text("import numpy\n")
    path.write_text("import mod_a\nimport numpy, os\n" + path.read_text())
    found = {p.relative_to(tmp_path).as_posix() for p in local_closure(path)}
    assert found == {"useshelper.py", "helpers/__init__.py", "helpers/sub.py", "helpers/deep/__init__.py",
                     "helpers/deep/leaf.py", "mod_a.py", "mod_b/inner.py", "mod_c.py"}
    # an import by a computed name cannot be followed: then every source under the directory counts
    (tmp_path / "mod_c.py").write_text("import importlib\nimportlib.import_module('mod_' + 'd')\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "x.py").write_text("")
    found = {p.relative_to(tmp_path).as_posix() for p in local_closure(path)}
    assert {"unrelated.py", "helpers/unused.py"} <= found and ".venv/lib/x.py" not in found


# --- C3: a file that ends the interpreter at import -----------------------------------------------------------

EXITS = {"os_exit_0": "import os\nos._exit(0)\n", "os_exit_3": "import os\nos._exit(3)\n",
         "sys_exit_0": "import sys\nsys.exit(0)\n", "exec_true": "import os\nos.execl('/bin/true', 'true')\n"}
SAID = {"os_exit_0": "called os._exit(0)", "os_exit_3": "called os._exit(3)", "sys_exit_0": "SystemExit: 0",
        "exec_true": "called os.execv("}


@needs_gxx
@pytest.mark.parametrize("how", sorted(EXITS))
def test_C3_os_exit_at_import_is_a_failed_sweep_job(tmp_path: Path, how: str) -> None:
    (tmp_path / "ends.py").write_text(kernel(tail="\n" + EXITS[how]))
    out = pypto(["sweep", "ends.py::add", "--store", "S", "--workers", "1", "--platform", "a2a3sim"], tmp_path,
                env_for(tmp_path))
    [record] = lines(out)
    assert record["status"] != "ok" and out.code != 0, out.describe()
    assert record["status"] == "user_error" and "ends.py:" in record["message"], record
    stored = [json.loads(p.read_text()) for p in (tmp_path / "S" / "ac").glob("*.json")]
    assert all(r["status"] != "ok" for r in stored), stored
    again = pypto(["sweep", "ends.py::add", "--store", "S", "--workers", "1", "--platform", "a2a3sim"], tmp_path,
                  env_for(tmp_path))
    assert [r["status"] for r in lines(again)] == ["user_error"], again.describe()  # never served as ok


@pytest.mark.parametrize("command", ["compile", "run"])
@pytest.mark.parametrize("how", sorted(EXITS))
def test_C3_os_exit_at_import_fails_compile_and_run(tmp_path: Path, how: str, command: str) -> None:
    (tmp_path / "ends.py").write_text(kernel(tail="\n" + EXITS[how]))
    out = pypto([command, "ends.py", "-o", "out"], tmp_path, env_for(tmp_path))
    assert out.code == 3, out.describe()
    no_crash(out)
    line = kernel(tail="\n" + EXITS[how]).count("\n")  # the exit is the file's last line
    assert f"ends.py:{line}:1: error:" in out.stderr, out.describe()
    assert SAID[how] in out.stderr, out.describe()
    assert not (tmp_path / "out" / "compiled_meta.json").exists()


def test_C3_exit_0_without_a_result_is_not_ok(tmp_path: Path) -> None:
    """The sweep's own check, whatever ended the child: exit 0 counts only with its result and an artifact."""
    from pypto.flows.sweep_task import outcome, status_of

    artifact = tmp_path / "artifact"
    artifact.mkdir()
    code, message = outcome(0, "", "", artifact)
    assert status_of(code) == "internal_error" and "printed no result and left no artifact" in message
    (artifact / "compiled_meta.json").write_text("{}")
    result = 'user output {\n{\n  "schema_version": 1,\n  "ok": true,\n  "command": "compile"\n}\n'
    assert outcome(0, result, "", artifact) == (0, "compiled")
    assert status_of(outcome(0, "{}", "", artifact)[0]) == "internal_error"
    assert outcome(3, "", "boom", artifact) == (3, "boom")


# --- A5 / A6: container errors -------------------------------------------------------------------------------

def _no_engine(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No engine anywhere: DOCKER_HOST at a closed socket, no podman socket, PATH without podman."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    env = env_for(tmp_path, DOCKER_HOST=f"unix://{tmp_path}/closed.sock", XDG_RUNTIME_DIR=str(tmp_path / "run"),
                  PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin", **extra)
    env.pop("CONTAINER_HOST", None)
    return env


@pytest.mark.parametrize("ref", ["x y;rm -rf /", "UPPER/case:tag", "img:", "", "a" * 300],
                         ids=["shell", "upper", "empty-tag", "empty", "long"])
def test_A5_a_bad_image_reference_is_refused_before_the_engine(tmp_path: Path, ref: str) -> None:
    (tmp_path / "add.py").write_text(kernel())
    env = _no_engine(tmp_path, PYPTO_CONTAINER_IMAGE=ref)
    out = pypto(["compile", "add.py", "-o", "out", "--in-container"], tmp_path, env)
    if ref == "":  # an empty variable counts as unset: then the engine is what is missing
        assert out.code == 4 and "Cannot reach the Docker engine" in out.stderr, out.describe()
        return
    assert out.code == 3, out.describe()
    no_crash(out)
    assert "is not an image reference" in out.stderr and "[HOST[:PORT]/]NAME[:TAG]" in out.stderr
    assert ref[:40] in out.stderr and "PYPTO_CONTAINER_IMAGE" in out.stderr
    assert "Cannot reach" not in out.stderr  # refused before any engine call


@pytest.mark.parametrize("argv", [["sweep", "add.py", "--in-container", "--image", "x y;rm -rf /"],
                                  ["toolchain", "shell", "--image", "x y;rm -rf /"],
                                  ["toolchain", "verify", "--image", "x y;rm -rf /"]],
                         ids=["sweep", "shell", "verify"])
def test_A5_a_bad_image_option_is_refused_before_the_engine(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "add.py").write_text(kernel())
    out = pypto([*argv, *(["--store", "S"] if argv[0] == "sweep" else [])], tmp_path, _no_engine(tmp_path))
    assert out.code == 3 and "'x y;rm -rf /' is not an image reference" in out.stderr, out.describe()
    assert not (tmp_path / "S").exists()


def test_A5_valid_references_pass_the_grammar() -> None:
    from pypto.toolchain.image_ref import reference_problem

    good = ["pypto-0.1.0-sim:3f2a", "registry.example.com:5000/team/pypto-0.1.0-sim:v1.2_3", "ubuntu",
            "localhost/a__b/c-d.e", "img@sha256:" + "ab" * 32, "sha256:" + "0f" * 32, "0123456789ab"]
    assert [reference_problem(r) for r in good] == [None] * len(good)


def test_A6_podman_selected_where_there_is_none_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "add.py").write_text(kernel())
    env = _no_engine(tmp_path, PYPTO_CONTAINER_ENGINE="podman")
    env.pop("DOCKER_HOST")
    out = pypto(["compile", "add.py", "-o", "out", "--in-container"], tmp_path, env)
    assert out.code == 3, out.describe()
    no_crash(out)
    assert "podman is not installed" in out.stderr and "PYPTO_CONTAINER_ENGINE=docker" in out.stderr


def test_A6_a_stopped_docker_engine_says_how_to_start_it(tmp_path: Path) -> None:
    (tmp_path / "add.py").write_text(kernel())
    for host in (f"unix://{tmp_path}/closed.sock", "garbage://x"):
        out = pypto(["compile", "add.py", "-o", "out", "--in-container"], tmp_path,
                    {**_no_engine(tmp_path), "DOCKER_HOST": host})
        assert out.code == 4, out.describe()  # a missing engine is a missing toolchain (exit-code table)
        no_crash(out)
        assert "Cannot reach the Docker engine" in out.stderr and "start the engine" in out.stderr


def test_A6_podman_never_gets_the_userns_mode_the_docker_sdk_refuses(tmp_path: Path) -> None:
    from docker.types import HostConfig

    from pypto.toolchain.docker import plan_run
    from pypto.toolchain.settings import resolve_settings

    settings = resolve_settings(container_engine="podman")
    spec = plan_run(["compile"], settings=settings, source_dir=tmp_path, output_dir=tmp_path / "o", image="img")
    kwargs = spec.create_kwargs()
    HostConfig(version="1.41", userns_mode=kwargs.get("userns_mode"))  # raised ValueError for keep-id
    assert spec.user is None or os.getuid() == 0  # rootless podman: container root is the caller


# --- A7: Dask not importable ---------------------------------------------------------------------------------

def test_A7_dask_executor_without_distributed_says_how_to_install_it(tmp_path: Path) -> None:
    (tmp_path / "nodist").mkdir()
    (tmp_path / "nodist" / "sitecustomize.py").write_text("import sys\nsys.modules['distributed'] = None\n")
    (tmp_path / "add.py").write_text(kernel())
    env = env_for(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "nodist"), env["PYTHONPATH"]])
    out = pypto(["sweep", "add.py", "--executor", "dask", "--workers", "1", "--store", "S"], tmp_path, env)
    assert out.code == 3, out.describe()
    no_crash(out)
    assert "pip install 'pypto[sweep]'" in out.stderr and "--executor dask" in out.stderr
    assert lines(out) == [] and not (tmp_path / "S" / "ac").exists()  # nothing ran


# --- A8: forged or damaged store records ----------------------------------------------------------------------

def _job(tmp_path: Path):
    from pypto.flows.sweep_jobs import make_jobs

    (tmp_path / "add.py").write_text(kernel())
    [job] = make_jobs([str(tmp_path / "add.py")], ["a2a3sim"], ["0.1.0"], "tensormap_and_ringbuffer", run=True)
    from dataclasses import replace

    return replace(job, key="ab" * 32)


def _good_record(job) -> dict:
    return {"target": job.target, "platform": job.platform, "toolchain": job.toolchain, "status": "ok",
            "exit_code": 0, "message": "passed (max error 0.0)", "artifact": "/x/artifact", "cached": False,
            "seconds": 1.5, "key": job.key}


BAD_RECORDS = {
    "forged": '{"status":"ok","exit_code":0,"message":"forged"}',
    "not-json": "{\"status\": \"ok\", ",
    "a-list": "[]",
    "wrong-type": {"seconds": "fast"},
    "bool-exit": {"exit_code": True},
    "status-vs-exit": {"exit_code": 3},
    "uncacheable": {"status": "internal_error", "exit_code": 1},
    "other-job": {"key": "cd" * 32},
    "other-platform": {"platform": "a5sim"},
    "unknown-field": {"extra": 1},
    "missing-key": None,
}


@pytest.mark.parametrize("kind", sorted(BAD_RECORDS))
def test_A8_a_forged_or_damaged_record_is_a_cache_miss(tmp_path: Path, kind: str,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    from pypto.flows.sweep_store import cached_record

    job = _job(tmp_path)
    store = tmp_path / "S"
    (store / "out" / job.key / "artifact").mkdir(parents=True)
    (store / "out" / job.key / "artifact" / "compiled_meta.json").write_text("{}")
    (store / "ac").mkdir()
    path = store / "ac" / f"{job.key}.json"
    path.write_text(json.dumps(_good_record(job)))
    assert cached_record(store, job)["cached"] is True  # the genuine record is served
    bad = BAD_RECORDS[kind]
    if isinstance(bad, dict):
        text = json.dumps({**_good_record(job), **bad})
    elif bad is None:
        record = _good_record(job)
        del record["platform"]
        text = json.dumps(record)
    else:
        text = bad
    path.write_text(text)
    assert cached_record(store, job) is None


def test_A8_an_ok_record_with_an_empty_artifact_is_a_miss(tmp_path: Path) -> None:
    from pypto.flows.sweep_store import cached_record

    job = _job(tmp_path)
    store = tmp_path / "S"
    (store / "out" / job.key / "artifact").mkdir(parents=True)
    (store / "ac").mkdir()
    (store / "ac" / f"{job.key}.json").write_text(json.dumps(_good_record(job)))
    assert cached_record(store, job) is None  # the C3 store: an "ok" with nothing produced


@needs_gxx
@pytest.mark.sim
def test_A8_a_forged_record_is_rerun_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "add.py").write_text(kernel())
    env = env_for(tmp_path)
    args = ["sweep", "add.py", "--run", "--store", "S", "--workers", "1", "--platform", "a2a3sim"]
    assert pypto(args, tmp_path, env).code == 0
    [path] = (tmp_path / "S" / "ac").glob("*.json")
    path.write_text('{"status":"ok","exit_code":0,"message":"FORGED-BY-TEST"}')
    out = pypto(args, tmp_path, env)
    assert out.code == 0, out.describe()
    no_crash(out)
    [record] = lines(out)
    assert record["cached"] is False and record["message"].startswith("passed") and "FORGED-BY-TEST" not in out.stdout
    assert f"ignoring {path}" in out.stderr and "the job runs again" in out.stderr
    assert json.loads(path.read_text())["message"].startswith("passed")  # the fresh record replaced it


# --- found by the CLI property test (tests/reliability/test_cli_property.py) ------------------------------------

@needs_gxx
def test_a_failing_sweep_says_why_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "add.py").write_text(kernel())
    out = pypto(["sweep", "add.py::nope", "/dev/null", "--store", "S", "--workers", "1", "--platform", "a2a3sim"],
                tmp_path, env_for(tmp_path))
    assert out.code == 3, out.describe()
    assert "error: user_error: add.py::nope a2a3sim 0.1.0: " in out.stderr and "no @pl.program or @pl.jit kernel named 'nope'" in out.stderr
    assert "error: user_error: /dev/null a2a3sim 0.1.0: /dev/null: not a Python file" in out.stderr


@pytest.mark.parametrize("value", ["nan", "-1", "0", "inf"])
def test_a_sweep_timeout_must_be_a_positive_number(tmp_path: Path, value: str) -> None:
    (tmp_path / "add.py").write_text(kernel())
    out = pypto(["sweep", "add.py", "--store", "S", "--timeout", value], tmp_path, env_for(tmp_path))
    assert out.code == 2 and "is not a positive number of seconds" in out.stderr, out.describe()
    assert not (tmp_path / "S").exists()
