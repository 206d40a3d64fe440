"""The self-contained HTML/JS page of ``pypto.tools.memory_map`` (``__PAYLOAD__`` is the JSON data)."""

from pypto.tools._page_common import frame

_CSS = r"""  :root { --warn: #c62828; }
  .meta { color: var(--muted); }
  .caveat { color: #8a5a00; margin-top: 4px; }
  .controls { display: flex; gap: 16px; align-items: center; padding: 8px 16px; border-bottom: 1px solid var(--line);
              flex-wrap: wrap; }
  .controls label { cursor: pointer; }
  section.fn { padding: 10px 16px 20px; border-bottom: 1px solid var(--line); }
  section.fn h2 { font-size: 14px; margin: 0 0 6px; }
  .row { display: flex; gap: 16px; align-items: flex-start; }
  .maps { flex: 0 1 auto; overflow-x: auto; max-width: 62vw; }
  .space { margin-bottom: 12px; }
  .space .title { font-weight: 600; margin: 4px 0; }
  .space .title span { font-weight: 400; color: var(--muted); }
  svg text { font: 10px system-ui, sans-serif; fill: var(--muted); }
  rect.box { stroke: #24323f; stroke-width: 0.6; cursor: pointer; }
  rect.box.view { fill-opacity: 0.45; stroke-dasharray: 3 2; }
  rect.box.conflict { stroke: var(--warn); stroke-width: 2; }
  rect.box.pinned { stroke: #000; stroke-width: 2.5; }
  .src { flex: 1 1 40%; min-width: 320px; max-height: 70vh; overflow: auto; background: var(--panel);
         border: 1px solid var(--line); }
  .src pre { margin: 0; padding: 6px 0; font: 11px/16px ui-monospace, monospace; }
  .src .ln { display: block; white-space: pre; padding: 0 8px; }
  .src .ln.hit { background: #fff3c4; }
  .src .no { color: var(--muted); display: inline-block; width: 3.5em; }
  .details { margin-top: 6px; font: 12px ui-monospace, monospace; white-space: pre-wrap; color: var(--fg); }
  .legend span { display: inline-block; margin-right: 12px; }
  .empty { color: var(--muted); font-style: italic; }
"""

_BODY = r"""<header>
  <h1 id="title"></h1>
  <div class="meta" id="meta"></div>
  <div class="caveat" id="caveat"></div>
</header>
<div class="controls">
  <span id="toggles"></span>
  <label>zoom <input id="zoom" type="range" min="0.25" max="16" step="0.25" value="1"> <span id="zoomv"></span></label>
  <span class="legend"><span>&#9632; tile</span><span>dashed: view of a larger buffer</span>
    <span style="color:#c62828">red: overlaps another live buffer</span></span>
</div>
<main id="main"></main>
"""

