"""The self-contained HTML/JS viewer of ``pypto-ir-trace`` (``__PAYLOAD__`` is the JSON data)."""

from pypto.tools._page_common import frame

_CSS = r"""  :root { --fg: #1d232a; --muted: #6a7380; --bg: #ffffff; --panel: #f6f8fa; --line: #d5dae0;
          --add: #e6ffec; --addfg: #116329; --del: #ffebe9; --delfg: #82071e; --sel: #dbe9ff; --warn: #8a5a00; }
  body.dark { --fg: #e6edf3; --muted: #8b949e; --bg: #0d1117; --panel: #161b22; --line: #30363d;
              --add: #12261e; --addfg: #7ee787; --del: #25171c; --delfg: #ffa198; --sel: #1f3a5f; --warn: #d29922; }
  body { margin: 0; font: 13px/1.4 system-ui, sans-serif; color: var(--fg); background: var(--bg);
         display: grid; grid-template-columns: 300px 1fr; grid-template-rows: auto 1fr; height: 100vh; }
  header { grid-column: 1 / 3; padding: 8px 14px; border-bottom: 1px solid var(--line); background: var(--panel);
           display: flex; gap: 14px; align-items: center; flex-wrap: wrap; }
  header h1 { font-size: 15px; margin: 0; }
  header .muted { color: var(--muted); }
  button { font: inherit; background: var(--bg); color: var(--fg); border: 1px solid var(--line); border-radius: 4px;
           padding: 2px 8px; cursor: pointer; }
  button.on { background: var(--sel); }
  nav { overflow: auto; border-right: 1px solid var(--line); background: var(--panel); }
  nav .item { padding: 4px 10px; cursor: pointer; display: flex; justify-content: space-between; gap: 6px;
              border-bottom: 1px solid var(--line); }
  nav .item.sel { background: var(--sel); }
  nav .item.noop { color: var(--muted); }
  nav .num { color: var(--muted); font-variant-numeric: tabular-nums; }
  .plus { color: var(--addfg); } .minus { color: var(--delfg); }
  main { overflow: auto; padding: 10px 14px; }
  main h2 { font-size: 14px; margin: 0 0 6px; }
  .warning { color: var(--warn); white-space: pre-wrap; margin: 4px 0 8px; }
  details { border: 1px solid var(--line); border-radius: 4px; margin: 8px 0; }
  summary { padding: 4px 8px; background: var(--panel); cursor: pointer; }
  table.diff { border-collapse: collapse; width: 100%; table-layout: fixed; font: 11.5px/16px ui-monospace, monospace; }
  table.diff td { padding: 0 6px; white-space: pre-wrap; word-break: break-all; vertical-align: top; }
  table.diff td.no { color: var(--muted); text-align: right; width: 3.5em; user-select: none; }
  tr.add td.txt, td.add { background: var(--add); }
  tr.del td.txt, td.del { background: var(--del); }
  tr.gap td { color: var(--muted); background: var(--panel); }
  pre.snap { font: 11.5px/16px ui-monospace, monospace; background: var(--panel); padding: 8px; overflow: auto; }
  .empty { color: var(--muted); font-style: italic; }
"""

_BODY = r"""<header>
  <h1 id="title"></h1>
  <span class="muted" id="summary"></span>
  <span>show <button id="f-all" class="on">all</button> <button id="f-changed">changed</button>
    <button id="f-noop">no-op</button></span>
  <span>layout <button id="l-split" class="on">side by side</button> <button id="l-stack">stacked</button></span>
  <button id="fold">fold all</button>
  <button id="copy">copy snapshot</button>
  <button id="theme">dark</button>
  <span class="muted">j / k: next / previous pass</span>
</header>
<nav id="nav"></nav>
<main id="main"></main>
"""

