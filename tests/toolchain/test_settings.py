"""Settings: every source, precedence, source tracking, validators and errors that name the source."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto.errors import SettingsError
from pypto.toolchain import settings as S
from pypto.toolchain.settings import Settings, override, resolve_settings

UPSTREAM_ENV = ("PYPTO_PROG_BUILD_DIR", "PYPTO_VERIFY_LEVEL", "PYPTO_WARNING_LEVEL", "PYPTO_LOG_LEVEL",
                "PYPTO_COMPILE_PROFILING", "PYPTO_EMIT_PTO_LOC", "PYPTO_CODEGEN_MAX_WORKERS",
                "PYPTO_EMIT_DEBUG_RUNNER", "PTOAS_ROOT")


def test_defaults() -> None:
    s = resolve_settings()
    assert (s.platform, s.runtime, s.verify_level, s.warning_level) == (
        "a2a3sim", "tensormap_and_ringbuffer", "basic", "pre_pipeline")
    assert s.emit_pto_loc and s.emit_debug_runner and not s.compile_profiling
    assert s.codegen_max_workers is None and s.ptoas_root is None
    assert s.toolchain == s.manifest.version
    assert s.backend == "Ascend910B"
    assert s.output_base == Path("build_output")
    assert s.cache_dir == Path.home() / ".cache" / "pypto"
    assert all(s.source_of(f) == "default" for f in Settings.model_fields)


def test_every_upstream_variable_has_a_field() -> None:
    names = {row["env"] for row in resolve_settings().describe()}
    assert set(UPSTREAM_ENV) <= names


def test_xdg_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert resolve_settings().cache_dir == tmp_path / "xdg" / "pypto"


@pytest.mark.parametrize(("var", "raw", "field", "value"), [
    ("PYPTO_PROG_BUILD_DIR", "out", "prog_build_dir", Path("out")),
    ("PYPTO_VERIFY_LEVEL", "ROUNDTRIP", "verify_level", "roundtrip"),
    ("PYPTO_WARNING_LEVEL", "none", "warning_level", "none"),
    ("PYPTO_LOG_LEVEL", "debug", "log_level", "debug"),
    ("PYPTO_COMPILE_PROFILING", "yes", "compile_profiling", True),
    ("PYPTO_EMIT_PTO_LOC", "off", "emit_pto_loc", False),
    ("PYPTO_CODEGEN_MAX_WORKERS", "1", "codegen_max_workers", 1),
    ("PYPTO_EMIT_DEBUG_RUNNER", "0", "emit_debug_runner", False),
    ("PTOAS_ROOT", "/opt/ptoas", "ptoas_root", "/opt/ptoas"),
    ("ASCEND_HOME_PATH", "/usr/local/Ascend", "ascend_home_path", Path("/usr/local/Ascend")),
    ("PYPTO_PLATFORM", "a5sim", "platform", "a5sim"),
    ("PYPTO_RUNTIME", "host_build_graph", "runtime", "host_build_graph"),
    ("PYPTO_TOOLCHAIN", "0.1.0", "toolchain", "0.1.0"),
    ("PYPTO_LOG_FORMAT", "JSON", "log_format", "json"),
    ("PYPTO_CACHE_DIR", "/tmp/c", "cache_dir", Path("/tmp/c")),
    ("PYPTO_CONTAINER_ENGINE", "podman", "container_engine", "podman"),
    ("PYPTO_CONTAINER_IMAGE", "img:1", "container_image", "img:1"),
])
def test_env_source(monkeypatch: pytest.MonkeyPatch, var: str, raw: str, field: str, value: object) -> None:
    monkeypatch.setenv(var, raw)
    s = resolve_settings()
    assert getattr(s, field) == value
    assert s.source_of(field) == f"env {var}"


def test_empty_env_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", "")
    s = resolve_settings()
    assert s.prog_build_dir is None and s.source_of("prog_build_dir") == "default"


def test_file_source_pypto_toml(tmp_path: Path) -> None:
    (tmp_path / "pypto.toml").write_text('platform = "a5"\nverify_level = "none"\n')
    s = resolve_settings()
    assert (s.platform, s.verify_level, s.backend) == ("a5", "none", "Ascend950")
    assert s.source_of("platform") == f"file {tmp_path / 'pypto.toml'}"
    assert s.config_file == tmp_path / "pypto.toml"


def test_file_source_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.pypto]\nruntime = "host_build_graph"\n')
    s = resolve_settings()
    assert s.runtime == "host_build_graph"
    assert s.source_of("runtime") == f"file {tmp_path / 'pyproject.toml'}"


def test_pyproject_without_table_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert resolve_settings().config_file is None


def test_explicit_config_file(tmp_path: Path) -> None:
    (tmp_path / "pypto.toml").write_text('platform = "a5"\n')
    other = tmp_path / "other.toml"
    other.write_text('platform = "a5sim"\n')
    s = resolve_settings(config_file=other)
    assert s.platform == "a5sim" and s.source_of("platform") == f"file {other}"


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="Config file '.*nope.toml' does not exist"):
        resolve_settings(config_file=tmp_path / "nope.toml")


def test_bad_toml(tmp_path: Path) -> None:
    (tmp_path / "pypto.toml").write_text("platform = \n")
    with pytest.raises(SettingsError, match="Cannot read config file"):
        resolve_settings()


def test_unknown_key_in_file(tmp_path: Path) -> None:
    (tmp_path / "pypto.toml").write_text('platfrom = "a5"\n')
    with pytest.raises(SettingsError) as info:
        resolve_settings()
    text = str(info.value)
    assert "Unknown setting 'platfrom'" in text and f"file {tmp_path / 'pypto.toml'}" in text
    assert "known settings: " in text


def test_precedence_argument_env_file_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "pypto.toml").write_text('platform = "a5"\nruntime = "host_build_graph"\nverify_level = "none"\n')
    monkeypatch.setenv("PYPTO_PLATFORM", "a5sim")
    monkeypatch.setenv("PYPTO_RUNTIME", "tensormap_and_ringbuffer")
    s = resolve_settings(platform="a2a3")
    assert (s.platform, s.source_of("platform")) == ("a2a3", "argument")
    assert (s.runtime, s.source_of("runtime")) == ("tensormap_and_ringbuffer", "env PYPTO_RUNTIME")
    assert s.verify_level == "none" and s.source_of("verify_level").startswith("file ")
    assert s.source_of("warning_level") == "default"


def test_none_argument_means_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PLATFORM", "a5sim")
    s = resolve_settings(platform=None)
    assert s.platform == "a5sim"


def test_unprefixed_ptoas_root_argument_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PTOAS_ROOT", "/ignored")
    monkeypatch.setenv("PTOAS_ROOT", "/env")
    assert resolve_settings().ptoas_root == "/env"
    s = resolve_settings(ptoas_root="/arg")
    assert (s.ptoas_root, s.source_of("ptoas_root")) == ("/arg", "argument")


@pytest.mark.parametrize(("where", "needle", "hint"), [
    ("env", "[platform from env PYPTO_PLATFORM]", "set PYPTO_PLATFORM=a2a3sim (or unset it)"),
    ("arg", "[platform from argument]", "pass platform='a2a3sim' (CLI: --platform a2a3sim)"),
    ("file", "[platform from file ", 'change `platform = "a2a3sim"` in '),
])
def test_bad_platform_names_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                   where: str, needle: str, hint: str) -> None:
    kw = {}
    if where == "env":
        monkeypatch.setenv("PYPTO_PLATFORM", "x")
    elif where == "file":
        (tmp_path / "pypto.toml").write_text('platform = "x"\n')
    else:
        kw["platform"] = "x"
    with pytest.raises(SettingsError) as info:
        resolve_settings(**kw)
    text = str(info.value)
    assert "Invalid platform 'x'. Expected 'a2a3sim', 'a2a3', 'a5sim', or 'a5'." in text
    assert needle in text and hint in text
    assert info.value.setting == "platform"


def test_bad_runtime_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_RUNTIME", "x")
    with pytest.raises(SettingsError) as info:
        resolve_settings()
    assert "Unknown runtime 'x': expected one of tensormap_and_ringbuffer, host_build_graph" in str(info.value)
    assert "env PYPTO_RUNTIME" in str(info.value)


@pytest.mark.parametrize(("field", "value", "needle"), [
    ("verify_level", "full", "Invalid value 'full' for setting 'verify_level'"),
    ("codegen_max_workers", 0, "greater than or equal to 1"),
    ("compile_profiling", "maybe", "setting 'compile_profiling'"),
    ("log_format", "xml", "setting 'log_format'"),
])
def test_bad_values(field: str, value: object, needle: str) -> None:
    with pytest.raises(SettingsError, match=needle) as info:
        resolve_settings(**{field: value})
    assert f"[{field} from argument]" in str(info.value)


def test_unknown_argument() -> None:
    with pytest.raises(SettingsError, match="Unknown setting 'platfrom'"):
        resolve_settings(platfrom="a5")


def test_toolchain_support(manifests: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_settings().toolchain == "0.2.0"
    with pytest.raises(SettingsError, match="Toolchain 0.2.0 does not support platform 'a5sim'") as info:
        resolve_settings(platform="a5sim")
    assert "[platform from argument]" in str(info.value)
    monkeypatch.setenv("PYPTO_RUNTIME", "host_build_graph")
    with pytest.raises(SettingsError, match="does not support runtime 'host_build_graph'") as info:
        resolve_settings()
    assert "env PYPTO_RUNTIME" in str(info.value)
    s = resolve_settings(toolchain="0.1.0", platform="a5sim")
    assert s.manifest.version == "0.1.0"


def test_unknown_toolchain_names_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_TOOLCHAIN", "9.9.9")
    with pytest.raises(SettingsError, match=r"Unknown toolchain '9.9.9'.*\[toolchain from env PYPTO_TOOLCHAIN\]"):
        resolve_settings()


def test_frozen() -> None:
    s = resolve_settings()
    with pytest.raises(Exception, match="frozen"):
        s.platform = "a5"  # type: ignore[misc]


def test_source_of_unknown_field() -> None:
    with pytest.raises(KeyError):
        resolve_settings().source_of("nope")


def test_override_context_manager(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PLATFORM", "a5sim")
    with override(platform="a2a3", verify_level="none") as s:
        assert (s.platform, s.source_of("platform")) == ("a2a3", "argument")
        assert resolve_settings().platform == "a2a3"
        assert resolve_settings(platform="a5").platform == "a5"
        with override(runtime="host_build_graph"):
            inner = resolve_settings()
            assert (inner.platform, inner.runtime) == ("a2a3", "host_build_graph")
    assert resolve_settings().platform == "a5sim"


def test_replace_keeps_arguments() -> None:
    s = resolve_settings(platform="a5sim")
    t = s.replace(runtime="host_build_graph")
    assert (t.platform, t.runtime, t.source_of("runtime")) == ("a5sim", "host_build_graph", "argument")
    assert s.runtime == "tensormap_and_ringbuffer"


def test_describe_rows() -> None:
    rows = {r["name"]: r for r in resolve_settings(platform="a5").describe()}
    assert rows["platform"] == {"name": "platform", "value": "a5", "source": "argument", "env": "PYPTO_PLATFORM"}
    assert rows["ptoas_root"]["env"] == "PTOAS_ROOT"


def test_subprocess_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_X_TEST", "1")
    env = S.subprocess_env({"LD_BIND_NOW": "1"}, drop=("PYPTO_X_TEST",))
    assert env["LD_BIND_NOW"] == "1" and "PYPTO_X_TEST" not in env and "PATH" in env


def test_terminal_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    t = S.terminal_env()
    assert t.no_color and not t.force_color


# -- the resolution cache: reused while nothing it read changed, resolved afresh otherwise ------------

def test_unchanged_inputs_reuse_the_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_settings(platform="a5sim") is resolve_settings(platform="a5sim")
    assert resolve_settings(platform="a5sim") is not resolve_settings(platform="a2a3sim")


def test_changed_env_resolves_afresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYPTO_PLATFORM", "a5sim")
    assert resolve_settings().platform == "a5sim"
    monkeypatch.setenv("PYPTO_PLATFORM", "a2a3sim")
    assert resolve_settings().platform == "a2a3sim"
    monkeypatch.delenv("PYPTO_PLATFORM")
    assert resolve_settings().source_of("platform") == "default"


def test_edited_config_file_resolves_afresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "pypto.toml"
    cfg.write_text('platform = "a5sim"\n')
    assert resolve_settings().platform == "a5sim"
    cfg.write_text('platform = "a2a3sim"  # edited\n')  # another size: seen even within one mtime tick
    assert resolve_settings().platform == "a2a3sim"
    cfg.unlink()
    assert resolve_settings().source_of("platform") == "default"


def test_other_working_directory_resolves_afresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "pypto.toml").write_text('platform = "a5sim"\n')
    monkeypatch.chdir(tmp_path / "a")
    assert resolve_settings().platform == "a5sim"
    monkeypatch.chdir(tmp_path / "b")
    assert resolve_settings().platform == "a2a3sim"


def test_failed_resolution_is_not_reused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYPTO_PLATFORM", "nosuch")
    for _ in range(2):
        with pytest.raises(SettingsError, match="nosuch"):
            resolve_settings()


def test_other_manifest_dir_resolves_afresh(manifests: Path, monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYPTO_TOOLCHAIN", "0.2.0")
    assert resolve_settings().manifest.version == "0.2.0"
    (manifests / "0.2.0.toml").unlink()
    with pytest.raises(SettingsError, match="0.2.0"):
        resolve_settings()


def test_resolution_inputs_follow_the_manifest_files(manifests: Path) -> None:
    from pypto.toolchain.settings_model import Settings

    before = Settings.resolution_inputs()
    assert [s.split(":")[0] for s in before] == sorted(str(p) for p in manifests.glob("*.toml"))
    (manifests / "0.2.0.toml").write_text((manifests / "0.2.0.toml").read_text() + "\n# edited\n")
    edited = Settings.resolution_inputs()
    assert edited != before and len(edited) == len(before)
    (manifests / "0.3.0.toml").write_text((manifests / "0.2.0.toml").read_text())
    assert len(Settings.resolution_inputs()) == len(before) + 1


def test_cache_max_mb_light_reader_agrees_with_the_model(monkeypatch):
    assert S.cache_max_mb() == Settings().cache_max_mb == 512
    for raw, want in (("0", 0), ("64", 64)):
        monkeypatch.setenv("PYPTO_CACHE_MAX_MB", raw)
        assert S.cache_max_mb() == Settings().cache_max_mb == want
    monkeypatch.setenv("PYPTO_CACHE_MAX_MB", "-3")
    with pytest.raises(SettingsError, match="cache_max_mb"):
        S.cache_max_mb()
