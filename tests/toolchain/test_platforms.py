"""Platform <-> backend <-> runtime agreement rules, accepted and rejected pairs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pypto.errors import SettingsError
from pypto.toolchain import platforms as P

BAD_PLATFORM = "Invalid platform 'x'. Expected 'a2a3sim', 'a2a3', 'a5sim', or 'a5'."
BAD_RUNTIME = "Unknown runtime 'x': expected one of tensormap_and_ringbuffer, host_build_graph"


@pytest.mark.parametrize(("platform", "backend"), [
    ("a2a3sim", "Ascend910B"), ("a2a3", "Ascend910B"), ("a5sim", "Ascend950"), ("a5", "Ascend950")])
def test_platform_backend(platform: str, backend: str) -> None:
    assert P.backend_for(platform) == backend
    P.check_backend_agrees(platform, backend)


@pytest.mark.parametrize(("platform", "backend"), [("a2a3sim", "Ascend950"), ("a5", "Ascend910B")])
def test_platform_backend_mismatch(platform: str, backend: str) -> None:
    with pytest.raises(SettingsError, match=f"Platform '{platform}' needs backend"):
        P.check_backend_agrees(platform, backend)


def test_sim_flags_and_compilers() -> None:
    assert [p for p, i in P.PLATFORMS.items() if i.simulated] == ["a2a3sim", "a5sim"]
    assert P.PLATFORMS["a5"].kernel_compiler == "ccec"
    assert P.PLATFORMS["a2a3sim"].arch == "a2a3"


def test_invalid_platform_exact_text_and_source() -> None:
    with pytest.raises(SettingsError) as info:
        P.platform_info("x", "env PYPTO_PLATFORM")
    assert BAD_PLATFORM in str(info.value)
    assert "env PYPTO_PLATFORM" in str(info.value)
    assert "set PYPTO_PLATFORM=a2a3sim" in str(info.value)
    assert info.value.setting == "platform"


def test_runtime_names() -> None:
    for name in P.RUNTIMES:
        assert P.check_runtime(name) == name
    with pytest.raises(SettingsError) as info:
        P.check_runtime("x")
    assert BAD_RUNTIME in str(info.value)


def test_default_sim_platform() -> None:
    assert P.default_sim_platform("Ascend910B") == "a2a3sim"
    assert P.default_sim_platform("Ascend950") == "a5sim"
    with pytest.raises(SettingsError, match="Unknown backend 'Ascend310'"):
        P.default_sim_platform("Ascend310")


def test_supported_by_toolchain() -> None:
    P.check_supported("0.1.0", ["a2a3sim"], "platform", "a2a3sim", "default")
    with pytest.raises(SettingsError, match="Toolchain 0.2.0 does not support platform 'a5'") as info:
        P.check_supported("0.2.0", ["a2a3sim"], "platform", "a5", "file /x/pypto.toml")
    assert "change `platform = \"a2a3sim\"` in /x/pypto.toml" in str(info.value)


def test_graph_needs_host_build_graph() -> None:
    P.check_graph_runtime("g", "host_build_graph")
    with pytest.raises(SettingsError, match="Graph function 'g' requires runtime 'host_build_graph'"):
        P.check_graph_runtime("g", "tensormap_and_ringbuffer")


def _meta(**kw: object) -> dict[str, object]:
    return {"schema": 1, "platform": "a2a3sim", "backend_type": "Ascend910B",
            "runtime": "tensormap_and_ringbuffer", "toolchain": "0.1.0", **kw}


def test_artifact_accepted() -> None:
    P.check_artifact_agreement(_meta(), "a2a3sim", "tensormap_and_ringbuffer", "0.1.0")
    obj = SimpleNamespace(platform="a5sim", backend_type="Ascend950", runtime_name="host_build_graph",
                          toolchain=None)
    P.check_artifact_agreement(obj, "a5sim", "host_build_graph", SimpleNamespace(version="0.1.0"))


def test_artifact_without_runtime_or_toolchain_uses_defaults() -> None:
    upstream = {"schema": 1, "platform": "a2a3sim", "backend_type": "Ascend910B"}
    P.check_artifact_agreement(upstream, "a2a3sim", "tensormap_and_ringbuffer", "0.1.0")
    with pytest.raises(SettingsError, match="requires runtime='tensormap_and_ringbuffer'"):
        P.check_artifact_agreement(upstream, "a2a3sim", "host_build_graph", "0.1.0")


@pytest.mark.parametrize(("meta", "worker", "needle"), [
    (_meta(platform="a5sim", backend_type="Ascend950"), ("a2a3sim", "tensormap_and_ringbuffer", "0.1.0"),
     "CompiledProgram.platform='a5sim' does not match ChipWorker.platform='a2a3sim'"),
    (_meta(runtime="host_build_graph"), ("a2a3sim", "tensormap_and_ringbuffer", "0.1.0"),
     "CompiledProgram requires runtime='host_build_graph' but ChipWorker was constructed with "
     "runtime='tensormap_and_ringbuffer'"),
    (_meta(toolchain="0.0.9"), ("a2a3sim", "tensormap_and_ringbuffer", "0.1.0"),
     "built with toolchain 0.0.9 but this worker uses toolchain 0.1.0"),
    (_meta(backend_type="Ascend950"), ("a2a3sim", "tensormap_and_ringbuffer", "0.1.0"),
     "Platform 'a2a3sim' needs backend Ascend910B"),
    (_meta(platform="x"), ("a2a3sim", "tensormap_and_ringbuffer", "0.1.0"), BAD_PLATFORM),
    (_meta(runtime="x"), ("a2a3sim", "tensormap_and_ringbuffer", "0.1.0"), BAD_RUNTIME),
])
def test_artifact_rejected(meta: dict[str, object], worker: tuple[str, str, str], needle: str) -> None:
    with pytest.raises(SettingsError) as info:
        P.check_artifact_agreement(meta, *worker)
    assert needle in str(info.value)
    assert "artifact" in str(info.value)
    assert "recompile" in str(info.value)


def test_fix_hints_per_source() -> None:
    assert P.fix_hint("platform", "argument", "a5sim") == "pass platform='a5sim' (CLI: --platform a5sim)"
    assert P.fix_hint("runtime", "env PYPTO_RUNTIME", "x") == "set PYPTO_RUNTIME=x (or unset it)"
    assert P.fix_hint("ptoas_root", "default", "/p") == "set PTOAS_ROOT=/p"
    assert "in /a/pypto.toml" in P.fix_hint("platform", "file /a/pypto.toml", "a5")
