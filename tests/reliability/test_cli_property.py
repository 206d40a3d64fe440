"""A property of the whole ``pypto`` command line, over drawn argument vectors and environments.

For every subcommand (``compile``, ``run``, ``run-pto``, ``sweep``, ``toolchain``, ``doctor``,
``settings``) hypothesis draws options and values: paths (relative, with ``..``, absolute, non-ASCII,
directories, missing files, files where directories belong), shapes (huge, negative, zero, malformed),
tolerances (nan, negative), names, unknown options, and ``PYPTO_*`` values. The property: the process
exits 0, or 2/3/4 with a reason (a line saying ``error``/``Error``, or the ``--json`` error object) —
never 1, a Python traceback, a signal or a hang (per-call timeout) — and every file it creates lies
under its working directory or under a path the draw named.

Each call is a forked child of a warm fork server (``tests/fuzz/forkserver.py``) in a fresh working
directory three levels under a watched root (so ``../..`` stays inside it); no Docker engine is
touched (``DOCKER_HOST`` points at a closed socket). The suite runs ``CLI_FUZZ_EXAMPLES`` draws
(default 40, well under a minute: most draws are refused before any compile); ``nox -s "fuzz(cli)"``
runs more with a fresh seed.

:data:`KNOWN_OPEN` can list findings whose fix is still to come (the row of a findings file and a
pattern of its symptom); a draw that fails only with their symptom is counted, printed and let
through. It is empty: every finding of ``reliability-findings-2`` is fixed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, note, seed, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "fuzz"))
from forkclient import ForkClient  # noqa: E402

EXAMPLES = int(os.environ.get("CLI_FUZZ_EXAMPLES", "40"))
SEED = int(os.environ.get("CLI_FUZZ_SEED", "20261204"))
TIMEOUT = float(os.environ.get("CLI_FUZZ_TIMEOUT", "120"))

# finding id -> (the row it belongs to, a pattern of its symptom in the output). Emptied once fixed.
KNOWN_OPEN: dict[str, tuple[str, str]] = {}

W = "<W>"  # the watched root in drawn values; replaced by its path when a call runs
KERNEL = '''\
import pypto.language as pl


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


SHAPES = {"add": {"a": "32x32:f32", "b": "32x32:f32", "out": "32x32:f32"}}


def golden_add(a, b, out):
    return a + b
'''
PTO = REPO / "tests" / "runtime" / "data" / "add_128x128_f32.pto"
OUTCOMES: Counter[str] = Counter()
KNOWN_SEEN: list[str] = []


def _template(root: Path) -> Path:
    """The files every working directory starts with (copied per draw)."""
    t = root / "template"
    (t / "dir.py").mkdir(parents=True)
    (t / "kernels").mkdir()
    (t / "ünï").mkdir()
    (t / "good.py").write_text(KERNEL)
    (t / "kernels" / "k_add.py").write_text(KERNEL)
    (t / "ünï" / "ké.py").write_text(KERNEL)
    (t / "bad.py").write_text("import pypto.language as pl\ndef f(:\n")
    (t / "empty.py").write_text("")
    (t / "raises.py").write_text("raise RuntimeError('at import')\n")
    (t / "ends.py").write_text(KERNEL + "\nimport os\nos._exit(0)\n")
    (t / "good.pto").write_text(PTO.read_text())
    (t / "good.toml").write_text('[pypto]\nplatform = "a5sim"\n')
    (t / "bad.toml").write_text("[pypto]\nplatform = \n[[[\n")
    (t / "binary.toml").write_bytes(bytes(range(256)) * 2)
    (t / "afile").write_text("not a directory\n")
    return t


class Server(ForkClient):
    """The fork server, with an environment that leaves every PYPTO_* unset and no engine reachable."""

    def __init__(self, root: Path) -> None:
        super().__init__({"DOCKER_HOST": f"unix://{root}/no-engine.sock", "XDG_RUNTIME_DIR": str(root / "run"),
                          "PYPTO_LOG_FORMAT": "console"}, cwd=root, drop=("CONTAINER_HOST",))

    def run(self, argv: list[str], cwd: Path, env: dict[str, str | None], timeout: float) -> dict:  # type: ignore[override]
        return super().run(argv, cwd, timeout, env)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path, Path]]:
    base = tmp_path_factory.mktemp("cliprop")
    watched = base / "w"
    (watched / "a" / "b" / "up").mkdir(parents=True)
    (watched / "a" / "b" / "up" / "good.py").write_text(KERNEL)
    (watched / "abs").mkdir()
    srv = Server(base)
    yield srv, watched, _template(base)
    srv.close()
    print(f"\ncli property: {sum(OUTCOMES.values())} draws: " + ", ".join(f"{k} {v}" for k, v in sorted(OUTCOMES.items())))
    for line in KNOWN_SEEN[:20]:
        print("  known open: " + line)


# --- what a draw is made of ------------------------------------------------------------------------------------

def _mostly(good: str, others: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """``good`` half the time: draws that get past one option reach the checks of the next."""
    return st.one_of(st.just(good), others)


def _paths() -> st.SearchStrategy[str]:
    return _mostly("good.py", st.sampled_from([
        "good.py", "kernels", "kernels/k_add.py", "ünï/ké.py", "bad.py", "empty.py", "raises.py", "ends.py", "dir.py",
        "missing.py", "../up/good.py", "../../nothing.py", f"{W}/a/b/up/good.py", "afile", "afile/x.py",
        ".", "..", "", "/", "/dev/null", "good.pto", "nöpe/ü.py", "-", "good.py/..", "./good.py"]))


def _targets() -> st.SearchStrategy[str]:
    names = _mostly("", st.sampled_from(["::add", "::nope", "::1bad", "::", "::add::add", "::ädd"]))
    return st.builds(lambda p, n: p + n, _paths(), names)


def _out_dirs() -> st.SearchStrategy[str]:
    return _mostly("out", st.sampled_from(["out/deep/er", "../out_up", f"{W}/abs/out", "good.py", "afile/sub",
                            "ünï_out", "", "/proc/pypto-x", "/dev/null/x", "dir.py", ".", "out/../out2"]))


_DIMS = _mostly("32x32", st.sampled_from(["1", "0", "-1", "32x0", "1099511627776x1", "65536x65536",
                         "99999999999999999999999x1", "32x", "x32", "3.5", "32x32x32x32x32"]))
_DTYPES = _mostly(":f32", st.sampled_from(["", ":fp16", ":bf16", ":int8", ":bogus", ":"]))
_SHAPES = st.builds(lambda n, d, t: f"{n}={d}{t}", st.sampled_from(["a", "b", "out", "a", "b", "out", "zz", "1a", ""]),
                    _DIMS, _DTYPES)
_FLOATS = st.sampled_from(["1e-5", "0", "-1", "nan", "inf", "-inf", "1e400", "abc", "", "1e-300"])
_INTS = st.sampled_from(["0", "1", "-5", "2", "99999999999999999999", "x", ""])
_PLATFORMS = _mostly("a2a3sim", st.sampled_from(["a5sim", "a2a3", "bogus", "A5SIM", ""]))
_RUNTIMES = st.sampled_from(["tensormap_and_ringbuffer", "host_build_graph", "bogus", ""])
_TOOLCHAINS = st.sampled_from(["0.1.0", "9.9", "../x", ""])
_UNKNOWN = st.sampled_from(["--bogus", "-x", "--platform", "--", "--json=3", "-o"])


def _options(menu: dict[str, st.SearchStrategy[str] | None]) -> st.SearchStrategy[list[str]]:
    """Some options of a menu (flags have None), each with a drawn value, in a drawn order."""
    def one(name: str) -> st.SearchStrategy[list[str]]:
        value = menu[name]
        return st.just([name]) if value is None else value.map(lambda v: [name, v])

    picked = st.lists(st.sampled_from(sorted(menu)), max_size=4).flatmap(
        lambda names: st.tuples(*[one(n) for n in names]) if names else st.just(()))
    return picked.map(lambda groups: [x for g in groups for x in g])


def _commands() -> st.SearchStrategy[list[str]]:
    out, target, path = _out_dirs(), _targets(), _paths()
    common = {"--platform": _PLATFORMS, "--runtime": _RUNTIMES, "-o": out, "--shape": _SHAPES, "--json": None,
              "--file-prefix-map": st.sampled_from(["/a=/b", "noequals", "=", "/src=."])}
    compile_menu = {**common, "--skip-ptoas": None, "--dump-passes": st.sampled_from(["none", "explicit", "x"]),
                    "--verify": st.sampled_from(["none", "basic", "roundtrip", "x"]), "--in-container": None}
    run_menu = {**common, "--rtol": _FLOATS, "--atol": _FLOATS, "--seed": _INTS,
                "--swimlane": st.sampled_from(["0", "4", "9"]), "--dump-args": st.sampled_from(["1", "3"])}
    pto_menu = {"--arg": st.sampled_from(["x=128x128:f32:in", "y=128x128:f32:in", "z=128x128:f32:out", "x=0",
                                          "x=1099511627776x1:f32:in", "w=4", "x=-1x2", "bad"]),
                "--platform": _PLATFORMS, "--save": out, "--json": None}
    sweep_menu = {"--platform": _PLATFORMS, "--toolchain": _TOOLCHAINS, "--workers": _INTS, "--batch": _INTS,
                  "--shard": st.sampled_from(["0/1", "1/1", "a/b", "0/0", "-1/2"]), "--results": out,
                  "--store": out, "--timeout": _FLOATS, "--render": st.sampled_from(["k8s", "helm"]),
                  "--image": st.sampled_from(["pypto-0.1.0-sim:x", "x y;rm -rf /", ""]),
                  "--executor": st.sampled_from(["local", "dask", "ray"]),
                  "--scheduler": st.sampled_from(["tcp://127.0.0.1:1", "nowhere"])}
    toolchain = st.one_of(
        st.just(["toolchain", "list"]),
        st.builds(lambda v, g: ["toolchain", "show", *v, *g], st.sampled_from([[], ["0.1.0"], ["9.9"], ["../x"]]),
                  st.sampled_from([[], ["--get", "ptoas.sha256"], ["--get", "no.such.key"], ["--get", ""]])),
        st.builds(lambda w: ["toolchain", "path", *w], st.sampled_from([[], ["ptoas"], ["gxx"], ["include"], ["x"]])),
        st.builds(lambda i: ["toolchain", "verify", *i], st.sampled_from([[], ["--image", "x y"], ["--image", "a:b"]])),
        st.builds(lambda o: ["toolchain", "shell", "--print-command", "-o", o], out),
        st.just(["toolchain", "bogus"]),
    )
    return st.one_of(
        st.builds(lambda t, o: ["compile", t, *o], target, _options(compile_menu)),
        st.builds(lambda t, o: ["run", t, *o], target, _options(run_menu)),
        st.builds(lambda p, o: ["run-pto", p, *o], path, _options(pto_menu)),
        # a private store in the working directory unless the draw names one (the last --store wins)
        st.builds(lambda t, o: ["sweep", t, "--workers", "1", "--store", "S", *o], target, _options(sweep_menu)),
        toolchain,
        st.builds(lambda j: ["doctor", *j], st.sampled_from([[], ["--json"]])),
        st.builds(lambda j: ["settings", *j], st.sampled_from([[], ["--json"], ["--bogus"]])),
        st.just([]), st.just(["bogus-command"]), st.just(["--version"]),
    )


def _globals() -> st.SearchStrategy[list[str]]:
    return _options({"--toolchain": _TOOLCHAINS, "--log-level": st.sampled_from(["debug", "none", "loud"]),
                     "--log-format": st.sampled_from(["json", "console", "xml"]),
                     "--config": st.sampled_from(["good.toml", "bad.toml", "binary.toml", "missing.toml", "dir.py"])})


def _env() -> st.SearchStrategy[dict[str, str]]:
    values = {
        "PYPTO_PLATFORM": _PLATFORMS, "PYPTO_RUNTIME": _RUNTIMES, "PYPTO_LOG_LEVEL": st.sampled_from(["debug", "x"]),
        "PYPTO_VERIFY_LEVEL": st.sampled_from(["roundtrip", "x"]), "PYPTO_CODEGEN_MAX_WORKERS": _INTS,
        "PYPTO_PROG_BUILD_DIR": _out_dirs(), "PYPTO_CACHE_DIR": st.sampled_from(["afile", "afile/cache"]),
        "PYPTO_CONTAINER_IMAGE": st.sampled_from(["x y;rm -rf /", "pypto-0.1.0-sim:t"]),
        "PYPTO_CONTAINER_ENGINE": st.sampled_from(["podman", "lxc"]), "PYPTO_JIT_CACHE": st.sampled_from(["0", "x"]),
        "PYPTO_TOOLCHAIN": _TOOLCHAINS, "PYPTO_PLATFROM": st.just("a5sim"),
    }
    return st.dictionaries(st.sampled_from(sorted(values)), st.just(""), max_size=3).flatmap(
        lambda keys: st.fixed_dictionaries({k: values[k] for k in keys}))


# --- the property -------------------------------------------------------------------------------------------------

def _snapshot(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def _allowed(cwd: Path, argv: list[str], env: dict[str, str]) -> list[Path]:
    """Where a draw may create files: its working directory and every path it named."""
    roots = [cwd]
    for token in [*argv, *env.values()]:
        for part in token.split("::")[0].split("="):
            if part:
                roots.append(Path(os.path.normpath(cwd / part)))
    return roots


def _reason(result: dict) -> bool:
    err, out = result.get("stderr", ""), result.get("stdout", "")
    if re.search(r"(^|\n)(Error|error)\b|: error: ", err) or (result["code"] == 2 and "Usage: " in err + out):
        return True
    start = out.find("{")
    if start >= 0:
        try:
            data = json.loads(out[start:])
            return bool(isinstance(data, dict) and data.get("error", {}).get("message"))
        except ValueError:
            return False
    return False


def _known(text: str) -> str | None:
    for finding, (_row, pattern) in KNOWN_OPEN.items():
        if re.search(pattern, text):
            return finding
    return None


def _check(result: dict, created: list[Path]) -> str | None:
    """What is wrong with one call, or None."""
    text = result.get("stderr", "") + result.get("stdout", "")
    if result["status"] == "timeout":
        return f"hang (no exit within {TIMEOUT:g}s)"
    if result["status"] == "signal":
        return f"killed by signal {-result['code']}"
    if result["code"] not in (0, 2, 3, 4):
        return f"exit {result['code']}"
    if "Traceback (most recent call last)" in text or "internal error: " in text:
        return "a traceback or internal error"
    if result["code"] != 0 and not _reason(result):
        return "no reason given for a non-zero exit"
    if created:
        return f"created files outside its dirs: {[str(p) for p in created[:5]]}"
    return None


_count = iter(range(10**9))
CALLS = st.tuples(st.tuples(_globals(), _commands()).map(lambda t: t[0] + t[1]), _env())
HUGE = [f"--shape={n}=65536x65536:f32" for n in ("a", "b", "out")]


def _call(server: tuple[Server, Path, Path], argv: list[str], env: dict[str, str]) -> None:
    srv, watched, template = server
    argv = [a.replace(W, str(watched)) for a in argv]
    env = {k: v.replace(W, str(watched)) for k, v in env.items()}
    cwd = watched / "a" / "b" / f"case_{next(_count)}"
    shutil.copytree(template, cwd, symlinks=True)
    before = _snapshot(watched)
    result = srv.run(argv, cwd, dict(env), TIMEOUT)
    roots = _allowed(cwd, argv, env)
    created = sorted(p for p in _snapshot(watched) - before if not any(p == r or r in p.parents for r in roots))
    problem = _check(result, created)
    shutil.rmtree(cwd, ignore_errors=True)
    text = result.get("stderr", "") + result.get("stdout", "")
    note(f"argv={argv!r} env={env!r}\nexit={result['code']} ({result['status']})\n{text[-2500:]}")
    finding = _known(text) if problem else None
    OUTCOMES[finding or problem or f"exit {result['code']}"] += 1
    if finding is not None:
        KNOWN_SEEN.append(f"{finding} ({KNOWN_OPEN[finding][0]}): argv={argv!r} env={env!r}")
        return
    assert problem is None, f"{problem}\nargv={argv!r}\nenv={env!r}\nexit {result['code']}\n{text[-2500:]}"


@pytest.mark.slow
@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, derandomize="CLI_FUZZ_SEED" not in os.environ,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])
@given(call=CALLS)
# the reproductions of the findings' rows, always tried first
@example(call=(["compile", "good.py", "-o", "out", *HUGE], {}))  # A2
@example(call=(["--config", "binary.toml", "compile", "good.py", "-o", "out"], {}))  # A3
@example(call=(["run", "good.py", "--rtol", "-1"], {}))  # A4
@example(call=(["run", "good.py", "--seed", "-5"], {}))  # A4
@example(call=(["compile", "good.py", "-o", "out", "--in-container"], {"PYPTO_CONTAINER_IMAGE": "x y;rm -rf /"}))  # A5
@example(call=(["compile", "good.py", "-o", "out", "--in-container"], {"PYPTO_CONTAINER_ENGINE": "podman"}))  # A6
@example(call=(["compile", "ends.py", "-o", "out"], {}))  # C3
@example(call=(["sweep", "ends.py", "--store", "S", "--workers", "1"], {}))  # C3
@example(call=(["compile", "dir.py"], {}))  # A13
def test_cli_exits_cleanly_for_any_arguments_and_environment(server: tuple[Server, Path, Path],
                                                             call: tuple[list[str], dict[str, str]]) -> None:
    _call(server, *call)
