#!/usr/bin/env bash
# Compile every kernel file of a directory in a pypto toolchain image (the CI recipe of docker/README.md).
#
# Usage: docker/compile-kernels.sh IMAGE KERNEL_DIR OUT_DIR [CACHE_DIR]
#   IMAGE       image reference, e.g. the tag `python -m pypto.toolchain.images tag --flavor sim` prints
#   KERNEL_DIR  directory of .py files; each holds one @pl.program class or @pl.jit function (files
#               starting with "_" are helpers and are skipped); list FILE::NAME targets in
#               KERNEL_DIR/kernels.txt instead to pick kernels out of files holding several
#   OUT_DIR     artifacts go to OUT_DIR/<file path without .py>/, the CLI's JSON to OUT_DIR/<...>.json
#   CACHE_DIR   optional host dir mounted as PYPTO_CACHE_DIR (jit cache, ptoas shim, g++ builds);
#               keep it between CI runs
# Every compile runs sandboxed (no network, read-only root and source, your uid) and records the
# host's source paths (--file-prefix-map /src=KERNEL_DIR), so the artifacts are byte-identical to
# `pypto compile` run on the host in KERNEL_DIR. Exit status: the first failing compile's (3: a
# user error in a kernel file, 4: toolchain), after trying every kernel.
set -euo pipefail
[[ $# -ge 3 ]] || { sed -n '2,16p' "$0" >&2; exit 2; }
image="$1" src="$(realpath "$2")" out="$3" cache="${4:-}"
mkdir -p "$out"
out="$(realpath "$out")"
args=(run --rm --init --network none --read-only --tmpfs /tmp:rw,exec,nosuid,size=1g --cap-drop ALL
      --security-opt no-new-privileges --user "$(id -u):$(id -g)" -e HOME=/tmp
      --mount "type=bind,src=$src,dst=/src,readonly" --mount "type=bind,src=$out,dst=/out")
if [[ -n "$cache" ]]; then
  mkdir -p "$cache"
  args+=(--mount "type=bind,src=$(realpath "$cache"),dst=/cache" -e PYPTO_CACHE_DIR=/cache)
fi
if [[ -f "$src/kernels.txt" ]]; then
  targets="$(grep -v '^\s*\(#\|$\)' "$src/kernels.txt")"
else
  targets="$(cd "$src" && find . -name '*.py' ! -name '_*' | sed 's|^\./||' | LC_ALL=C sort)"
fi
status=0 count=0 failed=0
while IFS= read -r target; do
  [[ -n "$target" ]] || continue
  file="${target%%::*}" name="${file%.py}"
  count=$((count + 1))
  echo "compile-kernels: $target" >&2
  mkdir -p "$(dirname "$out/$name")"
  code=0
  docker "${args[@]}" "$image" compile "/src/$target" --output-dir "/out/$name" \
    --file-prefix-map "/src=$src" --json > "$out/$name.json" || code=$?
  if [[ $code -ne 0 ]]; then
    failed=$((failed + 1))
    [[ $status -ne 0 ]] || status=$code
  fi
done <<< "$targets"
echo "compile-kernels: $((count - failed))/$count kernels compiled into $out" >&2
exit "$status"
