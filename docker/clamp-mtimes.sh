#!/bin/sh
# Reproducible layers: give every file and directory changed since START the mtime EPOCH.
# Usage (at the end of a Dockerfile RUN): pypto-clamp-mtimes START EPOCH
#   START  seconds since the epoch, taken (minus 2 s) when the RUN began: older files (from the
#          base image or from package archives, which carry their own fixed times) are left alone
#   EPOCH  the time to record (SOURCE_DATE_EPOCH)
# The legacy builder records wall-clock mtimes in layer tarballs; without this the same contents
# give a different layer digest on every --no-cache build.
set -eu
start="$1" epoch="$2"
find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /etc/hostname -o -path /etc/hosts \
     -o -path /etc/resolv.conf \) -prune -o -newermt "@${start}" -print0 | xargs -0r touch -h -d "@${epoch}"
