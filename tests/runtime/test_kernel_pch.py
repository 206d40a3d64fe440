"""The kernels' precompiled header (``pypto.runtime.kernel_pch``): same objects, content-keyed, self-healing.

A kernel built with the ``.gch`` is byte-identical to one built without; the key changes with the flags
(platform), the simulator headers and the compiler; a damaged ``.gch`` is rebuilt, one g++ cannot build
is remembered and never retried, and a kernel that fails with it is rebuilt without it."""

from __future__ import annotations

from pathlib import Path

import pytest
from rt_marks import needs_gxx

from pypto.artifact.directory import KernelSpec
from pypto.backend.kernel_wrapper import HEADER
from pypto.errors import ToolchainError
from pypto.runtime import build
from pypto.runtime import kernel_pch as pch

BODY = """using namespace pto;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  volatile int32_t idx = get_block_idx(args);
  (void)idx;
}
"""


def _source(folder: Path, name: str = "k", prelude: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / f"{name}.cpp"
    head = HEADER.format(name=name) if prelude is None else prelude
    src.write_text(head.split("using namespace pto;")[0] + BODY)
    return src


@pytest.fixture
def cache(tmp_path: Path):
    pch.forget()
    with build.use_cache_dir(tmp_path / "sim") as root:
        yield root
    pch.forget()


def test_the_prelude_is_the_generated_kernels_own():
    assert HEADER.split("\n", 2)[2].split("using namespace pto;")[0] == pch.PRELUDE


def test_only_a_source_that_builds_the_same_with_it_is_eligible(tmp_path: Path):
    src = _source(tmp_path / "a")
    assert pch.eligible(src.read_bytes(), src)
    assert not pch.eligible(src.read_bytes(), src, (tmp_path / "inc",))  # extra -I dirs: another <cmath> could win
    shadow = _source(tmp_path / "b")
    (shadow.parent / "tensor.h").write_text("// its own\n")  # "tensor.h" is found next to the source first
    assert not pch.eligible(shadow.read_bytes(), shadow)
    other = _source(tmp_path / "c", prelude="#define PTO_SIM_UB_BYTES 1024\n" + pch.PRELUDE)
    assert not pch.eligible(other.read_bytes(), other)  # a macro set before the ISA headers


@needs_gxx
def test_a_kernel_built_with_it_is_the_same_object(cache: Path, tmp_path: Path):
    hpp = build.kernel_pch("a2a3sim")
    assert hpp is not None and pch.gch_of(hpp).stat().st_size > 1_000_000
    for core in ("aiv", "aic"):  # one .gch serves both core types
        src = _source(tmp_path / core, f"k_{core}")
        argv = build.kernel_argv(src, "a2a3sim", core)
        with_pch = build.compile_so([*argv[:-1], "-include", str(hpp), "-Winvalid-pch", src.name],
                                    tmp_path / f"{core}-pch.so", "with", src.parent)
        without = build.compile_so([*argv[:-1], src.name], tmp_path / f"{core}-plain.so", "without", src.parent)
        assert with_pch.read_bytes() == without.read_bytes()
    built = build.build_kernel(KernelSpec(0, "k_aiv", tmp_path / "aiv" / "k_aiv.cpp", "aiv", ()), "a2a3sim",
                               sidecars=False)
    assert built.read_bytes() == (tmp_path / "aiv-plain.so").read_bytes()


def test_the_key_follows_flags_headers_and_compiler(cache: Path, monkeypatch: pytest.MonkeyPatch):
    seen: list[Path] = []
    monkeypatch.setattr(pch, "header", lambda hpp, make, prebuilt=None: seen.append(hpp) or hpp)
    monkeypatch.setattr(build, "compiler_id", lambda: "g++ (test) 1")
    build.kernel_pch("a2a3sim")
    build.kernel_pch("a5sim")  # -DPTO_SIM_ARCH_A5
    monkeypatch.setattr(build, "header_hash", lambda: "other headers")
    build.kernel_pch("a2a3sim")
    monkeypatch.setattr(build, "compiler_id", lambda: "g++ (test) 2")
    build.kernel_pch("a2a3sim")
    assert len({p.name for p in seen}) == 4
    assert [p.parent.name for p in seen] == ["pch-a2a3sim", "pch-a5sim", "pch-a2a3sim", "pch-a2a3sim"]


def _fake_gch(gch: Path) -> Path:
    """A stand-in for g++ -x c++-header (published like a real build: atomically, with its digest)."""
    from pypto.toolchain import cachefs

    tmp = cachefs.temp_for(gch)
    tmp.write_bytes(b"gch" * 100)
    return cachefs.publish(tmp, gch)


def test_a_damaged_gch_is_rebuilt_and_a_verified_one_reused(tmp_path: Path):
    pch.forget()
    hpp, builds = tmp_path / "pch" / "prelude-k.hpp", []

    def make(gch: Path) -> None:
        builds.append(gch)
        _fake_gch(gch)

    assert pch.header(hpp, make) == hpp and len(builds) == 1 and hpp.read_text() == pch.PRELUDE
    pch.forget()
    assert pch.header(hpp, make) == hpp and len(builds) == 1  # verified: reused, not rebuilt
    gch = pch.gch_of(hpp)
    gch.write_bytes(b"GCH" * 100)  # same size, other bytes
    pch.forget()
    assert pch.header(hpp, make) == hpp and len(builds) == 2  # its digest no longer matches: rebuilt
    hpp.write_text("#define X 1\n" + pch.PRELUDE)  # the header beside it edited
    pch.forget()
    assert pch.header(hpp, make) == hpp and len(builds) == 3 and hpp.read_text() == pch.PRELUDE
    pch.forget()


def test_a_gch_gxx_cannot_build_is_tried_once(tmp_path: Path):
    pch.forget()
    hpp, tries = tmp_path / "pch" / "prelude-k.hpp", []

    def broken(gch: Path) -> None:
        tries.append(gch)
        raise ToolchainError("compilation failed: g++ could not build the kernel precompiled header")

    assert pch.header(hpp, broken) is None
    pch.forget()
    assert pch.header(hpp, broken) is None and len(tries) == 1  # remembered (.failed) for this key
    pch.forget()


@needs_gxx
def test_a_kernel_failing_with_it_is_built_without_it(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    hpp = tmp_path / "bogus" / "prelude-x.hpp"
    hpp.parent.mkdir()
    hpp.write_text("#error not this header\n")  # a header g++ fails on, standing in for a bad .gch
    _fake_gch(pch.gch_of(hpp))
    monkeypatch.setattr(build, "kernel_pch", lambda platform: hpp)
    src = _source(tmp_path / "k")
    built = build.build_kernel(KernelSpec(0, "k", src, "aiv", ()), "a2a3sim", sidecars=False)
    argv = build.kernel_argv(src, "a2a3sim", "aiv")
    plain = build.compile_so([*argv[:-1], src.name], tmp_path / "plain.so", "plain", src.parent)
    assert built.read_bytes() == plain.read_bytes()
    assert not pch.gch_of(hpp).exists() and hpp.with_name(hpp.name + pch.FAILED_SUFFIX).exists()


def test_a_compile_on_a_used_cache_builds_no_header_in_the_background(cache: Path, monkeypatch: pytest.MonkeyPatch):
    """Before a compile the header is only looked for where kernels were built already (a compile whose kernels
    are all cached must start no g++); on a fresh cache it is built while the program compiles."""
    built: list[str] = []
    monkeypatch.setattr(build, "_submit_background", lambda fn, *args: fn(*args))
    monkeypatch.setattr(build, "compile_so", lambda argv, out, what, cwd=None: built.append(what) or _fake_gch(out))
    monkeypatch.setattr(build, "compiler_id", lambda: "g++ (test)")
    (cache / "kernels-a2a3sim").mkdir(parents=True)
    (cache / "kernels-a2a3sim" / "k-0123.so").write_bytes(b"\0")
    build.prebuild_pch("a2a3sim")
    assert built == [] and not list((cache / "pch-a2a3sim").glob("*.gch"))
    assert build.kernel_pch("a2a3sim") is not None and len(built) == 1  # the first kernel build that wants it
    build.prebuild_pch("a5sim")  # no a5sim kernel yet: a fresh cache for that platform
    assert len(built) == 2 and list((cache / "pch-a5sim").glob("*.gch"))
