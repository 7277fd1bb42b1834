/* mcbuild trajectory viewer: static pages, no server. Data arrive as <script> files that call
   MCV.index(...) and MCV.episode(...), so the viewer also works from file:// URLs. */
"use strict";
const MCV = (() => {
  const PAGE = 100;
  let IDX = null;
  const cache = {}, waiting = {};
  const $ = (sel) => document.querySelector(sel);
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
  const cond = (c) => (c === "vanilla" ? "Vanilla" : c.toUpperCase());
  const label = (kind, v) => (IDX.labels[kind] && IDX.labels[kind][v]) || v;

  function loadScript(src) {
    return new Promise((ok, fail) => {
      const s = document.createElement("script");
      s.src = src; s.onload = ok; s.onerror = () => fail(new Error("cannot load " + src));
      document.head.appendChild(s);
    });
  }
  function episode(id) {
    if (cache[id]) return Promise.resolve(cache[id]);
    const p = new Promise((ok) => { waiting[id] = ok; });
    return loadScript("data/ep/" + id.slice(0, 2) + "/" + id + ".js").then(() => p);
  }
  function row(id) { return IDX.rows[IDX.pos[id]]; }
  function rec(r) { const o = {}; IDX.fields.forEach((f, i) => { o[f] = r[i]; }); return o; }

  /* ---------------------------------------------------------------- browser */
  function browser(params) {
    const f = {world: params.get("world") || "", task: params.get("task") || "", configuration: params.get("configuration") || "",
               model: params.get("model") || "", condition: params.get("condition") || "", end: params.get("end") || ""};
    const page = Math.max(0, parseInt(params.get("page") || "0", 10));
    const sel = (name, values) => `<label>${name} <select data-f="${name}"><option value="">all</option>` +
      values.map((v) => `<option value="${esc(v)}"${f[name] === v ? " selected" : ""}>${esc(name === "condition" ? cond(v) : label(name, v))}</option>`).join("") +
      "</select></label>";
    const rows = IDX.rows.map(rec).filter((r) => Object.keys(f).every((k) => !f[k] || String(r[k]) === f[k]));
    const shown = rows.slice(page * PAGE, (page + 1) * PAGE);
    let html = `<h1>Episodes of study ${esc(IDX.study)}</h1><p>${esc(IDX.summary)} <a href="../report.html">Back to the report</a></p>`;
    html += `<form id="filters">${["world", "task", "configuration", "model", "condition", "end"].map((k) => sel(k, IDX.values[k])).join(" ")}</form>`;
    html += `<p id="count">${rows.length} episodes match; page ${page + 1} of ${Math.max(1, Math.ceil(rows.length / PAGE))}. ` +
      (page > 0 ? `<a href="${link(f, page - 1)}">previous</a> ` : "") + ((page + 1) * PAGE < rows.length ? `<a href="${link(f, page + 1)}">next</a>` : "") + "</p>";
    html += '<table class="eps"><thead><tr><th>Episode</th><th>Condition</th><th>Rep</th><th>Score</th><th>Actions</th><th>End</th><th>Encounters</th><th>Paired view</th></tr></thead><tbody>';
    let group = "";
    for (const r of shown) {
      const g = `${r.world} · ${label("task", r.task)} · ${label("configuration", r.configuration)} · ${label("model", r.model)}`;
      if (g !== group) { html += `<tr class="group"><th colspan="8">${esc(g)}</th></tr>`; group = g; }
      const pair = r.condition === "vanilla"
        ? (IDX.partners[r.id] || []).map((m) => `<a href="#pair=${r.id},${m}">${cond(row(m)[IDX.fi.condition])}</a>`).join(" ")
        : (r.pair ? `<a href="#pair=${r.pair},${r.id}">with Vanilla</a>` : "");
      html += `<tr class="${r.success ? "ok" : "fail"}"><td><a href="#ep=${r.id}">${r.id}</a></td><td>${cond(r.condition)}</td><td>${r.repetition}</td>` +
        `<td>${r.score}</td><td>${r.actions}</td><td>${esc(r.end)}</td><td>${r.encounters}</td><td>${pair}</td></tr>`;
    }
    html += "</tbody></table>";
    $("#app").innerHTML = html;
    document.querySelectorAll("#filters select").forEach((s) => s.addEventListener("change", () => {
      f[s.dataset.f] = s.value; location.hash = link(f, 0);
    }));
    return shown.length;
  }
  function link(f, page) {
    const q = Object.keys(f).filter((k) => f[k]).map((k) => k + "=" + encodeURIComponent(f[k]));
    if (page) q.push("page=" + page);
    return "#" + q.join("&");
  }

  /* ---------------------------------------------------------------- one episode */
  function argText(s) {
    const a = s.args || {};
    if (a.grid) return `${a.station || ""} grid ${JSON.stringify(a.grid).replace(/null/g, "·")}`;
    return Object.keys(a).map((k) => `${k}=${typeof a[k] === "object" ? JSON.stringify(a[k]) : a[k]}`).join(" ");
  }
  const deltaText = (d) => Object.keys(d).map((k) => `${d[k] > 0 ? "+" : ""}${d[k]} ${k}`).join(", ");
  function llmCell(s) {
    if (!s.llm.length) return "";
    const t = s.llm.reduce((a, c) => [a[0] + c.in, a[1] + c.out, a[2] + c.cost], [0, 0, 0]);
    return `<details><summary>${s.llm.length} call(s), ${t[0]}/${t[1]} tokens, $${t[2].toFixed(4)}</summary>` +
      s.llm.map((c) => `<div class="call"><b>${esc(c.role)}</b> ${esc(c.model || "")} in ${c.in} out ${c.out} $${c.cost.toFixed(4)}${c.repair ? " (repair)" : ""}` +
        `<pre>${esc(c.prompt)}</pre><pre class="reply">${esc(c.reply)}</pre></div>`).join("") + "</details>";
  }
  function stepCells(s) {
    const enc = s.enc.map((e) => `<span class="${e.first ? "enc first" : "enc"}">${e.first ? "first encounter: " : "rule: "}${esc(e.rule)}</span>`).join(" ");
    const cls = s.enc.some((x) => x.first) ? "first-enc" : s.enc.length ? "encounter" : "";
    const d = deltaText(s.delta);
    return `<td class="act ${cls}"><b>${esc(s.skill)}</b> ${esc(argText(s))}</td><td class="${cls}${s.ok ? "" : " bad"}">${esc(s.msg)}` +
      `${s.reason ? " [" + esc(s.reason) + "]" : ""}${d ? `<br><span class=delta>${esc(d)}</span>` : ""}</td>` +
      `<td class="${cls}">${s.score}</td><td class="${cls}">${s.new.map(esc).join("<br>")}${enc ? (s.new.length ? "<br>" : "") + enc : ""}</td>`;
  }
  function summary(e) {
    const llm = e.tokens[0] + e.tokens[1] > 0 ? `; tokens ${e.tokens[0]} in / ${e.tokens[1]} out, cost $${e.cost.toFixed(4)}` : "";
    return `<p>${esc(e.world)} (${esc(label("biome", e.biome))}) · ${cond(e.condition)} · ${esc(label("task", e.task))} · ` +
      `${esc(label("configuration", e.configuration))} · ${esc(label("model", e.model))} · repetition ${e.repetition} · seed ${e.seed}</p>` +
      `<p>Score ${e.score}, ${e.success ? "success" : "no success"} after ${e.actions} of ${e.budget} actions; ended: ${esc(e.end)}${llm}.</p>`;
  }
  function showEpisode(e) {
    let html = `<p><a href="#">All episodes</a></p><h1>Episode ${e.id}</h1>${summary(e)}`;
    const pairs = e.condition === "vanilla" ? (IDX.partners[e.id] || []) : [];
    const mine = row(e.id)[IDX.fi.pair];
    if (mine) html += `<p><a href="#pair=${mine},${e.id}">Paired view with its Vanilla episode</a></p>`;
    if (pairs.length) html += `<p>Paired views: ${pairs.map((m) => `<a href="#pair=${e.id},${m}">${cond(row(m)[IDX.fi.condition])}</a>`).join(" ")}</p>`;
    const ms = e.steps.filter((s) => s.new.length).map((s) => `${s.new.map(esc).join(", ")} at action ${s.i}`);
    html += `<h2>Milestones</h2><p>${ms.length ? ms.join("; ") : "none completed"}</p>`;
    html += `<div class="side"><div><h2>World map</h2>${mapBox(e, "map-" + e.id)}</div><div><h2>Inventory over time</h2>${inventoryChart(e)}</div></div>`;
    html += '<h2>Actions</h2><table class="steps"><thead><tr><th>#</th><th>Action</th><th>Result and inventory change</th><th>Score</th><th>Milestones / rules</th><th>Model calls</th></tr></thead><tbody>';
    for (const s of e.steps) html += `<tr><td>${s.i}</td>${stepCells(s)}<td>${llmCell(s)}</td></tr>`;
    $("#app").innerHTML = html + "</tbody></table>";
    drawMap(e, "map-" + e.id, null);
    return e.steps.length + 1;
  }
  function inventoryChart(e) {
    const inv = {}, series = {};
    e.steps.forEach((s, n) => {
      for (const k in s.delta) inv[k] = (inv[k] || 0) + s.delta[k];
      for (const k in inv) (series[k] = series[k] || new Array(e.steps.length).fill(0))[n] = inv[k];
    });
    const items = Object.keys(series).sort((a, b) => Math.max(...series[b]) - Math.max(...series[a]) || (a < b ? -1 : 1)).slice(0, 8);
    if (!items.length) return "<p>No inventory change.</p>";
    const W = 420, H = 180, n = Math.max(1, e.steps.length), top = Math.max(1, ...items.map((k) => Math.max(...series[k])));
    const dash = ["", "6 3", "2 2", "8 3 2 3", "1 3", "10 4", "4 1", "6 2 1 2"];
    let svg = `<svg class="inv" viewBox="0 0 ${W + 150} ${H + 20}" width="${W + 150}" height="${H + 20}"><line x1="0" y1="${H}" x2="${W}" y2="${H}" stroke="#000"/>`;
    items.forEach((k, j) => {
      const pts = series[k].map((v, i) => `${(i + 1) / n * W},${H - v / top * (H - 10)}`).join(" ");
      svg += `<polyline fill="none" stroke="hsl(${j * 45},60%,${25 + j * 6}%)" stroke-width="1.6" stroke-dasharray="${dash[j]}" points="0,${H} ${pts}"/>` +
        `<line x1="${W + 8}" x2="${W + 30}" y1="${12 + j * 18}" y2="${12 + j * 18}" stroke="hsl(${j * 45},60%,${25 + j * 6}%)" stroke-width="2" stroke-dasharray="${dash[j]}"/>` +
        `<text x="${W + 34}" y="${16 + j * 18}" font-size="10">${esc(k)} (max ${Math.max(...series[k])})</text>`;
    });
    return svg + `<text x="0" y="${H + 14}" font-size="10">action 1</text><text x="${W - 40}" y="${H + 14}" font-size="10">action ${n}</text></svg>` +
      "<p class=note>Counts relative to the starting inventory; the 8 items with the largest counts.</p>";
  }

  /* ---------------------------------------------------------------- world map */
  function mapBox(e, id) {
    const m = IDX.maps[e.world];
    if (!m) return "<p>No map: the world's save was not found.</p>";
    const note = e.path ? (e.path_note || "") : "<p class=note>Path not replayed for this episode (see the viewer's map limit).</p>";
    return `<canvas id="${id}" width="${m.nx * 2}" height="${m.nz * 2}" class="map"></canvas><p class=note>Path (line), mined ▲, placed ■, crafted ●, smelted ◆; ` +
      `the marked step is ✕.</p>${note}`;
  }
  function drawMap(e, id, mark) {
    const m = IDX.maps[e.world], c = document.getElementById(id);
    if (!m || !c) return;
    const g = c.getContext("2d"), img = new Image();
    img.onload = () => {
      g.imageSmoothingEnabled = false;
      g.drawImage(img, 0, 0, c.width, c.height);
      if (!e.path) return;
      const X = (p) => (p[0] - m.x0 + 0.5) * 2, Z = (p) => (p[2] - m.z0 + 0.5) * 2;
      g.strokeStyle = "#000"; g.lineWidth = 2; g.beginPath();
      e.path.forEach((p, i) => (i ? g.lineTo(X(p), Z(p)) : g.moveTo(X(p), Z(p)))); g.stroke();
      g.strokeStyle = "#fff"; g.lineWidth = 1; g.setLineDash([3, 3]); g.stroke(); g.setLineDash([]);
      e.steps.forEach((s, i) => {
        const p = e.path[i + 1]; if (!p) return;
        const x = X(p), z = Z(p), shape = {mine: "tri", place: "sq", craft_grid: "dot", smelt: "dia"}[s.skill];
        if (!shape) return;
        g.fillStyle = s.enc.length ? "#ff0" : "#fff"; g.strokeStyle = "#000"; g.beginPath();
        if (shape === "tri") { g.moveTo(x, z - 5); g.lineTo(x + 5, z + 4); g.lineTo(x - 5, z + 4); g.closePath(); }
        else if (shape === "sq") g.rect(x - 4, z - 4, 8, 8);
        else if (shape === "dia") { g.moveTo(x, z - 5); g.lineTo(x + 5, z); g.lineTo(x, z + 5); g.lineTo(x - 5, z); g.closePath(); }
        else g.arc(x, z, 4, 0, 7);
        g.fill(); g.stroke();
      });
      const p = mark != null ? e.path[Math.min(mark, e.path.length - 1)] : null;
      if (p) { g.strokeStyle = "#d00"; g.lineWidth = 3; g.beginPath(); g.moveTo(X(p) - 7, Z(p) - 7); g.lineTo(X(p) + 7, Z(p) + 7); g.moveTo(X(p) + 7, Z(p) - 7); g.lineTo(X(p) - 7, Z(p) + 7); g.stroke(); }
    };
    img.src = "maps/" + e.world + ".png";
  }

  /* ---------------------------------------------------------------- paired view */
  function showPair(v, m, all) {
    const info = IDX.pairs[v.id + "," + m.id] || {};
    const div = info.divergence, enc = info.first_encounter;
    let html = `<p><a href="#">All episodes</a> · <a href="#ep=${v.id}">Vanilla episode</a> · <a href="#ep=${m.id}">${cond(m.condition)} episode</a></p>` +
      `<h1>Paired view: ${esc(v.world)} · ${esc(label("task", v.task))} · ${esc(label("configuration", v.configuration))} · Vanilla vs ${cond(m.condition)}</h1>` +
      `<div class="side"><div><h2>Vanilla</h2>${summary(v)}</div><div><h2>${cond(m.condition)}</h2>${summary(m)}</div></div>` +
      `<p id="divergence">${div ? `First divergence at action ${div.index} (${esc(div.kind)}).` : "The two episodes never diverge."} ` +
      `${enc ? `First rule encounter in ${cond(m.condition)} at action ${enc.index} (${esc(enc.rule)}).` : `No rule encounter in ${cond(m.condition)}.`}</p>`;
    const start = all || !div ? 1 : Math.max(1, Math.min(div.index, enc ? enc.index : div.index) - 3);
    if (start > 1) html += `<p>Actions 1–${start - 1} are identical in both episodes. <a href="#pair=${v.id},${m.id},all">Show all actions</a></p>`;
    const cols = '<col class="c-act"><col class="c-res"><col class="c-score"><col class="c-rule">';
    html += '<table class="steps pair"><colgroup><col class="c-idx">' + cols + cols + '</colgroup><thead><tr><th>#</th><th colspan="4">Vanilla</th><th colspan="4">' + cond(m.condition) +
      "</th></tr><tr><th></th>" + "<th>Action</th><th>Result and inventory change</th><th>Score</th><th>Milestones / rules</th>".repeat(2) + "</tr></thead><tbody>";
    const n = Math.max(v.steps.length, m.steps.length);
    const blank = "<td></td>".repeat(4);
    for (let i = start - 1; i < n; i++) {
      const a = v.steps[i], b = m.steps[i], idx = i + 1;
      const cls = div && idx === div.index ? "divergence" : "";
      const tag = div && idx === div.index ? `<span class="divtag">first divergence</span>` : "";
      html += `<tr class="${cls}"><td>${idx}${tag}</td>${a ? stepCells(a) : blank}${b ? stepCells(b) : blank}</tr>`;
    }
    html += "</tbody></table>";
    html += `<div class="side"><div><h2>Vanilla map</h2>${mapBox(v, "map-v")}</div><div><h2>${cond(m.condition)} map</h2>${mapBox(m, "map-m")}</div></div>`;
    $("#app").innerHTML = html;
    const mark = div ? div.index : null;
    drawMap(v, "map-v", mark); drawMap(m, "map-m", mark);
    return n;
  }

  /* ---------------------------------------------------------------- routing */
  function route() {
    const h = location.hash.slice(1);
    const done = (n) => { document.body.dataset.render = n > 0 ? "ok" : "empty"; document.body.dataset.rows = n; };
    const fail = (err) => { $("#app").innerHTML = `<p class="bad">${esc(err.message)}</p>`; document.body.dataset.render = "error"; throw err; };
    document.body.dataset.render = "loading";
    if (h.startsWith("ep=")) return episode(h.slice(3)).then(showEpisode).then(done, fail);
    if (h.startsWith("pair=")) {
      const [a, b, all] = h.slice(5).split(",");
      return Promise.all([episode(a), episode(b)]).then(([v, m]) => showPair(v, m, all === "all")).then(done, fail);
    }
    done(browser(new URLSearchParams(h)));
    return Promise.resolve();
  }
  return {
    index(data) {
      IDX = data; IDX.pos = {}; IDX.fi = {};
      data.fields.forEach((f, i) => { IDX.fi[f] = i; });
      data.rows.forEach((r, i) => { IDX.pos[r[0]] = i; });
    },
    episode(data) { cache[data.id] = data; if (waiting[data.id]) waiting[data.id](data); },
    start() { window.addEventListener("hashchange", route); route(); },
  };
})();
