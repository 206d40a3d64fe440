"""The light readers of ``pypto.toolchain.settings`` and ``resolve_settings()`` are one resolution.

Every reader returns what the model holds, for a value from the default, the environment, the config
file and an argument, and a bad value raises the same SettingsError (text and hint) from both. The
model itself declares nothing: its fields, defaults and help come from ``settings_fields.FIELDS``.
"""

from __future__ import annotations

import subprocess
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pypto.errors import SettingsError
from pypto.toolchain import settings as S
from pypto.toolchain.settings import Settings, override, resolve_settings
from pypto.toolchain.settings_fields import FIELDS, OUTPUT_BASE, RUN_MEMORY_FRACTION, parse

# reader, the Settings value it stands for, a valid raw value (env/file) and a bad one
Reader = Callable[[], Any]
LIGHT: dict[str, tuple[Reader, Callable[[Settings], Any], str, str]] = {
    "cache_dir": (S.cache_dir, lambda s: s.cache_dir, "rel/cache", "[1]"),
    "ptoas_root": (S.ptoas_root, lambda s: s.ptoas_root, "~/ptoas", "[1]"),
    "prog_build_dir": (S.output_base, lambda s: s.output_base, "~/out", "[1]"),
    "jit_cache": (S.jit_cache_enabled, lambda s: s.jit_cache, "off", "maybe"),
    "cache_max_mb": (S.cache_max_mb, lambda s: s.cache_max_mb, "64", "-3"),
    "run_hw_on_sim": (S.run_hw_on_sim, lambda s: s.run_hw_on_sim, "Yes", "2"),
    "ptoas_timeout_s": (lambda: S.tool_timeout("ptoas_timeout_s"), lambda s: s.ptoas_timeout_s, "12.5", "0"),
    "build_timeout_s": (lambda: S.tool_timeout("build_timeout_s"), lambda s: s.build_timeout_s, " 60 ", "inf"),
    "docker_timeout_s": (lambda: S.tool_timeout("docker_timeout_s"), lambda s: s.docker_timeout_s, "7", "soon"),
    "run_max_bytes": (S.run_max_bytes, lambda s: s.run_max_bytes or int(S.physical_memory_bytes()
                                                                        * RUN_MEMORY_FRACTION), "4096", "0"),
    "run_platform": (S.run_platform, lambda s: s.run_platform, "a5sim", "a6sim"),
}
_TOML_TEXT = {"jit_cache": "false", "run_hw_on_sim": "true", "cache_max_mb": "64", "run_max_bytes": "4096",
              "ptoas_timeout_s": "12.5", "build_timeout_s": "60", "docker_timeout_s": "7"}


