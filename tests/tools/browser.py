"""Headless Chromium for the HTML tools' tests: load a page, collect console output, take a screenshot.

``DevTools`` drives a page through the DevTools protocol over a pipe (no websocket library needed) for
pages whose scripts must run before they are read, such as the documentation site's search.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

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


class DevTools:
    """One headless Chromium driven over ``--remote-debugging-pipe`` (requests on fd 3, replies on fd 4).

    ``with DevTools() as dt: dt.open(url); dt.wait_for(js)`` opens a tab and polls a JavaScript expression
    until it returns a truthy value.
    """

    def __init__(self, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._ids = 0
        self._buf = b""
        self._session: str | None = None

    def __enter__(self) -> DevTools:
        exe = chromium()
        assert exe is not None
        self._profile = tempfile.TemporaryDirectory(prefix="pypto-chromium-")
        to_child, self._send = os.pipe()
        self._recv, from_child = os.pipe()

        def fds() -> None:  # in the child: the pipe ends become fds 3 and 4, inheritable across exec
            a, b = os.dup(to_child), os.dup(from_child)
            os.dup2(a, 3)
            os.dup2(b, 4)

        argv = [exe, *FLAGS, f"--user-data-dir={self._profile.name}", "--remote-debugging-pipe", "about:blank"]
        self._proc = subprocess.Popen(argv, preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      env={**os.environ, "HOME": self._profile.name})
        os.close(to_child)
        os.close(from_child)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.call("Browser.close")
        except (OSError, RuntimeError):
            pass
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._send)
        os.close(self._recv)
        self._profile.cleanup()

    def call(self, method: str, params: dict[str, Any] | None = None, session: bool = False) -> dict[str, Any]:
        """Send one request and return its result (events that arrive meanwhile are dropped)."""
        self._ids += 1
        msg: dict[str, Any] = {"id": self._ids, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self._session
        os.write(self._send, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self._buf:
                chunk = os.read(self._recv, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"chromium closed the DevTools pipe during {method}")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._ids:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self, url: str) -> None:
        """Open ``url`` in a new tab; later evaluations run in it."""
        target = self.call("Target.createTarget", {"url": url})["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, poll: float = 0.2) -> Any:
        """Poll ``expression`` until it is truthy; its value. Times out with the last value seen."""
        deadline = time.monotonic() + self.timeout
        value = None
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(poll)
        raise AssertionError(f"timed out after {self.timeout} s waiting for {expression!r} (last: {value!r})")


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
