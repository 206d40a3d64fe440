"""Source path prefix maps (gcc -ffile-prefix-map semantics) and their setting."""

from __future__ import annotations

import pytest

from pypto.errors import SettingsError
from pypto.toolchain.prefix_map import apply_prefix_map, format_prefix_map, parse_prefix_map
from pypto.toolchain.settings import resolve_settings


@pytest.mark.parametrize(("path", "expected"), [
    ("/src/k.py", "/home/me/k.py"),
    ("/src", "/home/me"),
    ("/srcx/k.py", "/srcx/k.py"),          # whole components only
    ("/src/sub/k.py", "/mapped/k.py"),     # the longest OLD wins, whatever the order
    ("/other/k.py", "/other/k.py"),
])
def test_apply(path: str, expected: str) -> None:
    pairs = parse_prefix_map("/src=/home/me;/src/sub=/mapped")
    assert apply_prefix_map(path, pairs) == expected


def test_root_and_empty_targets() -> None:
    assert apply_prefix_map("/a/b.py", parse_prefix_map("/=/r")) == "/r/a/b.py"
    assert apply_prefix_map("/src/k.py", parse_prefix_map("/src=")) == "k.py"
    assert apply_prefix_map("/src/k.py", parse_prefix_map("/src/=.")) == "./k.py"


def test_round_trip_and_errors() -> None:
    pairs = parse_prefix_map(["/a=/b", "/c=/d"])
    assert parse_prefix_map(format_prefix_map(pairs)) == pairs == (("/a", "/b"), ("/c", "/d"))
    assert parse_prefix_map(None) == () and parse_prefix_map("") == ()
    for bad in ("/a", "=/b"):
        with pytest.raises(ValueError, match="OLD=NEW"):
            parse_prefix_map(bad)


def test_setting_validates_and_normalizes(isolated_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_FILE_PREFIX_MAP", "/src/=/home/me/ ; /x=/y")
    assert resolve_settings().file_prefix_map == "/src=/home/me;/x=/y"
    monkeypatch.setenv("PYPTO_FILE_PREFIX_MAP", "nonsense")
    with pytest.raises(SettingsError, match="PYPTO_FILE_PREFIX_MAP"):
        resolve_settings()
