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
  const FILTERS = ["world", "task", "configuration", "model", "condition", "end"];
  const COLUMNS = [["id", "Episode"], ["world", "World"], ["task", "Task"], ["configuration", "Configuration"], ["model", "Model"],
    ["condition", "Condition"], ["repetition", "Rep"], ["score", "Score"], ["actions", "Actions"], ["end", "End"],
    ["encounters", "Encounters"]];
  /* the text a cell shows (what search matches and string columns sort by) */
  function shown(r, k) {
    if (k === "condition") return cond(r.condition);
    if (k === "task" || k === "configuration" || k === "model") return label(k, r[k]);
    return String(r[k]);
  }
  function browser(params) {
    const st = {q: params.get("q") || "", sort: params.get("sort") || "", desc: params.get("desc") === "1",
                page: Math.max(0, parseInt(params.get("page") || "0", 10)), f: {}};
    FILTERS.forEach((k) => { st.f[k] = params.get(k) || ""; });
    const sel = (name) => `<label>${name} <select data-f="${name}"><option value="">all</option>` +
      IDX.values[name].map((v) => `<option value="${esc(v)}"${st.f[name] === v ? " selected" : ""}>${esc(name === "condition" ? cond(v) : label(name, v))}</option>`).join("") +
      "</select></label>";
    $("#app").innerHTML = `<h1>Episodes of study ${esc(IDX.study)}</h1><p>${esc(IDX.summary)} <a href="../report.html">Back to the report</a></p>` +
      `<form id="filters" onsubmit="return false"><label>search <input id="search" type="search" placeholder="id, world, task, end…" value="${esc(st.q)}"></label> ` +
      FILTERS.map(sel).join(" ") + `</form><p id="count"></p>` +
      '<table class="eps"><thead><tr>' + COLUMNS.map(([k, t]) => `<th data-sort="${k}"><button type="button">${t}</button></th>`).join("") +
      "<th>Paired view</th></tr></thead><tbody></tbody></table>";
    const update = () => { history.replaceState(null, "", link(st)); return rows(st); };
    $("#search").addEventListener("input", (ev) => { st.q = ev.target.value; st.page = 0; update(); });
    document.querySelectorAll("#filters select").forEach((s) => s.addEventListener("change", () => { st.f[s.dataset.f] = s.value; st.page = 0; update(); }));
    document.querySelectorAll("th[data-sort] button").forEach((b) => b.addEventListener("click", () => {
      const k = b.parentNode.dataset.sort;
      st.desc = st.sort === k ? !st.desc : false; st.sort = k; update();
    }));
    $("#count").addEventListener("click", (ev) => {
      if (!ev.target.dataset.page) return;
      ev.preventDefault(); st.page = +ev.target.dataset.page; update();
    });
    return rows(st);
  }
  /* fill the index table for state ``st``; returns the number of rows shown */
  function rows(st) {
    const terms = st.q.toLowerCase().split(/\s+/).filter(Boolean);
    const match = (r) => FILTERS.every((k) => !st.f[k] || String(r[k]) === st.f[k]) &&
      terms.every((t) => COLUMNS.some(([k]) => shown(r, k).toLowerCase().includes(t) || String(r[k]).toLowerCase().includes(t)));
    const all = IDX.rows.map(rec).filter(match);
    if (st.sort) {
      const num = typeof all.concat([{}])[0][st.sort] === "number";
      const key = (r) => (num ? r[st.sort] : shown(r, st.sort));
      all.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : IDX.pos[a.id] - IDX.pos[b.id]) * (st.desc ? -1 : 1); });
    }
    const pages = Math.max(1, Math.ceil(all.length / PAGE)), page = Math.min(st.page, pages - 1);
    const visible = all.slice(page * PAGE, (page + 1) * PAGE);
    $("#count").innerHTML = `${all.length} episodes match; page ${page + 1} of ${pages}. ` +
      (page > 0 ? `<a href="#" data-page="${page - 1}">previous</a> ` : "") + (page + 1 < pages ? `<a href="#" data-page="${page + 1}">next</a>` : "");
    document.querySelectorAll("th[data-sort]").forEach((th) => {
      th.setAttribute("aria-sort", th.dataset.sort === st.sort ? (st.desc ? "descending" : "ascending") : "none");
    });
    document.querySelector("table.eps tbody").innerHTML = visible.map((r) => {
      const pair = r.condition === "vanilla"
        ? (IDX.partners[r.id] || []).map((m) => `<a href="#pair=${r.id},${m}">${cond(row(m)[IDX.fi.condition])}</a>`).join(" ")
        : (r.pair ? `<a href="#pair=${r.pair},${r.id}">with Vanilla</a>` : "");
      return `<tr class="${r.success ? "ok" : "fail"}"><td><a href="#ep=${r.id}">${r.id}</a></td>` +
        COLUMNS.slice(1).map(([k]) => `<td class="c-${k}">${esc(shown(r, k))}</td>`).join("") + `<td>${pair}</td></tr>`;
    }).join("");
    document.body.dataset.rows = visible.length;
    return visible.length;
  }
  function link(st) {
    const q = FILTERS.filter((k) => st.f[k]).map((k) => k + "=" + encodeURIComponent(st.f[k]));
    if (st.q) q.push("q=" + encodeURIComponent(st.q));
    if (st.sort) q.push("sort=" + st.sort + (st.desc ? "&desc=1" : ""));
    if (st.page) q.push("page=" + st.page);
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
    drawMap(e, "map-" + e.id, null, null);
    return e.steps.length + 1;
  }
  /* tick values: multiples of a round step, at most about n of them, from lo to hi */
  const ticks = (lo, hi, n) => {
    const step = [1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000, 2000, 5000].find((t) => (hi - lo) / t <= n) || 10000;
    const out = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) out.push(t);
    return out;
  };
  function inventoryChart(e) {
    const inv = {}, series = {};
    e.steps.forEach((s, n) => {
      for (const k in s.delta) inv[k] = (inv[k] || 0) + s.delta[k];
      for (const k in inv) (series[k] = series[k] || new Array(e.steps.length).fill(0))[n] = inv[k];
    });
    const items = Object.keys(series).sort((a, b) => Math.max(...series[b]) - Math.max(...series[a]) || (a < b ? -1 : 1)).slice(0, 8);
    if (!items.length) return "<p>No inventory change.</p>";
    const L = 44, T = 8, W = 400, H = 170, n = Math.max(1, e.steps.length);
    const lo = Math.min(0, ...items.map((k) => Math.min(...series[k]))), hi = Math.max(1, ...items.map((k) => Math.max(...series[k])));
    const yt = ticks(lo, hi, 5);
    const X = (i) => L + i / n * W, Y = (v) => T + H - (v - lo) / (hi - lo) * H;
    const dash = ["", "6 3", "2 2", "8 3 2 3", "1 3", "10 4", "4 1", "6 2 1 2"];
    let svg = `<svg class="inv" viewBox="0 0 ${L + W + 160} ${T + H + 36}" width="${L + W + 160}" height="${T + H + 36}">`;
    svg += `<g class="y-axis" font-size="10" text-anchor="end"><line x1="${L}" x2="${L}" y1="${T}" y2="${T + H}" stroke="#000"/>` +
      yt.map((t) => `<line x1="${L - 4}" x2="${L}" y1="${Y(t)}" y2="${Y(t)}" stroke="#000"/><line x1="${L}" x2="${L + W}" y1="${Y(t)}" y2="${Y(t)}" stroke="#eee"/>` +
        `<text x="${L - 6}" y="${Y(t) + 3}">${t}</text>`).join("") +
      `<text transform="translate(11 ${T + H / 2}) rotate(-90)" text-anchor="middle">count</text></g>`;
    svg += `<g class="x-axis" font-size="10" text-anchor="middle"><line x1="${L}" x2="${L + W}" y1="${Y(lo)}" y2="${Y(lo)}" stroke="#000"/>` +
      ticks(0, n, 6).map((t) => `<line x1="${X(t)}" x2="${X(t)}" y1="${Y(lo)}" y2="${Y(lo) + 4}" stroke="#000"/>` +
        `<text x="${X(t)}" y="${Y(lo) + 15}">${t}</text>`).join("") +
      `<text x="${L + W / 2}" y="${T + H + 32}">action</text></g>`;
    items.forEach((k, j) => {
      const colour = `hsl(${j * 45},60%,${25 + j * 6}%)`;
      const pts = series[k].map((v, i) => `${X(i + 1)},${Y(v)}`).join(" ");
      svg += `<polyline fill="none" stroke="${colour}" stroke-width="1.6" stroke-dasharray="${dash[j]}" points="${X(0)},${Y(0)} ${pts}"/>` +
        `<line x1="${L + W + 10}" x2="${L + W + 32}" y1="${T + 6 + j * 18}" y2="${T + 6 + j * 18}" stroke="${colour}" stroke-width="2" stroke-dasharray="${dash[j]}"/>` +
        `<text x="${L + W + 36}" y="${T + 10 + j * 18}" font-size="10">${esc(k)} (max ${Math.max(...series[k])})</text>`;
    });
    return svg + "</svg><p class=note>Item counts relative to the starting inventory after each action; the 8 items with the largest counts.</p>";
  }

  /* ---------------------------------------------------------------- world map */
  function mapBox(e, id) {
    if (!IDX.maps[e.world]) return "<p>No map: the world's save was not found.</p>";
    const note = e.path ? (e.path_note || "") : "<p class=note>Path not replayed for this episode (see the viewer's map limit).</p>";
    return `<div id="${id}" class="mapbox"></div><p class=note>Path (line), mined ▲, placed ■, crafted ●, smelted ◆ (yellow: a rule ` +
      `encounter); the marked step is ✕. Axes in block coordinates.</p>${note}`;
  }
  function drawMap(e, id, mark, group) {
    const m = IDX.maps[e.world];
    return m ? MCMap.draw(id, m, "maps/" + e.world + ".png", e, mark, group) : null;
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
    const group = {members: [], path: (v.path || []).concat(m.path || [])};
    drawMap(v, "map-v", mark, group); drawMap(m, "map-m", mark, group);
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
