#!/bin/sh
# Build-time smoke test of a pypto image: the CLI starts, doctor passes, ptoas runs, examples compile.
# Runs with PYPTO_CACHE_DIR=/opt/pypto/cache, so kernel/runtime builds it triggers stay in the image.
set -eu
here="$(dirname "$0")"
pypto --version
pypto doctor
ptoas="$(python -c 'import os; from pathlib import Path; from pypto.toolchain.ptoas import require_ptoas; print(require_ptoas(cache_dir=Path(os.environ["PYPTO_CACHE_DIR"])))')"
"$ptoas" --version
for example in "$here"/*.py; do
  [ -e "$example" ] || continue
  out="/tmp/smoke-out/$(basename "$example" .py)"
  pypto compile "$example" --output-dir "$out"
  pypto run "$example" --output-dir "$out-run" 2>/dev/null || pypto run "$out"
done
rm -rf /tmp/smoke-out
echo "smoke test passed"
