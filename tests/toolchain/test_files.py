"""pypto.toolchain.files: the few-syscall writers put the same bytes and modes on disk as Path.write_text."""

from __future__ import annotations

import json
import os
import stat

import pytest

from pypto.toolchain.files import DirMaker, indented_json, text_bytes, write_file

TEXTS = ["", "plain\n", "two\nlines\r\n", "non-ascii: é ü 中\n", "x" * 100_000]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_write_file_matches_write_text(tmp_path, text):
    want, got = tmp_path / "want.txt", tmp_path / "got.txt"
    want.write_text(text)
    write_file(got, text_bytes(text))
    assert got.read_bytes() == want.read_bytes()
    assert stat.S_IMODE(got.stat().st_mode) == stat.S_IMODE(want.stat().st_mode)


def test_write_file_truncates_an_existing_file(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"a much longer old content")
    write_file(path, b"new")
    assert path.read_bytes() == b"new"


def test_write_file_reports_a_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_file(tmp_path / "nope" / "f", b"x")


def test_dir_maker_creates_parents_once(tmp_path, monkeypatch):
    made = DirMaker()
    target = tmp_path / "a" / "b"
    made.ensure(target)
    assert target.is_dir()
    calls = []
    real = os.mkdir
    monkeypatch.setattr(os, "mkdir", lambda *a, **k: (calls.append(a), real(*a, **k)))
    made.ensure(target)
    made.ensure(str(target))
    assert calls == []


def test_temp_names_differ_across_calls_and_a_forked_child(tmp_path):
    from pypto.toolchain.cachefs import TEMP_MARK, temp_for

    final = tmp_path / "obj.so"
    names = {temp_for(final).name for _ in range(200)}
    assert len(names) == 200 and all(n.startswith(f".obj.so{TEMP_MARK}{os.getpid()}-") for n in names)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child's generator is reseeded: its next name is not the parent's next name
        os.write(write, temp_for(final).name.rsplit("-", 1)[1].encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    assert child != temp_for(final).name.rsplit("-", 1)[1]


def test_dir_maker_reports_a_file_in_the_way(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(FileExistsError):
        DirMaker().ensure(tmp_path / "f")
    DirMaker().ensure(tmp_path / "d")  # an existing directory is fine, twice
    DirMaker().ensure(tmp_path / "d")


@pytest.mark.parametrize("doc", [
    {}, [], {"a": [], "b": {}}, [1, [2, [3, {}]]], "s", 7, 2.5e-300, -0.0, float("nan"), float("inf"),
    -float("inf"), True, None,
    {"schema": 1, "params": [{"name": "a", "shape": (128, 64), "x": None, "f": False, "u": "é\n\"q"}]},
    {1: "non-str key"}, [1.0, {"k": [None, True]}],
])
def test_indented_json_is_json_dumps_indent_2(doc):
    assert indented_json(doc) == json.dumps(doc, indent=2)


def test_indented_json_rejects_what_json_rejects():
    with pytest.raises(TypeError):
        indented_json({"x": object()})