def _set(where: str, field: str, raw: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    """Give ``field`` the value ``raw`` in ``where``; the arguments to resolve with."""
    if where == "env":
        monkeypatch.setenv(S.env_var(field), raw)
    elif where == "file":
        value = _TOML_TEXT.get(field, f'"{raw}"')
        (tmp_path / "pypto.toml").write_text(f"{field} = {value}\n")
    elif where == "argument":
        return {field: parse(field, raw)}
    return {}


@pytest.mark.parametrize("where", ["default", "env", "file", "argument"])
@pytest.mark.parametrize("field", sorted(LIGHT))
def test_every_light_reader_returns_the_models_value(field: str, where: str, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    reader, of_model, raw, _ = LIGHT[field]
    args = _set(where, field, raw, monkeypatch, tmp_path) if where != "default" else {}
    with override(**args) as settings:
        assert reader() == of_model(settings) == of_model(resolve_settings())
        assert settings.source_of(field) == {"default": "default", "env": f"env {S.env_var(field)}",
                                             "file": f"file {tmp_path / 'pypto.toml'}",
                                             "argument": "argument"}[where]


@pytest.mark.parametrize("where", ["env", "file", "argument"])
@pytest.mark.parametrize("field", sorted(LIGHT))
def test_a_bad_value_is_the_same_error_from_both(field: str, where: str, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    reader, _, _, bad = LIGHT[field]
    if where == "argument":
        bad_value: Any = [1] if bad == "[1]" else bad
        ctx = override(**{field: bad_value})
        with pytest.raises(SettingsError) as model, ctx:
            pass
        token = S._sources.OVERRIDES.set({field: bad_value})  # as override() would, without resolving
        try:
            with pytest.raises(SettingsError) as light:
                reader()
        finally:
            S._sources.OVERRIDES.reset(token)
    else:
        if where == "file" and bad == "[1]":
            (tmp_path / "pypto.toml").write_text(f"{field} = [1]\n")
        elif where == "file":
            (tmp_path / "pypto.toml").write_text(f'{field} = "{bad}"\n')
        elif bad == "[1]":
            pytest.skip("an environment value is always a string")
        else:
            monkeypatch.setenv(S.env_var(field), bad)
        with pytest.raises(SettingsError) as model:
            resolve_settings()
        with pytest.raises(SettingsError) as light:
            reader()
    assert str(light.value) == str(model.value) and light.value.hint == model.value.hint
    assert f"[{field} from " in str(light.value) and light.value.setting == field


def test_the_light_readers_import_no_pydantic(tmp_path: Path) -> None:
    """Resolving (and rejecting) a value on the run path loads neither pydantic nor the model."""
    code = ("import os, sys\nfrom pypto.errors import SettingsError\nimport pypto.toolchain.settings as s\n"
            "s.cache_dir(); s.jit_cache_enabled(); s.cache_max_mb(); s.tool_timeout('ptoas_timeout_s')\n"
            "s.run_max_bytes(); s.run_platform(); s.output_base(); s.ptoas_root(); s.run_hw_on_sim()\n"
            "s.compile_fingerprint()\nos.environ['PYPTO_JIT_CACHE'] = 'maybe'\n"
            "try:\n    s.jit_cache_enabled()\nexcept SettingsError:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'pypto.toolchain.settings_model'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_an_unknown_tool_deadline_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="not a tool deadline"):
        S.tool_timeout("ptoas_timeout")


def test_output_base_defaults_to_build_output() -> None:
    assert S.output_base() == OUTPUT_BASE == resolve_settings().output_base == Path("build_output")


def _python_type(field: str) -> Any:
    spec = FIELDS[field]
    base: Any = {"bool": bool, "int": int, "float": float, "str": str, "path": Path}.get(spec.kind)
    if spec.kind == "choice":
        base = typing.Literal[spec.choices]
    return base | None if spec.optional else base


def test_the_model_is_built_from_the_field_table() -> None:
    """One declaration per setting: the model's fields, order, defaults and help are FIELDS'."""
    assert list(Settings.model_fields) == list(FIELDS)
    for name, info in Settings.model_fields.items():
        spec = FIELDS[name]
        assert info.description == spec.help, name
        assert (info.default_factory is not None) == (spec.factory is not None), name
        if spec.factory is None:
            assert info.default == spec.default, name
        annotation, want = info.annotation, _python_type(name)
        if isinstance(annotation, types.UnionType) or isinstance(want, types.UnionType):
            assert set(typing.get_args(annotation)) == set(typing.get_args(want)), name
        else:
            assert annotation == want, name


@pytest.mark.parametrize(("field", "raw", "value"), [
    ("jit_cache", " ON ", True), ("jit_cache", 0, False), ("cache_max_mb", 5.0, 5), ("cache_max_mb", " 7 ", 7),
    ("ptoas_timeout_s", 3, 3.0), ("verify_level", " RoundTrip", "roundtrip"), ("run_max_bytes", None, None),
    ("prog_build_dir", "out", Path("out")), ("ptoas_root", "", None),
])
def test_parse(field: str, raw: object, value: object) -> None:
    assert parse(field, raw) == value and type(parse(field, raw)) is type(value)


@pytest.mark.parametrize(("field", "raw", "reason"), [
    ("jit_cache", "maybe", "Input should be a valid boolean, unable to interpret input"),
    ("cache_max_mb", True, "Input should be a valid integer"),
    ("cache_max_mb", "1.5", "Input should be a valid integer, unable to parse string as an integer"),
    ("cache_max_mb", -1, "Input should be greater than or equal to 0"),
    ("ptoas_timeout_s", "nan", "Input should be a finite number"),
    ("ptoas_timeout_s", "x", "Input should be a valid number, unable to parse string as a number"),
    ("ptoas_timeout_s", [1], "Input should be a valid number"),
    ("ptoas_timeout_s", 0, "Input should be greater than 0"),
    ("toolchain", 0.1, "Input should be a valid string"),
    ("cache_dir", 3, "Input should be a valid path"),
    ("log_format", "xml", "Input should be 'auto', 'console' or 'json'"),
])
def test_parse_rejects(field: str, raw: object, reason: str) -> None:
    with pytest.raises(ValueError) as info:
        parse(field, raw)
    assert str(info.value) == f"Invalid value {raw!r} for setting '{field}': {reason}"
