"""No name escapes its directory (findings E1, E2, A9 of round 2).

Every name that becomes a file or an emitted symbol (a ``name_hint``, a program's class name, a
function's name, a ``@pl.jit`` function's ``__name__``, a ``FILE::NAME`` target, a ``.pto`` function)
is checked by one rule (``pypto.artifact.names``) before anything is written: a located user error,
never a file outside ``-o`` / the build dir, never a ptoas "unexpected character" blamed on the toolchain.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest
from relkit import REPO, Outcome, cli, env_for, run

import pypto.language as pl
from pypto.artifact.names import InvalidNameError, check_symbol, contained, symbol_problem
from pypto.errors import ParserSyntaxError, UserError

ESCAPE = "ESCAPED"

ADD_JIT = '''\
import pypto.language as pl


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP{hint}):
        out[:] = pl.add(a, b)
    return out


SHAPES = {{"add": {{"a": "64x64:f32", "b": "64x64:f32", "out": "64x64:f32"}}}}


def golden_add(a, b, out):
    return a + b
'''

UNICODE_PROGRAM = '''\
import pypto.language as pl


@pl.program
class {cls}:
    @pl.function(type=pl.FunctionType.InCore)
    def {kernel}(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
                 ) -> pl.Tensor[[64, 64], pl.FP32]:
        out = pl.store(pl.load(a, [0, 0], [64, 64]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
             ) -> pl.Tensor[[64, 64], pl.FP32]:
        out = self.{kernel}(a, out)
        return out


def golden(a, out):
    return a
'''

JIT_RENAMED = '''\
import sys

import numpy as np

import pypto.language as pl
from pypto.errors import UserError


def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


add.__name__ = add.__qualname__ = sys.argv[1]
kernel = pl.jit(add)
a = np.ones((64, 64), np.float32)
for how in ("compile", "call"):
    try:
        kernel.compile(a, a, np.zeros_like(a)) if how == "compile" else kernel(a, a, np.zeros_like(a))
        print(how, "ACCEPTED")
    except UserError as exc:
        print(how, "REFUSED", type(exc).__name__, str(exc).splitlines()[0])
'''


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return env_for(tmp_path / "cache", tmp_path / "build" / "a" / "b")


def _escaped(root: Path) -> list[Path]:
    """Everything named like the escape target anywhere under ``root`` (inside or outside -o)."""
    return [p for p in root.rglob(f"*{ESCAPE}*") if p.suffix != ".py"]


def script_with_args(path: Path, env: dict[str, str], *args: str) -> Outcome:
    return run([sys.executable, str(path), *args], env, path.parent)


def _refused(out: Outcome, code: int, *needles: str) -> None:
    assert out.code == code, out.describe()
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr, out.describe()
    for needle in needles:
        assert needle in out.stderr, out.describe()


def test_E1_name_hint_cannot_escape_output_dir(tmp_path: Path, env: dict[str, str]) -> None:
    case = tmp_path / "case"
    case.mkdir()
    hint = f"../../../..{tmp_path}/{ESCAPE}_hint"
    (case / "trav_hint.py").write_text(ADD_JIT.format(hint=f", name_hint={hint!r}"))
    out = cli(["compile", "trav_hint.py", "-o", str(tmp_path / "o")], env, case)
    _refused(out, 3, "trav_hint.py:6:5: error: pl.at(name_hint=...)", "path separator", "ASCII identifier")
    assert _escaped(tmp_path) == [] and not (tmp_path / "o").exists()


@pytest.mark.parametrize("hint", ["class", "has space", "kérnel", "", "9lives"])
def test_E1_name_hint_rule_in_the_parser(hint: str) -> None:
    """The parser refuses a bad name_hint at the ``with`` (upstream's ParserSyntaxError); "" means none."""
    def body() -> object:
        @pl.program
        class Prog:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
                     ) -> pl.Tensor[[64, 64], pl.FP32]:
                with pl.at(level=pl.Level.CORE_GROUP, name_hint=hint):
                    out = pl.store(pl.load(a, [0, 0], [64, 64]), [0, 0], out)
                return out
        return Prog

    if hint == "":
        assert body().name == "Prog"
        return
    with pytest.raises(ParserSyntaxError, match=r"name_hint=\.\.\.\) .* cannot name a kernel") as info:
        body()
    assert info.value.span is not None and info.value.span.file == __file__


