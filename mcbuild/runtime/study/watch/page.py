"""The page of ``mcbuild study watch``: one HTML file whose script polls the server (the study every
second, an open episode twice a second) and draws with the viewer's ``map.js``.

``<body data-state=loading|running|ended data-stored=N>`` and ``#episode[data-steps=N]`` let a headless
browser follow it (``make test-browser``); JavaScript errors are counted on ``<html data-js-errors>``.
"""
from __future__ import annotations

from mcbuild.runtime.study.viewer.page import CSS

SCRIPT = r"""
"use strict";
const W = {open: null, n: 0, e: null, map: null, drawing: null, seen: new Map(), finished: []};
const esc = (s) => String(s == null ? "" : s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
const $ = (id) => document.getElementById(id);
async function get(url) {
  const r = await fetch(url, {cache: "no-store"});
  if (!r.ok) throw new Error(url + ": HTTP " + r.status);
  return r.json();
}
const num = (x, d) => (x == null ? "–" : Number(x).toFixed(d));
const bar = (a, b) => `<progress max="${b || 1}" value="${a}"></progress> ${a}/${b}`;

function renderState(s) {
  document.title = `watch: ${s.study}`;
  document.body.dataset.state = s.running ? "running" : "ended";
  document.body.dataset.stored = String(s.stored);
  $("title").textContent = `Study ${s.study}`;
  $("path").textContent = s.path;
  let status;
  if (s.running) status = `<b>running</b> (${esc(s.writer)})`;
  else {
    const whole = s.planned && s.stored >= s.planned;
    status = `<b>the study ended</b>: ${whole ? "every planned episode is stored" : "no run is writing it now; " +
      "continue it with <code>mcbuild study run CONFIG --resume</code>"}. ` + (s.report
      ? `<a id="report-link" href="${s.report}">Open the report</a>`
      : `Write its report with <code>mcbuild study report ${esc(s.path)}</code>`);
  }
  $("status").innerHTML = status;
  $("stored").innerHTML = bar(s.stored, s.planned);
  $("money").innerHTML = s.cap == null ? `$${num(s.spent, 4)} (no max_cost_usd)`
    : `${bar(Number(s.spent.toFixed(4)), s.cap)} $ of max_cost_usd`;
  const kinds = Object.entries(s.faults);
  $("faults").innerHTML = (kinds.length ? kinds.map(([k, n]) => `${n} ${esc(k)}`).join(", ") : "none") +
    (s.recent_faults.length ? "<ul>" + s.recent_faults.map((f) =>
      `<li><code>${esc(f.episode)}</code> attempt ${f.attempt} (${esc(f.kind)}): ${esc(f.message)}</li>`).join("") + "</ul>" : "");
  $("cells").innerHTML = "<tr><th>Condition</th><th>Configuration</th><th>Stored</th><th>Score</th><th>SR %</th></tr>" +
    s.cells.map((c) => `<tr><td>${esc(c.condition)}</td><td>${esc(c.configuration)}</td><td>${bar(c.stored, c.planned)}</td>` +
      `<td>${num(c.score, 1)}</td><td>${num(c.sr, 1)}</td></tr>`).join("");
  const now = new Set(s.inflight.map((e) => e.id));
  for (const [id, e] of W.seen) if (!now.has(id)) { W.finished.unshift(e); W.seen.delete(id); }
  for (const e of s.inflight) W.seen.set(e.id, e);
  W.finished = W.finished.slice(0, 12);
  $("inflight").innerHTML = "<tr><th>Episode</th><th>World</th><th>Condition</th><th>Task</th><th>Configuration</th>" +
    "<th>Model</th><th>Actions</th><th>Score</th><th>Last actions</th></tr>" + s.inflight.map((e) =>
      `<tr data-id="${esc(e.id)}" class="ep${e.id === W.open ? " open" : ""}"><td><a href="#${esc(e.id)}">${esc(e.id)}</a>` +
      `${e.finished ? " <i>storing</i>" : ""}</td><td>${esc(e.world)}</td><td>${esc(e.condition)}</td><td>${esc(e.task)}</td>` +
      `<td>${esc(e.configuration)}</td><td>${esc(e.model)}</td><td>${e.actions}/${e.budget}</td><td>${e.score}</td><td>` +
      e.last.map((a) => `<div class="${a.ok ? "" : "bad"}">${a.i}. ${esc(a.text)}${a.ok ? "" : " ✗ " + esc(a.reason)}</div>`).join("") +
      "</td></tr>").join("");
  $("inflight-count").textContent = String(s.inflight.length);
  $("finished").innerHTML = W.finished.map((e) =>
    `<li data-id="${esc(e.id)}"><a href="#${esc(e.id)}">${esc(e.id)}</a> ${esc(e.world)} ${esc(e.condition)} ${esc(e.task)} ` +
    `${esc(e.configuration)}</li>`).join("");
}

async function pollState() {
  try { renderState(await get("api/state")); $("error").textContent = ""; }
  catch (err) { $("error").textContent = "cannot read the study: " + err.message; }
  setTimeout(pollState, 1000);
}

function openEpisode(id) {
  if (!id || id === W.open) return;
  W.open = id; W.n = 0; W.e = {path: [], steps: []}; W.map = null; W.drawing = null;
  const box = $("episode");
  box.dataset.id = id; box.dataset.steps = "0"; box.hidden = false;
  $("ep-title").textContent = `Episode ${id}`;
  $("ep-state").textContent = "loading… (a stored episode's path is replayed first)";
  $("map").innerHTML = "";
  $("actions").innerHTML = "<tr><th>#</th><th>Action</th><th>Result</th><th>Position</th><th>Score</th></tr>";
}

async function pollEpisode() {
  const id = W.open;
  if (id) {
    try {
      const d = await get(`api/episode/${encodeURIComponent(id)}?since=${W.n}`);
      if (id === W.open) showEpisode(d);
    } catch (err) { $("ep-state").textContent = "not in flight and not stored (" + err.message + ")"; }
  }
  setTimeout(pollEpisode, 500);
}

function showEpisode(d) {
  const h = d.head, e = W.e;
  if (W.n === 0) {
    $("ep-title").textContent = `Episode ${h.id}: ${h.configuration} · ${h.model} on ${h.world}, ${h.condition}, ${h.task}`;
    if (h.pos) e.path.push(h.pos);
  }
  const rows = [];
  for (const s of d.steps) {
    e.steps.push({skill: s.skill, enc: []});
    if (s.pos) e.path.push(s.pos);
    rows.push(`<tr class="${s.ok ? "" : "fail"}"><td>${s.i}</td><td class="act">${esc(s.text)}</td>` +
      `<td>${s.ok ? "ok" : "✗ " + esc(s.reason)}</td><td>${s.pos ? s.pos.join(" ") : ""}</td><td>${s.score == null ? "" : s.score}</td></tr>`);
  }
  if (rows.length) $("actions").insertAdjacentHTML("beforeend", rows.join(""));
  W.n = d.n;
  $("episode").dataset.steps = String(W.n);
  $("episode").dataset.done = d.end ? (d.stored ? "stored" : "finished") : "";
  $("ep-state").textContent = !d.end ? `in flight: ${W.n}/${h.budget} actions` : d.stored
    ? `stored: Score ${d.end.score}, ${d.end.success ? "success" : "no success"}, ${d.end.actions} actions`
    : `finished (${d.end.end}, Score ${d.end.score}); being stored`;
  if (!h.map) return;
  if (W.map) { W.map.e = e; W.map.render(); }
  else if (!W.drawing) W.drawing = MCMap.draw("map", h.map, `maps/${h.world}.png`, e, null, {members: [], path: around(e.path)})
    .then((m) => { if (W.e === e) { W.map = m; m.e = W.e; m.render(); } });
}

/* the first view: 32 blocks around where the body starts (the whole map without a start) */
const around = (path) => path.length ? [[path[0][0] - 32, 0, path[0][2] - 32], [path[0][0] + 32, 0, path[0][2] + 32]] : [];

function start() {
  document.addEventListener("click", (ev) => {
    const row = ev.target.closest("[data-id]");
    if (row && row.id !== "episode") { ev.preventDefault(); openEpisode(row.dataset.id); history.replaceState(null, "", "#" + row.dataset.id); }
  });
  pollState();
  pollEpisode();
  if (location.hash.length > 1) openEpisode(location.hash.slice(1));
}
"""

