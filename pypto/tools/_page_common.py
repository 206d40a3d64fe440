"""The frame shared by the tools' self-contained HTML pages (swimlane, memory map, IR trace).

A page is ``frame(css, body, script)``: one document head with a common palette and header style, the
page's own CSS and body, then the JSON payload and the page's script. The script runs inside a
strict-mode closure where ``data`` (the parsed payload) and the helpers ``el``, ``sv`` and ``hue`` are
defined; the frame marks ``<body data-rendered="1">`` after it ran and ``data-js-error`` if it threw,
which is what the headless-browser tests wait for. ``__TITLE__`` and ``__PAYLOAD__`` are filled by the
caller.
"""

_HEAD = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>__TITLE__</title>
<style>
  :root { --fg: #1d232a; --muted: #6a7380; --line: #d5dae0; --bg: #ffffff; --panel: #f6f8fa; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 13px/1.4 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
  header { padding: 10px 16px; border-bottom: 1px solid var(--line); background: var(--panel); }
  header h1 { font-size: 16px; margin: 0 0 4px; }
  .muted { color: var(--muted); }
"""

_SCRIPT_START = r"""<svg id="svgns" width="0" height="0" aria-hidden="true"></svg>
<script type="application/json" id="payload">__PAYLOAD__</script>
<script>
"use strict";
window.addEventListener("error", e => document.body.setAttribute("data-js-error", String(e.message)));
(function () {
  const data = JSON.parse(document.getElementById("payload").textContent);
  const SVGNS = document.getElementById("svgns").namespaceURI;  // the SVG namespace, without spelling a URL
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function sv(tag, attrs) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  }
  function hue(name, sat, light) {
    let h = 0;
    for (const c of name) h = (h * 31 + c.charCodeAt(0)) % 360;
    return "hsl(" + h + ", " + sat + "%, " + light + "%)";
  }
"""

_SCRIPT_END = r"""  document.body.setAttribute("data-rendered", "1");
})();
</script>
</body>
</html>
"""


def frame(css: str, body: str, script: str) -> str:
    """The whole page: the shared head and palette, ``css``, ``body``, then ``script`` in the closure."""
    return _HEAD + css + "</style>\n</head>\n<body>\n" + body + _SCRIPT_START + script + _SCRIPT_END