def test_E2_jit_name_cannot_escape_build_dir(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "case").mkdir()
    path = tmp_path / "case" / "trav_name.py"
    path.write_text(JIT_RENAMED)
    out = script_with_args(path, env, f"../../../..{tmp_path}/{ESCAPE}_name")
    assert out.code == 0, out.describe()
    assert "compile REFUSED InvalidNameError" in out.stdout and "call REFUSED" in out.stdout, out.describe()
    assert "trav_name.py:9:1: error: @pl.jit function name" in out.stdout, out.describe()
    assert _escaped(tmp_path) == [], _escaped(tmp_path)
    assert not (tmp_path / "build").exists() or not any((tmp_path / "build").rglob("*"))


def test_E2_unicode_jit_name_is_refused_and_a_valid_rename_works(tmp_path: Path, env: dict[str, str]) -> None:
    path = tmp_path / "renamed.py"
    path.write_text(JIT_RENAMED.replace('for how in ("compile", "call")', 'for how in ("compile",)'))
    out = script_with_args(path, env, "kérnel")
    assert "compile REFUSED InvalidNameError" in out.stdout and "non-ASCII" in out.stdout, out.describe()
    out = script_with_args(path, {**env, "PYPTO_JIT_CACHE": "0"}, "renamed_ok")
    assert "compile ACCEPTED" in out.stdout, out.describe()
    assert [p.name.rsplit("_", 2)[0] for p in (tmp_path / "build" / "a" / "b").iterdir()] == ["_jit_renamed_ok"]


def test_E2_ir_compile_refuses_a_program_renamed_to_a_path(tmp_path: Path) -> None:
    """The driver's gate holds for programs from anywhere (IR builders, deserialized, renamed)."""
    from pypto import ir
    from pypto.flows.loader import load_module

    src = tmp_path / "prog.py"
    src.write_text(UNICODE_PROGRAM.format(cls="Prog", kernel="copy"))
    prog = load_module(src).Prog

    bad = dataclasses.replace(prog, name=f"../{ESCAPE}")
    with pytest.raises(InvalidNameError, match="program name '../ESCAPED'"):
        ir.compile(bad, output_dir=tmp_path / "o", skip_ptoas=True)
    bad_fn = dataclasses.replace(prog, functions=tuple(
        dataclasses.replace(f, name="a/b") if f.name == "copy" else f for f in prog.functions))
    with pytest.raises(InvalidNameError, match="function name 'a/b'") as info:
        ir.compile(bad_fn, skip_ptoas=True, output_dir=tmp_path / "o2")
    assert info.value.span.file == str(src) and info.value.span.line == 7
    assert not (tmp_path / "o").exists() and not (tmp_path / "o2").exists() and _escaped(tmp_path.parent) == []


@pytest.mark.parametrize(("cls", "kernel", "where", "what"), [
    ("Prögrämß", "kérnel_ü", "prog.py:5:1:", "program name 'Prögrämß'"),
    ("Prog", "kérnel_ü", "prog.py:7:5:", "function name 'kérnel_ü'"),
], ids=["class", "method"])
@pytest.mark.parametrize("command", ["compile", "run"])
def test_A9_unicode_names_are_user_errors_not_toolchain_errors(tmp_path: Path, env: dict[str, str], cls: str,
                                                               kernel: str, where: str, what: str,
                                                               command: str) -> None:
    (tmp_path / "prog.py").write_text(UNICODE_PROGRAM.format(cls=cls, kernel=kernel), encoding="utf-8")
    out = cli([command, "prog.py", "-o", str(tmp_path / "o")], env, tmp_path)
    _refused(out, 3, f"{where} error: {what}", "non-ASCII", "ASCII identifier")
    assert "ptoas" not in out.stderr and not (tmp_path / "o").exists()


def test_A9_unicode_jit_kernel_in_a_file(tmp_path: Path, env: dict[str, str]) -> None:
    source = ADD_JIT.format(hint="").replace("add", "ädd")
    (tmp_path / "k.py").write_text(source, encoding="utf-8")
    out = cli(["compile", "k.py", "-o", str(tmp_path / "o")], env, tmp_path)
    _refused(out, 3, "k.py:5:1: error: @pl.jit function name 'ädd'", "non-ASCII")


@pytest.mark.parametrize("name", ["../x", "kérnel", "a.b", "9x"])
def test_E1_cli_target_names(tmp_path: Path, env: dict[str, str], name: str) -> None:
    """``pypto compile FILE::NAME`` is a usage error (exit 2); a sweep target a user error (exit 3)."""
    (tmp_path / "add.py").write_text(ADD_JIT.format(hint=""))
    out = cli(["compile", f"add.py::{name}", "-o", str(tmp_path / "o")], env, tmp_path)
    assert out.code == 2 and f"kernel name {name!r} is not valid" in out.stderr, out.describe()
    out = cli(["sweep", f"add.py::{name}", "--store", str(tmp_path / "store"), "--workers", "1"], env, tmp_path)
    _refused(out, 3, f"sweep target 'add.py::{name}': kernel name {name!r} cannot name a kernel")
    assert not (tmp_path / "o").exists() and not (tmp_path / "store" / "out").exists()