_SCRIPT = r"""  const LINE_PX = 16;
  const hidden = new Set();
  let pxPerKiB = 1;
  let pinned = null;

  function kib(n) { return n >= 1024 ? (n / 1024).toFixed(n % 1024 ? 1 : 0) + " KiB" : n + " B"; }

  document.getElementById("title").textContent = "Memory map - " + data.dump;
  const b = data.backend;
  document.getElementById("meta").textContent = "pass " + data.pass_name + " | backend " + b.name + " (" + b.arch +
    (b.detected ? ", detected" : ", assumed") + ") | " + data.functions.length + " kernel function(s)";
  document.getElementById("caveat").textContent = "Note: " + data.caveat;

  const spaces = [];
  for (const f of data.functions) for (const s of f.spaces) if (!spaces.includes(s.space)) spaces.push(s.space);
  const toggles = document.getElementById("toggles");
  for (const s of spaces) {
    const lab = el("label");
    const cb = el("input", {type: "checkbox", "data-space": s});
    cb.checked = true;
    cb.addEventListener("change", () => { if (cb.checked) hidden.delete(s); else hidden.add(s); draw(); });
    lab.appendChild(cb);
    lab.appendChild(document.createTextNode(" " + s + " "));
    toggles.appendChild(lab);
  }
  const zoom = document.getElementById("zoom");
  let widest = 0;  // default zoom: the largest used space's limit spans about 520 px
  for (const f of data.functions) for (const s of f.spaces) if (s.tiles) widest = Math.max(widest, s.limit, s.hwm);
  if (widest > 0) pxPerKiB = Math.min(16, Math.max(0.25, Math.floor(4 * 520 / (widest / 1024)) / 4));
  zoom.value = String(pxPerKiB);
  zoom.addEventListener("input", () => { pxPerKiB = Number(zoom.value); draw(); });

  function drawSpace(f, s, pane) {
    const boxes = f.boxes.filter(x => x.space === s.space);
    const extent = Math.max(s.limit, s.hwm, 1024);
    const width = Math.max(120, extent / 1024 * pxPerKiB);
    const lines = f.src_end - f.src_start + 1;
    const height = lines * LINE_PX + 24;
    const wrap = el("div", {class: "space", "data-space": s.space});
    const title = el("div", {class: "title"}, s.space + " ");
    title.appendChild(el("span", {}, "used " + kib(s.hwm) + " of " + (s.limit ? kib(s.limit) : "unknown limit") +
      " | " + s.tiles + " buffer(s), " + s.bases + " base(s)"));
    wrap.appendChild(title);
    const svg = sv("svg", {width: width + 40, height: height, role: "img"});
    const x = bytes => 10 + bytes / 1024 * pxPerKiB;
    const y = line => 20 + (line - f.src_start) * LINE_PX;
    svg.appendChild(sv("rect", {x: 10, y: 20, width: width, height: lines * LINE_PX, fill: "#fafbfc",
                                stroke: "#d5dae0"}));
    const step = Math.max(1, Math.ceil(64 / pxPerKiB / 16) * 16);
    for (let k = 0; k * 1024 <= extent; k += step) {
      svg.appendChild(sv("line", {x1: x(k * 1024), x2: x(k * 1024), y1: 14, y2: 20, stroke: "#9aa4ae"}));
      const t = sv("text", {x: x(k * 1024) + 2, y: 12});
      t.textContent = k + "K";
      svg.appendChild(t);
    }
    for (const bx of boxes) {
      const r = sv("rect", {x: x(bx.offset), y: y(bx.start), width: Math.max(2, bx.size / 1024 * pxPerKiB),
                            height: Math.max(LINE_PX - 2, (bx.end - bx.start + 1) * LINE_PX - 2), fill: hue(bx.base, 55, 62),
                            class: "box" + (bx.view ? " view" : "") + (bx.conflict ? " conflict" : "") +
                                   (pinned === bx ? " pinned" : "")});
      const tip = sv("title");
      tip.textContent = bx.name + " [" + bx.shape.join("x") + " " + bx.dtype + "] " + bx.op + "\n" + bx.base +
        " @ " + bx.offset + " +" + bx.size + " B, lines " + bx.start + "-" + bx.end +
        (bx.aliases.length ? "\naliases: " + bx.aliases.join(", ") : "");
      r.appendChild(tip);
      r.addEventListener("click", () => { pinned = pinned === bx ? null : bx; draw(); });
      svg.appendChild(r);
      const w = bx.size / 1024 * pxPerKiB;
      if (w >= 44) {
        const label = sv("text", {x: x(bx.offset) + 3, y: y(bx.start) + 11, "pointer-events": "none"});
        label.textContent = bx.name.length * 6 > w ? bx.name.slice(0, Math.floor(w / 6) - 1) + "~" : bx.name;
        label.setAttribute("style", "fill:#1d232a");
        svg.appendChild(label);
      }
    }
    if (s.limit) svg.appendChild(sv("line", {x1: x(s.limit), x2: x(s.limit), y1: 14, y2: height, stroke: "#c62828",
                                             "stroke-dasharray": "4 3"}));
    svg.appendChild(sv("line", {x1: x(s.hwm), x2: x(s.hwm), y1: 14, y2: height, stroke: "#2e7d32"}));
    wrap.appendChild(svg);
    if (!boxes.length) wrap.appendChild(el("div", {class: "empty"}, "no buffers in this space"));
    pane.appendChild(wrap);
  }

  function drawSource(f, pane) {
    const pre = el("pre");
    const lines = f.source.split("\n");
    lines.forEach((text, i) => {
      const no = f.src_start + i;
      const hit = pinned && pinned.fn === f.name && no >= pinned.start && no <= pinned.end;
      const line = el("span", {class: "ln" + (hit ? " hit" : "")});
      line.appendChild(el("span", {class: "no"}, String(no)));
      line.appendChild(document.createTextNode(text));
      pre.appendChild(line);
    });
    pane.appendChild(pre);
  }

  function draw() {
    document.getElementById("zoomv").textContent = pxPerKiB + " px/KiB";
    const main = document.getElementById("main");
    main.textContent = "";
    if (!data.functions.length) main.appendChild(el("p", {class: "empty"}, "This dump has no kernel functions."));
    for (const f of data.functions) {
      for (const bx of f.boxes) bx.fn = f.name;
      const sec = el("section", {class: "fn"});
      sec.appendChild(el("h2", {}, f.name + " (" + f.ftype + ")"));
      const row = el("div", {class: "row"});
      const maps = el("div", {class: "maps"});
      for (const s of f.spaces) {
        if (!hidden.has(s.space) && (s.tiles || f.boxes.length === 0)) drawSpace(f, s, maps);
      }
      const details = el("div", {class: "details"});
      if (pinned && pinned.fn === f.name) {
        details.textContent = "pinned: " + pinned.name + "  " + pinned.space + " " + pinned.base + " @ " +
          pinned.offset + " (+" + pinned.size + " B)  shape " + pinned.shape.join("x") + " " + pinned.dtype +
          "  op " + pinned.op + "  lines " + pinned.start + "-" + pinned.end +
          (pinned.view ? "  [view]" : "") + (pinned.conflict ? "  [CONFLICT]" : "");
      }
      maps.appendChild(details);
      row.appendChild(maps);
      const src = el("div", {class: "src"});
      drawSource(f, src);
      row.appendChild(src);
      sec.appendChild(row);
      main.appendChild(sec);
    }
  }
  draw();
"""

PAGE = frame(_CSS, _BODY, _SCRIPT)
