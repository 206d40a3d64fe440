#!/usr/bin/env bash
# Build a minimal Debian base image with debootstrap + `docker import` (for hosts without a registry).
#
# Usage: docker/make_base.sh --suite SUITE --tag TAG [--variant V] [--mirror URL] [--fallback-mirror URL]
#                           [--include PKG,PKG]
#   SUITE    Debian suite to bootstrap (the toolchain manifest's base_image.suite)
#   TAG      image reference to create (pypto's image driver derives it from the build inputs)
#   V        debootstrap variant (manifest base_image.debootstrap_variant; default minbase)
#   URL      Debian mirror; default: the first Debian URI in this host's apt sources, else the fallback
#   PKG      extra packages baked into the base (optional; the Dockerfiles install what they need)
# Env: SOURCE_DATE_EPOCH clamps file times in the imported tarball (default: 0).
# The rootfs is cleaned of logs/caches and packed with sorted names and numeric owners, so the same
# mirror state gives the same file set; the package list is recorded in /etc/pypto-base-packages.txt.
set -euo pipefail

suite="" tag="" mirror="" fallback="http://deb.debian.org/debian" include="" variant="minbase"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --suite) suite="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --mirror) mirror="$2"; shift 2 ;;
    --fallback-mirror) fallback="$2"; shift 2 ;;
    --variant) variant="$2"; shift 2 ;;
    --include) include="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "make_base.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n "$suite" && -n "$tag" ]] || { echo "make_base.sh: --suite and --tag are required (see --help)" >&2; exit 2; }
for tool in debootstrap docker tar; do
  command -v "$tool" >/dev/null || { echo "make_base.sh: '$tool' not found; apt-get install -y debootstrap docker.io" >&2; exit 3; }
done
[[ $(id -u) -eq 0 ]] || { echo "make_base.sh: debootstrap needs root; rerun with sudo" >&2; exit 3; }

host_mirror() {
  # First "URIs:" (deb822) or "deb URL" line naming a Debian archive (not debian-security).
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
    [[ -r "$f" ]] || continue
    awk '/^URIs:/ {for (i = 2; i <= NF; i++) print $i} /^deb / {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; break}}' "$f"
  done | grep -E '/debian/?$' | head -n1
}
[[ -n "$mirror" ]] || mirror="$(host_mirror)"
[[ -n "$mirror" ]] || mirror="$fallback"
epoch="${SOURCE_DATE_EPOCH:-0}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
echo "make_base.sh: debootstrap $suite from $mirror into $root" >&2
start=$(date +%s)
args=("--variant=$variant" --arch=amd64)
[[ -n "$include" ]] && args+=("--include=$include")
debootstrap "${args[@]}" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2
  echo "make_base.sh: debootstrap failed; repro: debootstrap ${args[*]} $suite /tmp/rootfs $mirror" >&2
  exit 1
}

# Non-deterministic leftovers; apt lists are dropped so images start from `apt-get update`.
root_home="$root/root"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/log/* \
       "$root"/var/cache/ldconfig/aux-cache "$root"/tmp/* "$root"/var/tmp/* "$root_home/.bash_history"
: > "$root/etc/machine-id"
printf 'deb %s %s main\n' "$mirror" "$suite" > "$root/etc/apt/sources.list"
chroot "$root" dpkg-query -W -f='${Package}=${Version}\n' | LC_ALL=C sort > "$root/etc/pypto-base-packages.txt"

tar --sort=name --numeric-owner --mtime="@$epoch" --clamp-mtime --xattrs -C "$root" -cf "$work/rootfs.tar" .
docker import \
  --change 'ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["/bin/bash"]' \
  --change "LABEL org.opencontainers.image.title=pypto-base org.opencontainers.image.base.name=debian:$suite io.pypto.base.suite=$suite" \
  "$work/rootfs.tar" "$tag" >/dev/null
echo "make_base.sh: built $tag in $(( $(date +%s) - start ))s ($(du -sh "$work/rootfs.tar" | cut -f1) tar)" >&2
