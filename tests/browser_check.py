"""Open the study report and a sample of viewer pages in headless Chromium (``make test-browser``).

Fails (exit 1) on any JavaScript error, on a page that did not finish rendering or rendered
nothing, and on a report without its tables and plots. The study is a copy of STUDY (default
``build/studies/quick``) written into a temporary folder, so the build stays untouched.
``--screenshots DIR`` also saves a PNG of the report and of the first paired M04 view.

    python tests/browser_check.py [--study build/studies/quick] [--build build] [--screenshots docs]
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))          # this checkout's code, not an installed copy

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]
BUDGET_MS = "8000"


def chromium(url: str, profile: Path, *extra: str) -> tuple[str, str]:
    """(stdout, stderr) of one headless Chromium run on ``url`` with a fresh profile folder."""
    args = [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
            f"--virtual-time-budget={BUDGET_MS}", *extra, url]
    p = subprocess.run(args, capture_output=True, text=True, timeout=180)
    return p.stdout, p.stderr


def console_errors(stderr: str) -> list[str]:
    """Console errors Chromium logged for the page (uncaught exceptions, failed script loads)."""
    return [ln for ln in stderr.splitlines() if "CONSOLE" in ln and ("Uncaught" in ln or "Error" in ln)]


def check_dom(name: str, dom: str, stderr: str, *, viewer: bool) -> list[str]:
    problems = [f"{name}: {e}" for e in console_errors(stderr)]
    if not dom.strip():
        return problems + [f"{name}: empty DOM dump"]
    if re.search(r'<html[^>]*\bdata-js-errors="', dom):
        box = re.search(r'<div id="js-errors">(.*?)</div>', dom, re.S)
        problems.append(f"{name}: JavaScript errors: {box.group(1)[:300] if box else '?'}")
    if viewer:
        m = re.search(r'<body[^>]*\bdata-render="(\w+)"', dom)
        rows = re.search(r'<body[^>]*\bdata-rows="(\d+)"', dom)
        if not m or m.group(1) != "ok" or not rows or int(rows.group(1)) == 0:
            problems.append(f"{name}: render state {m.group(1) if m else '?'} with {rows.group(1) if rows else 0} rows")
    else:
        if dom.count("<table") < 5 or dom.count("<img") < 3:
            problems.append(f"{name}: {dom.count('<table')} tables and {dom.count('<img')} images")
    return problems


def sample(index_js: Path) -> tuple[list[str], list[str], str | None]:
    """A few episode ids, a few pairs, and the first M04 pair with a rule encounter."""
    text = index_js.read_text()
    data = json.loads(text[text.index("(") + 1: text.rindex(")")])
    ids = [r[0] for r in data["rows"]]
    pairs = list(data["pairs"])
    cond = {r[0]: r[data["fields"].index("condition")] for r in data["rows"]}
    m04 = next((p for p, v in data["pairs"].items() if cond[p.split(",")[1]] == "m04" and v["first_encounter"]
                and v["divergence"]), None)
    picked = [ids[0], ids[len(ids) // 2], ids[-1]]
    return picked, pairs[:2] + ([m04] if m04 else []), m04


def small_png(path: Path) -> None:
    """Quantize a screenshot to 128 colours so it stays small in the repository."""
    from PIL import Image

    Image.open(path).convert("RGB").quantize(128).save(path, optimize=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", default="build/studies/quick")
    ap.add_argument("--build", default=None, help="build folder with the suites and saves (default: the study's)")
    ap.add_argument("--screenshots", default=None)
    ap.add_argument("--map-limit", type=int, default=None)
    a = ap.parse_args()
    if not CHROMIUM.is_file():
        print(f"error: {CHROMIUM} is missing (apt-get install -y chromium)", file=sys.stderr)
        return 2
    src = Path(a.study) / "results.sqlite"
    if not src.is_file():
        print(f"error: no study store at {src} (run `mcbuild study run studies/quick.yaml`)", file=sys.stderr)
        return 2
    from mcbuild.runtime.study.report import write_report

    build = Path(a.build) if a.build else Path(a.study).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="mcbuild-browser-") as tmp:
        study = Path(tmp) / "study"
        study.mkdir()
        shutil.copy(src, study / "results.sqlite")
        res = write_report(study, build=build, map_limit=a.map_limit)
        v = res.viewer
        print(f"viewer: {v.episodes} episodes, {v.replayed} paths replayed, {v.bytes / 1e6:.1f} MB, {v.seconds:.1f} s")
        viewer = res.out_dir / "viewer" / "index.html"
        ids, pairs, m04 = sample(res.out_dir / "viewer" / "data" / "index.js")
        pages = [("report", res.html.as_uri(), False), ("browser", viewer.as_uri(), True),
                 ("browser filtered", viewer.as_uri() + "#condition=m04", True)]
        pages += [(f"episode {i}", f"{viewer.as_uri()}#ep={i}", True) for i in ids]
        pages += [(f"pair {p}", f"{viewer.as_uri()}#pair={p}", True) for p in pairs]
        problems: list[str] = []
        for n, (name, url, is_viewer) in enumerate(pages):
            dom, err = chromium(url, Path(tmp) / f"profile{n}", "--dump-dom")
            found = check_dom(name, dom, err, viewer=is_viewer)
            problems += found
            print(("FAIL " if found else "ok   ") + name)
        if a.screenshots:
            out = Path(a.screenshots)
            out.mkdir(parents=True, exist_ok=True)
            shots = [("report.png", res.html.as_uri(), "1280,2400")]
            if m04:
                shots.append(("viewer-pair-m04.png", f"{viewer.as_uri()}#pair={m04}", "1500,1300"))
            for n, (fname, url, size) in enumerate(shots):
                chromium(url, Path(tmp) / f"shot{n}", f"--screenshot={out / fname}", f"--window-size={size}")
                small_png(out / fname)
                print(f"screenshot {out / fname}")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{len(pages)} pages, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
