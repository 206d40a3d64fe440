"""The self-contained HTML swimlane of ``python -m pypto.tools.swimlane --html`` (``__PAYLOAD__`` is JSON)."""

from pypto.tools._page_common import frame

_CSS = r"""  .controls { padding: 6px 16px; border-bottom: 1px solid #d5dae0; }
  .lanes { padding: 8px 16px; overflow-x: auto; }
  svg text { font: 11px system-ui, sans-serif; }
  rect.unit { stroke: #24323f; stroke-width: 0.6; }
  rect.wait { fill: #d5dae0; }
  pre { margin: 0 16px 16px; padding: 8px; background: #f6f8fa; font: 12px/1.4 ui-monospace, monospace; }
"""

_BODY = r"""<header>
  <h1 id="title"></h1>
  <div class="muted" id="meta"></div>
  <div class="muted" id="caveat"></div>
</header>
<div class="controls">
  <label>zoom <input id="zoom" type="range" min="0.1" max="40" step="0.1" value="4"> <span id="zoomv"></span></label>
  <label><input id="arrows" type="checkbox" checked> dependency arrows</label>
  <label><input id="waits" type="checkbox" checked> dispatch&#8594;start</label>
</div>
<div class="lanes" id="lanes"></div>
<pre id="summary"></pre>
"""

_SCRIPT = r"""  const ROW = 26, LEFT = 70, TOP = 24;
  let pxPerUs = 4;
  document.getElementById("title").textContent = "Swimlane - " + data.source;
  document.getElementById("meta").textContent = data.units.length + " units on " + data.cores.length +
    " simulated cores, " + data.makespan.toFixed(1) + " us from the first dispatch to the last finish, level " +
    data.level + " (grey: dispatch\u2192start wait)";
  document.getElementById("caveat").textContent = data.caveat;
  document.getElementById("summary").textContent = data.summary;
  function draw() {
    document.getElementById("zoomv").textContent = pxPerUs + " px/us";
    const lanes = document.getElementById("lanes");
    lanes.textContent = "";
    const width = LEFT + data.makespan * pxPerUs + 40;
    const svg = sv("svg", {width: width, height: TOP + data.cores.length * ROW + 10});
    const rowOf = {};
    data.cores.forEach((c, i) => {
      rowOf[c.id] = i;
      const t = sv("text", {x: 4, y: TOP + i * ROW + 17});
      t.textContent = c.track;
      svg.appendChild(t);
      svg.appendChild(sv("line", {x1: LEFT, x2: width, y1: TOP + i * ROW + ROW, y2: TOP + i * ROW + ROW,
                                  stroke: "#eef0f3"}));
    });
    let step = 1;
    for (const m of [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000]) {
      step = m;
      if (m * pxPerUs >= 70) break;
    }
    for (let us = 0; us <= data.makespan; us += step) {
      const x = LEFT + us * pxPerUs;
      svg.appendChild(sv("line", {x1: x, x2: x, y1: 14, y2: TOP, stroke: "#9aa4ae"}));
      const t = sv("text", {x: x + 2, y: 12, fill: "#6a7380"});
      t.textContent = us + " us";
      svg.appendChild(t);
    }
    const showWaits = document.getElementById("waits").checked;
    const pos = {};
    for (const u of data.units) {
      const y = TOP + rowOf[u.core] * ROW + 3;
      if (showWaits && u.dispatch !== null) {
        svg.appendChild(sv("rect", {class: "wait", x: LEFT + u.dispatch * pxPerUs, y: y + 8,
                                    width: Math.max(0, (u.start - u.dispatch) * pxPerUs), height: 4}));
      }
      const w = Math.max(1.5, (u.end - u.start) * pxPerUs);
      const r = sv("rect", {class: "unit", x: LEFT + u.start * pxPerUs, y: y, width: w, height: ROW - 6,
                            fill: hue(u.kernel, 60, 64)});
      const tip = sv("title");
      tip.textContent = u.name + "\nstart " + u.start.toFixed(2) + " us, " + (u.end - u.start).toFixed(2) + " us" +
        (u.dispatch !== null ? "\ndispatch " + u.dispatch.toFixed(2) + ", finish " + u.finish.toFixed(2) : "");
      r.appendChild(tip);
      svg.appendChild(r);
      if (w > u.name.length * 6) {
        const t = sv("text", {x: LEFT + u.start * pxPerUs + 3, y: y + 14, "pointer-events": "none"});
        t.textContent = u.name;
        svg.appendChild(t);
      }
      const p = pos[u.task] || (pos[u.task] = {first: u, last: u});
      if (u.start < p.first.start) p.first = u;
      if (u.end > p.last.end) p.last = u;
    }
    if (document.getElementById("arrows").checked) {
      for (const [a, b] of data.edges) {
        if (!pos[a] || !pos[b]) continue;
        const s = pos[a].last, f = pos[b].first;
        const x1 = LEFT + s.end * pxPerUs, y1 = TOP + rowOf[s.core] * ROW + ROW / 2;
        const x2 = LEFT + f.start * pxPerUs, y2 = TOP + rowOf[f.core] * ROW + ROW / 2;
        svg.appendChild(sv("path", {d: "M" + x1 + "," + y1 + " C" + (x1 + 20) + "," + y1 + " " + (x2 - 20) + "," + y2 +
                                        " " + x2 + "," + y2, fill: "none", stroke: "#37474f", "stroke-width": 1.2}));
        svg.appendChild(sv("circle", {cx: x2, cy: y2, r: 2.5, fill: "#37474f"}));
      }
    }
    lanes.appendChild(svg);
  }
  pxPerUs = Math.min(40, Math.max(0.1, Math.floor(10 * 950 / Math.max(data.makespan, 1)) / 10));
  document.getElementById("zoom").value = String(pxPerUs);
  document.getElementById("zoom").addEventListener("input", e => { pxPerUs = Number(e.target.value); draw(); });
  document.getElementById("arrows").addEventListener("change", draw);
  document.getElementById("waits").addEventListener("change", draw);
  draw();
"""

PAGE = frame(_CSS, _BODY, _SCRIPT)
