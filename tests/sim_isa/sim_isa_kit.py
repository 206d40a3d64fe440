"""Build and run PTO kernels on the CPU simulator headers: .pto -> ptoas -> g++ .so -> ctypes.

Kernels are called through a generated ``extern "C"`` shim taking an array of pointers, an array
of scalars (as doubles) and an error buffer; a ``pto::SimError`` comes back as ``SimFailure``.
Every ptoas output and every .so is cached by content hash.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

INCLUDE_DIR = Path(__file__).resolve().parents[2] / "pypto" / "runtime" / "sim" / "include"
PTO_DIR = Path(__file__).resolve().parent / "pto"
CXX_FLAGS = ("-O2", "-std=c++17", "-shared", "-fPIC", "-w")

_SIGNATURE = re.compile(r"__global__\s+AICORE\s+void\s+(\w+)\s*\(([^)]*)\)")
_PARAM = re.compile(r"^(?:__gm__\s+)?([\w:]+)\s*(\*?)\s*\w+$")

_CTYPES_SCALAR = {
    "float": np.float32,
    "half": np.float16,
    "int32_t": np.int32,
    "int64_t": np.int64,
    "bool": np.bool_,
    "int16_t": np.int16,
    "int8_t": np.int8,
    "uint8_t": np.uint8,
}


class SimFailure(RuntimeError):
    """A kernel raised pto::SimError (or another C++ exception) inside the simulator."""


@dataclass(frozen=True, slots=True)
class Param:
    """One kernel parameter: C++ type and whether it is a GM pointer."""

    ctype: str
    pointer: bool


@dataclass(frozen=True, slots=True)
class KernelSig:
    """Name and parameters of one ``__global__ AICORE`` function."""

    name: str
    params: tuple[Param, ...]


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()[:20]


def headers_digest() -> str:
    """Hash of every simulator header, so header edits invalidate cached builds."""
    files = sorted(INCLUDE_DIR.rglob("*.hpp")) + sorted(INCLUDE_DIR.rglob("*.h"))
    return _digest(*(f.relative_to(INCLUDE_DIR).as_posix() + f.read_text() for f in files))


def parse_kernels(cpp: str) -> dict[str, KernelSig]:
    """Kernel signatures of ptoas-generated C++ (or hand-written C++ in the same form)."""
    sigs = {}
    for name, plist in _SIGNATURE.findall(cpp):
        params = []
        for raw in filter(None, (p.strip() for p in plist.split(","))):
            m = _PARAM.match(raw)
            if m is None:
                raise ValueError(f"cannot parse kernel parameter {raw!r} of {name}")
            params.append(Param(ctype=m.group(1), pointer=bool(m.group(2))))
        sigs[name] = KernelSig(name=name, params=tuple(params))
    return sigs


def shim_source(sig: KernelSig) -> str:
    """``extern "C" int pto_test_<name>(void** ptrs, const double* scalars, char* err, int n)``."""
    args, ip, isc = [], 0, 0
    for p in sig.params:
        if p.pointer:
            args.append(f"({p.ctype}*)ptrs[{ip}]")
            ip += 1
        else:
            args.append(f"({p.ctype})scalars[{isc}]")
            isc += 1
    call = f"{sig.name}({', '.join(args)});"
    return (
        f'extern "C" int pto_test_{sig.name}(void** ptrs, const double* scalars, char* err, int n) {{\n'
        f"  (void)ptrs; (void)scalars;\n"
        f"  try {{ {call} return 0; }}\n"
        f'  catch (const pto::SimError& e) {{ snprintf(err, n, "SimError: %s", e.what()); return 1; }}\n'
        f'  catch (const std::exception& e) {{ snprintf(err, n, "%s", e.what()); return 2; }}\n'
        f"}}\n"
    )


class SimKit:
    """Compile-and-run helper bound to a cache directory and a ptoas executable (or None)."""

    def __init__(self, cache: Path, ptoas: Path | None) -> None:
        self.cache = cache
        self.ptoas = ptoas
        self._hdr = headers_digest()
        self._libs: dict[Path, ctypes.CDLL] = {}

    def ptoas_cpp(self, pto: Path, insert_sync: bool = True) -> str:
        """C++ that ptoas emits for a .pto file (cached by the file's content)."""
        if self.ptoas is None:
            raise RuntimeError("ptoas is not available")
        text = pto.read_text()
        out = self.cache / f"ptoas_{_digest(text, str(insert_sync))}.cpp"
        if not out.exists():
            tmp = out.with_suffix(".tmp.cpp")
            argv = [str(self.ptoas), str(pto), "-o", str(tmp)] + (
                ["--enable-insert-sync"] if insert_sync else []
            )
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            if proc.returncode != 0 or not tmp.exists():
                tail = (proc.stdout + proc.stderr)[-2000:]
                raise RuntimeError(f"ptoas failed (rc={proc.returncode}); repro: {shlex.join(argv)}\n{tail}")
            tmp.replace(out)
        return out.read_text()

    def build(self, cpp: str, defines: tuple[str, ...] = ()) -> tuple[Path, dict[str, KernelSig]]:
        """Compile kernel C++ plus shims into a cached shared object."""
        sigs = parse_kernels(cpp)
        source = (
            cpp
            + "\n#include <cstdio>\n#include <exception>\n"
            + "".join(shim_source(s) for s in sigs.values())
        )
        key = _digest(source, self._hdr, " ".join(CXX_FLAGS + defines))
        so = self.cache / f"kernel_{key}.so"
        if not so.exists():
            src = self.cache / f"kernel_{key}.cpp"
            src.write_text(source)
            cxx = shutil.which("g++") or "g++"
            tmp = so.with_suffix(".tmp.so")
            argv = [cxx, *CXX_FLAGS, *defines, f"-I{INCLUDE_DIR}", "-o", str(tmp), str(src)]
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise RuntimeError(f"g++ failed; repro: {shlex.join(argv)}\n{proc.stderr[-4000:]}")
            tmp.replace(so)
        return so, sigs

    def kernel(self, cpp: str, name: str, defines: tuple[str, ...] = ()) -> Kernel:
        """Build (cached) and return a callable for kernel ``name``."""
        so, sigs = self.build(cpp, defines)
        if name not in sigs:
            raise KeyError(f"kernel {name!r} not in generated C++ (have {sorted(sigs)})")
        lib = self._libs.get(so)
        if lib is None:
            lib = self._libs[so] = ctypes.CDLL(str(so))
        fn = getattr(lib, f"pto_test_{name}")
        fn.restype = ctypes.c_int
        fn.argtypes = [
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_double),
            ctypes.c_char_p,
            ctypes.c_int,
        ]
        return Kernel(sig=sigs[name], fn=fn)

    def pto_kernel(self, pto_name: str, func: str | None = None, defines: tuple[str, ...] = ()) -> Kernel:
        """Kernel from ``tests/sim_isa/pto/<pto_name>.pto`` (function defaults to the file's only one)."""
        cpp = self.ptoas_cpp(PTO_DIR / f"{pto_name}.pto")
        sigs = parse_kernels(cpp)
        return self.kernel(cpp, func or next(iter(sigs)), defines)


@dataclass(frozen=True)
class Kernel:
    """A loaded kernel; call with numpy arrays for pointers and Python numbers for scalars."""

    sig: KernelSig
    fn: object

    def __call__(self, *args: object) -> None:
        if len(args) != len(self.sig.params):
            raise TypeError(f"{self.sig.name} takes {len(self.sig.params)} arguments, got {len(args)}")
        ptrs, scalars = [], []
        for p, a in zip(self.sig.params, args, strict=True):
            if p.pointer:
                if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
                    raise TypeError(f"{self.sig.name}: pointer argument must be a C-contiguous ndarray")
                ptrs.append(a.ctypes.data)
            else:
                scalars.append(float(a))
        parr = (ctypes.c_void_p * max(1, len(ptrs)))(*ptrs)
        sarr = (ctypes.c_double * max(1, len(scalars)))(*scalars)
        err = ctypes.create_string_buffer(1024)
        rc = self.fn(parr, sarr, err, len(err))
        if rc != 0:
            raise SimFailure(err.value.decode(errors="replace"))