def test_E1_run_pto_function_name_is_checked(tmp_path: Path, env: dict[str, str]) -> None:
    text = (REPO / "tests" / "runtime" / "data" / "add_128x128_f32.pto").read_text()
    name = next(line.split("@")[1].split("(")[0] for line in text.splitlines() if "func.func" in line)
    (tmp_path / "k.pto").write_text(text.replace(f"@{name}(", "@kérnel("), encoding="utf-8")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "func.func" in ln)
    args = [f"--arg={n}=128x128:f32" for n in "xyz"]
    out = cli(["run-pto", "k.pto", *args, "--save", str(tmp_path / "save")], env, tmp_path)
    _refused(out, 3, f"k.pto:{line}:", "func.func 'kérnel'", "non-ASCII")
    assert not (tmp_path / "save").exists()


@pytest.mark.parametrize(("name", "problem"), [
    ("", "empty"), ("a/b", "path separator"), ("..", "path separator"), ("a\\b", "path separator"),
    ("ü", "non-ASCII"), ("a-b", "'-'"), ("1a", "starts with a digit"), ("x" * 129, "129 characters"),
    ("new", "C++ keyword"), (None, "not a string"),
])
def test_the_rule(name: object, problem: str) -> None:
    assert problem in (symbol_problem(name) or "")
    with pytest.raises(InvalidNameError, match="cannot name a kernel"):
        check_symbol(name, "thing")


@pytest.mark.parametrize("name", ["a", "_x", "add_incore_0", "X" * 128, "main"])
def test_valid_names_pass(name: str) -> None:
    assert symbol_problem(name) is None and check_symbol(name, "thing") == name


def test_writers_refuse_paths_outside_the_artifact_dir(tmp_path: Path) -> None:
    """Defence in depth: the artifact writer refuses a relative path that resolves outside its root."""
    from pypto.backend.assemble import _Writer

    root = tmp_path / "art"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", root / "link")
    writer = _Writer(root)
    writer.write("kernels/aiv/ok.cpp", "// ok\n")
    for rel in ("../escaped.cpp", f"ptoas/../../{ESCAPE}.pto", "link/x.cpp", str(tmp_path / "abs.cpp")):
        with pytest.raises(UserError, match="outside the artifact directory"):
            writer.write(rel, "x")
    assert (root / "kernels/aiv/ok.cpp").is_file()
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["ok.cpp"]
    assert contained(root, "a/b.cpp") == root / "a/b.cpp"


def test_compiled_artifacts_name_files_after_valid_names(tmp_path: Path, env: dict[str, str]) -> None:
    """A valid name_hint still names the outlined kernel's files (the rule does not get in the way)."""
    (tmp_path / "ok.py").write_text(ADD_JIT.format(hint=", name_hint='fused_add'"))
    out = cli(["compile", "ok.py", "--skip-ptoas", "-o", str(tmp_path / "o"), "--json"], env, tmp_path)
    assert out.code == 0, out.describe()
    assert json.loads(out.stdout)["artifact"] == str(tmp_path / "o")
    assert any(p.stem.startswith("fused_add") for p in (tmp_path / "o").rglob("*.pto"))


SCOPES = '''\
import pypto.language as pl


@pl.program
class Scopes:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 64], pl.FP32], out: pl.Out[pl.Tensor[[256, 64], pl.FP32]]
             ) -> pl.Tensor[[256, 64], pl.FP32]:
        with {scope}:
            {body}
        return out
'''
SPMD_BODY = "k = pl.tile.get_block_idx()\n            out = pl.store(pl.load(a, [k * 64, 0], [64, 64]), [k * 64, 0], out)"


@pytest.mark.parametrize(("scope", "body"), [
    ("pl.spmd(4, name_hint={hint!r})", SPMD_BODY),
    ("pl.cluster(name_hint={hint!r})", "x = pl.add(out, a)"),
], ids=["spmd", "cluster"])
def test_E1_every_scope_name_hint_is_checked(scope: str, body: str) -> None:
    from pypto.language import parse

    good = parse(SCOPES.format(scope=scope.format(hint="fine_name"), body=body), "scopes.py")
    assert good.name == "Scopes"
    with pytest.raises(ParserSyntaxError, match=r"name_hint=\.\.\.\) '\.\./up' cannot name a kernel") as info:
        parse(SCOPES.format(scope=scope.format(hint="../up"), body=body), "scopes.py")
    assert (info.value.span.file, info.value.span.line) == ("scopes.py", 9)
