/* mcbuild trajectory viewer: the top-down world map, with zoom (wheel, double click, + and −),
   pan (drag) and x/z block-coordinate axes. Maps drawn into one group share their view, so the
   paired view's two maps move together. The current view is on the canvas as data-scale
   (pixels per block) and data-cx / data-cz (the block at the centre). */
"use strict";
const MCMap = (() => {
  const MAX = 40, W = 560, AX = 34, TOP = 16;   // max px per block, canvas width, axis margins
  const SHAPES = {mine: "tri", place: "sq", craft_grid: "dot", smelt: "dia"};
  const images = {};
  function image(src) {
    return images[src] = images[src] || new Promise((ok, fail) => {
      const img = new Image();
      img.onload = () => ok(img); img.onerror = () => fail(new Error("cannot load " + src)); img.src = src;
    });
  }
  const niceStep = (s) => [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000].find((t) => t * s >= 48) || 2000;

  /* the view that shows the path (or the whole map), with a margin */
  function fit(m, h, path) {
    const pts = path && path.length > 1 ? path : null;
    const xs = pts ? pts.map((p) => p[0]) : [m.x0, m.x0 + m.nx], zs = pts ? pts.map((p) => p[2]) : [m.z0, m.z0 + m.nz];
    const x0 = Math.min(...xs) - 4, x1 = Math.max(...xs) + 5, z0 = Math.min(...zs) - 4, z1 = Math.max(...zs) + 5;
    const s = Math.min(MAX, (W - AX) / (x1 - x0), (h - TOP) / (z1 - z0));
    return {s, cx: (x0 + x1) / 2, cz: (z0 + z1) / 2};
  }

  /* Draw episode ``e``'s map into the <div id=boxId> (``mark``: action index to cross out). Maps drawn
     with one ``group`` ({members: [], path: points to fit}) share their view. */
  function draw(boxId, m, src, e, mark, group) {
    const box = document.getElementById(boxId);
    if (!box) return;
    const h = Math.round(Math.min(620, Math.max(300, (W - AX) * m.nz / m.nx + TOP)));
    box.innerHTML = `<div class="mapbar"><button data-z="1.5" title="zoom in">+</button><button data-z="0.667" title="zoom out">−</button>` +
      `<button data-fit="path">fit path</button><button data-fit="map">whole map</button> <span class=note>wheel or double click: zoom · drag: pan</span></div>` +
      `<canvas class="map" width="${W}" height="${h}"></canvas>`;
    const c = box.querySelector("canvas"), g = c.getContext("2d");
    group = group || {members: []};
    const fitPath = group.path || e.path;
    if (!group.view) group.view = fit(m, h, fitPath);
    const minS = Math.min((W - AX) / m.nx, (h - TOP) / m.nz) / 2;
    const member = {render: null, e};
    group.members.push(member);
    const set = (v) => { group.view = {s: Math.min(MAX, Math.max(minS, v.s)), cx: v.cx, cz: v.cz}; group.members.forEach((x) => x.render && x.render()); };
    const toBlock = (px, py) => ({x: group.view.cx + (px - (AX + W) / 2) / group.view.s, z: group.view.cz + (py - (TOP + h) / 2) / group.view.s});
    const zoomAt = (px, py, f) => {
      const b = toBlock(px, py), s = Math.min(MAX, Math.max(minS, group.view.s * f));
      set({s, cx: b.x - (px - (AX + W) / 2) / s, cz: b.z - (py - (TOP + h) / 2) / s});
    };
    const local = (ev) => { const r = c.getBoundingClientRect(); return [(ev.clientX - r.left) * W / r.width, (ev.clientY - r.top) * h / r.height]; };
    c.addEventListener("wheel", (ev) => { ev.preventDefault(); const [x, y] = local(ev); zoomAt(x, y, ev.deltaY < 0 ? 1.25 : 0.8); }, {passive: false});
    c.addEventListener("dblclick", (ev) => { const [x, y] = local(ev); zoomAt(x, y, 2); });
    let drag = null;
    c.addEventListener("pointerdown", (ev) => { drag = {p: local(ev), v: group.view}; c.setPointerCapture(ev.pointerId); });
    c.addEventListener("pointermove", (ev) => {
      if (!drag) return;
      const [x, y] = local(ev);
      set({s: drag.v.s, cx: drag.v.cx - (x - drag.p[0]) / drag.v.s, cz: drag.v.cz - (y - drag.p[1]) / drag.v.s});
    });
    c.addEventListener("pointerup", () => { drag = null; });
    box.querySelectorAll("button[data-z]").forEach((b) => b.addEventListener("click", () => zoomAt((AX + W) / 2, (TOP + h) / 2, +b.dataset.z)));
    box.querySelectorAll("button[data-fit]").forEach((b) => b.addEventListener("click", () => set(fit(m, h, b.dataset.fit === "path" ? fitPath : null))));
    return image(src).then((img) => {
      member.render = () => render(g, c, img, m, member.e, mark, group.view);
      member.render();
      return member;        /* set member.e and call member.render() to redraw a growing path */
    });
  }

  function render(g, c, img, m, e, mark, v) {
    const W2 = c.width, H2 = c.height, ox = (AX + W2) / 2, oz = (TOP + H2) / 2;
    const X = (x) => ox + (x - v.cx) * v.s, Z = (z) => oz + (z - v.cz) * v.s;
    Object.assign(c.dataset, {scale: v.s.toFixed(3), cx: v.cx.toFixed(2), cz: v.cz.toFixed(2)});
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.fillStyle = "#777"; g.fillRect(0, 0, W2, H2);
    g.save(); g.beginPath(); g.rect(AX, TOP, W2 - AX, H2 - TOP); g.clip();
    g.imageSmoothingEnabled = false;
    g.drawImage(img, X(m.x0), Z(m.z0), m.nx * v.s, m.nz * v.s);
    if (e.path) path(g, e, mark, (p) => X(p[0] + 0.5), (p) => Z(p[2] + 0.5));
    g.restore();
    axes(g, W2, H2, v, X, Z);
  }

  function path(g, e, mark, X, Z) {
    g.strokeStyle = "#000"; g.lineWidth = 3; g.beginPath();
    e.path.forEach((p, i) => (i ? g.lineTo(X(p), Z(p)) : g.moveTo(X(p), Z(p)))); g.stroke();
    g.strokeStyle = "#fff"; g.lineWidth = 1; g.setLineDash([3, 3]); g.stroke(); g.setLineDash([]);
    e.steps.forEach((s, i) => {
      const p = e.path[i + 1], shape = SHAPES[s.skill];
      if (!p || !shape) return;
      const x = X(p), z = Z(p);
      g.fillStyle = s.enc.length ? "#ff0" : "#fff"; g.strokeStyle = "#000"; g.lineWidth = 1; g.beginPath();
      if (shape === "tri") { g.moveTo(x, z - 5); g.lineTo(x + 5, z + 4); g.lineTo(x - 5, z + 4); g.closePath(); }
      else if (shape === "sq") g.rect(x - 4, z - 4, 8, 8);
      else if (shape === "dia") { g.moveTo(x, z - 5); g.lineTo(x + 5, z); g.lineTo(x, z + 5); g.lineTo(x - 5, z); g.closePath(); }
      else g.arc(x, z, 4, 0, 7);
      g.fill(); g.stroke();
    });
    const p = mark != null ? e.path[Math.min(mark, e.path.length - 1)] : null;
    if (p) {
      const x = X(p), z = Z(p);
      g.strokeStyle = "#d00"; g.lineWidth = 3; g.beginPath();
      g.moveTo(x - 7, z - 7); g.lineTo(x + 7, z + 7); g.moveTo(x + 7, z - 7); g.lineTo(x - 7, z + 7); g.stroke();
    }
  }

  /* block x along the top, block z down the left */
  function axes(g, W2, H2, v, X, Z) {
    g.fillStyle = "#fff"; g.fillRect(0, 0, W2, TOP); g.fillRect(0, 0, AX, H2);
    g.strokeStyle = "#000"; g.lineWidth = 1; g.beginPath(); g.moveTo(AX, H2); g.lineTo(AX, TOP); g.lineTo(W2, TOP); g.stroke();
    g.fillStyle = "#000"; g.font = "10px sans-serif";
    const step = niceStep(v.s);
    const x0 = v.cx - (W2 - AX) / 2 / v.s, z0 = v.cz - (H2 - TOP) / 2 / v.s;
    g.textAlign = "center"; g.textBaseline = "alphabetic";
    for (let x = Math.ceil(x0 / step) * step; X(x) < W2; x += step) {
      if (X(x) < AX + 8) continue;
      g.fillText(String(x), X(x), TOP - 5); g.beginPath(); g.moveTo(X(x), TOP - 3); g.lineTo(X(x), TOP); g.stroke();
    }
    g.textAlign = "right"; g.textBaseline = "middle";
    for (let z = Math.ceil(z0 / step) * step; Z(z) < H2; z += step) {
      if (Z(z) < TOP + 6) continue;
      g.fillText(String(z), AX - 5, Z(z)); g.beginPath(); g.moveTo(AX - 3, Z(z)); g.lineTo(AX, Z(z)); g.stroke();
    }
    g.textAlign = "left"; g.textBaseline = "alphabetic"; g.fillText("x→", 2, TOP - 5); g.fillText("z↓", 2, TOP + 12);
  }
  return {draw};
})();