_SCRIPT = r"""  const passes = data.passes;
  const firstChange = passes.findIndex(p => p.index > 0 && p.changed);
  let filter = "all", layout = "split", selected = firstChange > 0 ? firstChange : 0, folded = false;

  function label(p) { return String(p.index).padStart(2, "0") + " " + (p.index === 0 ? "frontend" : p.name); }
  function visible(p) {
    if (filter === "changed") return p.index === 0 || p.changed;
    if (filter === "noop") return !p.changed;
    return true;
  }

  document.getElementById("title").textContent = "IR trace - " + data.source;
  const changed = passes.filter(p => p.index > 0 && p.changed).length;
  document.getElementById("summary").textContent = (passes.length - 1) + " passes, " + changed + " changed the IR, " +
    (passes.length - 1 - changed) + " no-op";

  function drawNav() {
    const nav = document.getElementById("nav");
    nav.textContent = "";
    passes.forEach((p, i) => {
      if (!visible(p)) return;
      const item = el("div", {class: "item" + (i === selected ? " sel" : "") + (p.changed ? "" : " noop"),
                              "data-index": String(i)});
      item.appendChild(el("span", {}, label(p) + (p.warning ? " \u26a0" : "")));
      const counts = el("span", {class: "num"});
      if (p.index > 0) {
        counts.appendChild(el("span", {class: "plus"}, "+" + p.added));
        counts.appendChild(document.createTextNode(" "));
        counts.appendChild(el("span", {class: "minus"}, "-" + p.removed));
      }
      item.appendChild(counts);
      item.addEventListener("click", () => { selected = i; draw(); });
      nav.appendChild(item);
    });
  }

  function row(cells) {
    const tr = el("tr");
    for (const [cls, text] of cells) tr.appendChild(el("td", {class: cls}, text));
    return tr;
  }

  function stacked(h, table) {
    for (const [tag, o, n, text] of h.rows) {
      const tr = row([["no", o === null ? "" : String(o)], ["no", n === null ? "" : String(n)],
                      ["txt", (tag === "=" ? " " : tag) + " " + text]]);
      if (tag === "+") tr.className = "add";
      if (tag === "-") tr.className = "del";
      table.appendChild(tr);
    }
  }

  function split(h, table) {
    let dels = [], adds = [];
    const flush = () => {
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
        const d = dels[k], a = adds[k];
        table.appendChild(row([["no", d ? String(d[1]) : ""], [d ? "del" : "", d ? d[3] : ""],
                               ["no", a ? String(a[2]) : ""], [a ? "add" : "", a ? a[3] : ""]]));
      }
      dels = []; adds = [];
    };
    for (const r of h.rows) {
      if (r[0] === "-") { if (adds.length) flush(); dels.push(r); }
      else if (r[0] === "+") adds.push(r);
      else { flush(); table.appendChild(row([["no", String(r[1])], ["", r[3]], ["no", String(r[2])], ["", r[3]]])); }
    }
    flush();
  }

  function drawMain() {
    const main = document.getElementById("main");
    main.textContent = "";
    const p = passes[selected];
    if (!p) return;
    main.appendChild(el("h2", {}, label(p) + "  (" + p.file + ")"));
    if (p.warning) main.appendChild(el("div", {class: "warning"}, "warning: " + p.warning));
    if (p.index === 0) {
      main.appendChild(el("pre", {class: "snap"}, p.snapshot));
      return;
    }
    if (!p.functions.length) main.appendChild(el("p", {class: "empty"}, "No change: this pass left the IR as it was."));
    for (const f of p.functions) {
      const det = el("details");
      if (!folded) det.setAttribute("open", "");
      const sum = el("summary");
      sum.appendChild(document.createTextNode(f.name + " (" + f.status + ") "));
      sum.appendChild(el("span", {class: "plus"}, "+" + f.added));
      sum.appendChild(document.createTextNode(" "));
      sum.appendChild(el("span", {class: "minus"}, "-" + f.removed));
      det.appendChild(sum);
      const table = el("table", {class: "diff"});
      f.hunks.forEach((h, k) => {
        if (k > 0) table.appendChild(row([["", ""], ["", "\u22ef"]])).className = "gap";
        if (layout === "split") split(h, table); else stacked(h, table);
      });
      det.appendChild(table);
      main.appendChild(det);
    }
  }

  function draw() { drawNav(); drawMain(); }

  function setFilter(f) {
    filter = f;
    for (const id of ["all", "changed", "noop"]) document.getElementById("f-" + id).classList.toggle("on", id === f);
    if (!visible(passes[selected])) {
      const first = passes.findIndex(visible);
      if (first >= 0) selected = first;
    }
    draw();
  }
  function step(delta) {
    for (let i = selected + delta; i >= 0 && i < passes.length; i += delta) {
      if (visible(passes[i])) { selected = i; draw(); return; }
    }
  }
  document.getElementById("f-all").addEventListener("click", () => setFilter("all"));
  document.getElementById("f-changed").addEventListener("click", () => setFilter("changed"));
  document.getElementById("f-noop").addEventListener("click", () => setFilter("noop"));
  document.getElementById("l-split").addEventListener("click", () => {
    layout = "split"; document.getElementById("l-split").classList.add("on");
    document.getElementById("l-stack").classList.remove("on"); drawMain();
  });
  document.getElementById("l-stack").addEventListener("click", () => {
    layout = "stack"; document.getElementById("l-stack").classList.add("on");
    document.getElementById("l-split").classList.remove("on"); drawMain();
  });
  document.getElementById("fold").addEventListener("click", () => {
    folded = !folded;
    document.getElementById("fold").textContent = folded ? "unfold all" : "fold all";
    drawMain();
  });
  document.getElementById("theme").addEventListener("click", () => {
    const dark = document.body.classList.toggle("dark");
    document.getElementById("theme").textContent = dark ? "light" : "dark";
  });
  document.getElementById("copy").addEventListener("click", () => {
    const text = passes[selected].snapshot;
    const area = el("textarea");
    area.value = text;
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (err) { /* clipboard unavailable: the text stays selected */ }
    area.remove();
  });
  document.addEventListener("keydown", e => {
    if (e.target && e.target.tagName === "TEXTAREA") return;
    if (e.key === "j") step(1);
    if (e.key === "k") step(-1);
  });
  draw();
"""

PAGE = frame(_CSS, _BODY, _SCRIPT)