PAGE = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>watch</title><link rel="icon" href="data:,">
<script>
window.__errors = [];
function __fail(msg) {{
  window.__errors.push(String(msg));
  document.documentElement.setAttribute("data-js-errors", String(window.__errors.length));
}}
window.addEventListener("error", function (e) {{ __fail(e.message || ("cannot load " + (e.target && e.target.src))); }}, true);
window.addEventListener("unhandledrejection", function (e) {{ __fail(e.reason && e.reason.message || e.reason); }});
</script>
<style>{CSS}
progress{{width:7em;vertical-align:middle}}tr.ep{{cursor:pointer}}tr.ep:hover,tr.open{{background:#eef4ff}}
.cols{{display:flex;gap:1.5em;flex-wrap:wrap}}.cols>div{{flex:1;min-width:420px}}#episode{{border-top:2px solid #888;margin-top:1em}}
#error{{color:#a00}}#inflight td:last-child{{max-width:24em;overflow-wrap:anywhere;font-size:12px}}</style>
<script src="map.js"></script>
<script>{SCRIPT}</script>
</head><body data-state="loading" data-stored="0">
<h1 id="title">Study</h1>
<div class="note">Read-only view of <code id="path"></code>; it follows the run from the store and the episodes' live logs.</div>
<p id="status">Loading…</p><p id="error"></p>
<div class="cols">
<div><h2>Episodes stored</h2><p id="stored"></p><h2>Money</h2><p id="money"></p><h2>Faults</h2><div id="faults"></div>
<h2>Progress per cell</h2><table id="cells"></table></div>
<div><h2>In flight (<span id="inflight-count">0</span>)</h2><table id="inflight"></table>
<h2>Just finished</h2><ul id="finished"></ul></div>
</div>
<div id="episode" hidden><h2 id="ep-title"></h2><p id="ep-state" class="note"></p>
<div class="side"><div id="map"></div><div><table id="actions"></table></div></div></div>
<script>start();</script>
</body></html>
"""
