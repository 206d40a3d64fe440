"""Headless Chromium for the HTML tools' tests: load a page, collect console output, take a screenshot."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections import Counter
from pathlib import Path

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--enable-logging=stderr", "--v=0")


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


needs_chromium = pytest.mark.skipif(chromium() is None, reason="headless Chromium is not installed (Debian package "
                                                                "'chromium'); the HTML pages are not rendered")


def load(page: Path, screenshot: Path | None = None, size: tuple[int, int] = (1400, 900)) -> tuple[str, list[str]]:
    """(DOM after scripts ran, console lines) of ``page``; writes a PNG screenshot when asked."""
    exe = chromium()
    assert exe is not None
    with tempfile.TemporaryDirectory(prefix="pypto-chromium-") as profile:
        argv = [exe, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}"]
        url = Path(page).resolve().as_uri()
        env = {**os.environ, "HOME": profile}
        dom = subprocess.run([*argv, "--dump-dom", url], capture_output=True, text=True, timeout=120, env=env)
        console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
        if screenshot is not None:
            shot = subprocess.run([*argv, "--hide-scrollbars", f"--screenshot={screenshot}", url],
                                  capture_output=True, text=True, timeout=120, env=env)
            console += [line for line in shot.stderr.splitlines() if ":CONSOLE" in line]
            assert Path(screenshot).is_file(), shot.stderr[-2000:]
    return dom.stdout, console


def png_colors(path: Path, step: int = 4) -> Counter:
    """Counts of (r, g, b) over every ``step``-th pixel of an 8-bit RGB/RGBA PNG (no imaging library needed)."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    channels = 4
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            channels = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    prev = bytearray(stride)
    colors: Counter = Counter()
    for row in range(height):
        f = raw[row * (stride + 1)]
        line = bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if row % step == 0:
            for x in range(0, width, step):
                colors[tuple(line[x * channels:x * channels + 3])] += 1
    return colors
