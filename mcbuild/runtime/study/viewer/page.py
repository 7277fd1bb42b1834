"""The viewer's HTML shell and style sheet (everything else is drawn by ``app.js`` and ``map.js``).

The first script records every JavaScript error on ``<html data-js-errors=N>`` and in
``#js-errors``, so a headless browser's DOM dump shows whether the page failed
(``make test-browser``); ``app.js`` sets ``<body data-render=ok|empty|error>`` when it is done.
"""
from __future__ import annotations

CSS = """body{font-family:sans-serif;margin:0 auto;padding:.6em 1em;max-width:1500px;font-size:13px}
h1{font-size:19px}h2{font-size:15px;margin:.8em 0 .3em}table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:2px 5px;vertical-align:top;text-align:left}
tr.fail td.c-score{font-weight:bold}
td.encounter{background:#fff6cc}td.first-enc{background:#ffe066;border-top:2px solid #b08800;border-bottom:2px solid #b08800}
table.pair{table-layout:fixed}col.c-idx{width:5.5em}col.c-act{width:15%}col.c-res{width:16%}col.c-score{width:3.5em}
col.c-rule{width:14%}.enc{overflow-wrap:anywhere}.delta{color:#333;font-size:11px}
tr.divergence td{border-top:3px solid #c00;border-bottom:3px solid #c00}
.divtag{display:block;color:#fff;background:#c00;font-size:10px;padding:0 3px;margin-top:2px}
.enc{font-size:11px;background:#fff0a0;padding:0 2px}.enc.first{font-weight:bold;outline:1px solid #b08800}
.bad{color:#a00}.act{overflow-wrap:anywhere}
.side{display:flex;gap:1.5em;flex-wrap:wrap}.side>div{flex:1;min-width:380px}
canvas.map{max-width:100%;border:1px solid #888;cursor:grab;touch-action:none}.mapbar button{min-width:2em}
th[data-sort] button{all:unset;cursor:pointer;font-weight:bold}th[aria-sort=ascending] button::after{content:" ▲"}
th[aria-sort=descending] button::after{content:" ▼"}#search{width:16em}
pre{white-space:pre-wrap;max-height:12em;overflow:auto;background:#f6f6f6;font-size:11px}
pre.reply{background:#eef4ff}.note{color:#555;font-size:12px}#divergence{font-weight:bold}
form label{margin-right:.8em}#js-errors{color:#a00}"""

INDEX_HTML = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Trajectory viewer</title>
<script>
window.__errors = [];
function __fail(msg) {{
  window.__errors.push(String(msg));
  document.documentElement.setAttribute("data-js-errors", String(window.__errors.length));
  var box = document.getElementById("js-errors");
  if (box) box.textContent = window.__errors.join("\\n");
}}
window.addEventListener("error", function (e) {{ __fail(e.message || ("cannot load " + (e.target && e.target.src))); }}, true);
window.addEventListener("unhandledrejection", function (e) {{ __fail(e.reason && e.reason.message || e.reason); }});
</script>
<style>{CSS}</style>
<script src="map.js"></script>
<script src="app.js"></script>
<script src="data/index.js"></script>
</head><body data-render="loading">
<div id="js-errors"></div>
<div id="app">Loading…</div>
<script>MCV.start();</script>
</body></html>
"""
