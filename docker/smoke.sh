#!/bin/sh
# Build-time smoke test of a pypto image: the CLI starts, doctor passes, ptoas runs, the simulation
# runtime is prebuilt for every sim platform x runtime of the toolchain (and its comm/DFX extras),
# and the bundled examples compile, run and match numpy. Runs with PYPTO_CACHE_DIR=/opt/pypto/cache,
# so what it builds stays in the image.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
pypto --version
pypto doctor
"$(pypto toolchain path ptoas)" --version
python - <<'PY'
import json
facts = json.load(open("/opt/pypto/image.json"))
if facts["torch"]:
    import torch
    local = torch.__version__
    assert local == facts["torch"], f"torch {local} installed, image.json pins {facts['torch']}"
    assert not torch.cuda.is_available() and torch.version.cuda is None, "a CUDA torch build was installed"
    print("torch", local, "(CPU)")
else:
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        print("torch: not installed (flavor", facts["flavor"] + ")")
    else:
        raise SystemExit(f"flavor {facts['flavor']} must not carry torch")
PY
python - <<'PY'
from pypto.runtime.build import runtime_extras, runtime_library
from pypto.toolchain.manifest import load_manifest
from pypto.toolchain.platforms import PLATFORMS

support = load_manifest().support
for platform in (p for p in support.platforms if PLATFORMS[p].simulated):
    for runtime in support.runtimes:
        print("prebuilt", runtime_library(platform, runtime))
print("prebuilt", runtime_extras())  # comm tasks and DFX recording, shared by every runtime library
PY
platforms="$(python -c 'from pypto.toolchain.manifest import load_manifest; from pypto.toolchain.platforms import PLATFORMS
print(" ".join(p for p in load_manifest().support.platforms if PLATFORMS[p].simulated))')"
work="$(mktemp -d)"
cd "$work"
for example in "$here"/examples/*/*.py; do
  [ -e "$example" ] || continue
  for platform in $platforms; do
    echo "smoke: $example on $platform"
    python "$example" "$platform"
  done
done
cd / && rm -rf "$work"
# the one-time builds' durations (a progress hint on a terminal) are timings of this build, not content:
# leaving them would make every image build differ
rm -f "${PYPTO_CACHE_DIR:-/opt/pypto/cache}/sim/runtime/build_seconds" \
  "${PYPTO_CACHE_DIR:-/opt/pypto/cache}/sim/runtime/extras_build_seconds"
# g++'s precompiled headers are not byte-reproducible (a .gch holds addresses of the compiler's own memory),
# so the image carries none: a container's first kernel build makes its own in a writable cache
rm -rf "${PYPTO_CACHE_DIR:-/opt/pypto/cache}"/sim/pch-*
echo "smoke test passed"
