"""Open the study report and a sample of viewer pages in headless Chromium (``make test-browser``).

Chromium is driven through Playwright (the system's ``/usr/bin/chromium``; nothing is downloaded).
Fails (exit 1) on any JavaScript error, on a page that did not finish rendering or rendered
nothing, on a report without its tables and plots or with a plot away from its table, and when
the viewer's interactions do not work: searching and sorting the episode index, zooming
(wheel, buttons) and panning (drag) a map, the paired view's maps moving together, and the
inventory chart's axes. The study is a copy of STUDY (default ``build/studies/quick``) written
into a temporary folder, so the build stays untouched. ``--screenshots DIR`` also saves a PNG of
the report, of the first paired M04 view and of that view's two maps.

    python tests/browser_check.py [--study build/studies/quick] [--build build] [--screenshots docs]
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))          # this checkout's code, not an installed copy

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--hide-scrollbars"]
TIMEOUT_MS = 20000


class Page:
    """One page opened in the shared browser, with the JavaScript errors it raised."""

    def __init__(self, browser, url: str, size: tuple[int, int] = (1500, 1300)):
        self.errors: list[str] = []
        self.p = browser.new_page(viewport={"width": size[0], "height": size[1]})
        self.p.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        self.p.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        self.p.goto(url)

    def rendered(self) -> str:
        """Wait for the viewer to finish (``<body data-render>`` leaves ``loading``); returns the state."""
        self.p.wait_for_function("document.body.dataset.render && document.body.dataset.render !== 'loading'",
                                 timeout=TIMEOUT_MS)
        return self.p.evaluate("document.body.dataset.render")

    def js(self, expr: str):
        return self.p.evaluate(expr)


def check_report(page: Page) -> list[str]:
    """Tables and plots are there, and every plot sits in a section beside a table."""
    n_tables, n_imgs = page.js("document.querySelectorAll('table').length"), page.js("document.images.length")
    if n_tables < 5 or n_imgs < 3:
        return [f"{n_tables} tables and {n_imgs} images"]
    problems = check_report_index(page)
    alone = page.js("[...document.querySelectorAll('figure')].filter(f => !f.closest('section.with-plot') || "
                    "!f.closest('section.with-plot').querySelector('table, .omit')).map(f => f.id)")
    return problems + [f"plot {f} is not beside a table" for f in alone]


def check_report_index(page: Page) -> list[str]:
    """The report's own episode list: search hides the rows that do not match; a header click sorts."""
    page.js("document.querySelector('#episodes').closest('details').open = true")
    page.p.fill("#ep-search", "m04")
    visible = page.js("[...document.querySelectorAll('#episodes tbody tr')].filter(r => !r.hidden).map(r => r.textContent.toLowerCase())")
    problems = [] if visible and all("m04" in r for r in visible) else [f"report index search 'm04' shows {len(visible)} rows"]
    page.p.fill("#ep-search", "")
    page.p.click("#episodes th:nth-child(8)")
    acts = page.js("[...document.querySelectorAll('#episodes tbody tr')].map(r => +r.cells[7].textContent)")
    return problems + ([] if acts == sorted(acts) else ["report index did not sort by Actions"])


def check_index(page: Page) -> list[str]:
    """Search narrows the index to matching rows; a header click sorts, a second reverses."""
    problems = []
    total = page.js("document.querySelectorAll('table.eps tbody tr').length")
    page.p.fill("#search", "m04")
    rows = page.js("[...document.querySelectorAll('table.eps tbody tr')].map(r => r.innerText.toLowerCase())")
    if not rows or len(rows) >= total or not all("m04" in r for r in rows):
        problems.append(f"search 'm04' left {len(rows)} of {total} rows, not all matching")
    page.p.fill("#search", "")
    col = "[...document.querySelectorAll('table.eps tbody td.c-actions')].map(td => +td.innerText)"
    page.p.click("th[data-sort=actions] button")
    up = page.js(col)
    page.p.click("th[data-sort=actions] button")
    down = page.js(col)
    if up != sorted(up) or down != sorted(down, reverse=True) or up == down:
        problems.append("sorting by Actions did not order the rows up, then down")
    if "sort=actions" not in page.js("location.hash"):
        problems.append("the sort order is not kept in the URL")
    return problems


def view(page: Page, n: int = 0) -> dict:
    return page.js(f"(({{...document.querySelectorAll('canvas.map')[{n}].dataset}}))")


def check_map(page: Page, paired: bool) -> list[str]:
    """Wheel zooms in, drag pans, "whole map" zooms out; a pair's two maps keep one view."""
    if not page.js("document.querySelector('canvas.map') !== null"):
        return []                       # no map for this world or episode: the page says why
    page.p.wait_for_function("document.querySelector('canvas.map').dataset.scale", timeout=TIMEOUT_MS)
    problems, before = [], view(page)
    page.p.locator("canvas.map").first.scroll_into_view_if_needed()
    box = page.p.locator("canvas.map").first.bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.p.mouse.move(cx, cy)
    page.p.mouse.wheel(0, -300)
    zoomed = view(page)
    if not float(zoomed["scale"]) > float(before["scale"]):
        problems.append(f"wheel did not zoom in ({before['scale']} -> {zoomed['scale']})")
    page.p.mouse.down()
    page.p.mouse.move(cx + 60, cy + 40, steps=4)
    page.p.mouse.up()
    panned = view(page)
    if panned["cx"] == zoomed["cx"] or panned["cz"] == zoomed["cz"]:
        problems.append("drag did not pan the map")
    page.p.locator("button[data-fit=map]").first.click()
    if not float(view(page)["scale"]) < float(panned["scale"]):
        problems.append("'whole map' did not zoom out")
    if paired and view(page, 0) != view(page, 1):
        problems.append("the paired maps do not share their view")
    return problems


def check_inventory(page: Page) -> list[str]:
    if not page.js("document.querySelector('svg.inv') !== null"):
        return []
    ticks = page.js("[document.querySelectorAll('svg.inv .y-axis text').length, "
                    "document.querySelectorAll('svg.inv .x-axis text').length]")
    return [] if min(ticks) >= 3 else [f"inventory chart axes have {ticks} labels (y, x)"]


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
    from mcbuild.runtime.study.viewer import write_viewer

    build = Path(a.build) if a.build else Path(a.study).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="mcbuild-browser-") as tmp:
        study = Path(tmp) / "study"
        study.mkdir()
        shutil.copy(src, study / "results.sqlite")
        res = write_report(study, build=build, map_limit=a.map_limit, viewer=write_viewer)
        v = res.viewer
        print(f"viewer: {v.episodes} episodes, {v.replayed} paths replayed, {v.bytes / 1e6:.1f} MB, {v.seconds:.1f} s")
        viewer = res.out_dir / "viewer" / "index.html"
        ids, pairs, m04 = sample(res.out_dir / "viewer" / "data" / "index.js")
        pages = [("report", res.html.as_uri()), ("browser", viewer.as_uri()),
                 ("browser filtered", viewer.as_uri() + "#condition=m04")]
        pages += [(f"episode {i}", f"{viewer.as_uri()}#ep={i}") for i in ids]
        pages += [(f"pair {p}", f"{viewer.as_uri()}#pair={p}") for p in pairs]
        problems = run_pages(pages, a.screenshots, viewer, m04, res.html)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{len(pages)} pages, {len(problems)} problems")
    return 1 if problems else 0


def run_pages(pages: list[tuple[str, str]], shots: str | None, viewer: Path, m04: str | None, report: Path) -> list[str]:
    """Open and check each page in one headless Chromium; save the screenshots."""
    from playwright.sync_api import Error, sync_playwright

    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        for name, url in pages:
            page = Page(browser, url)
            try:
                found = check_page(name, page)
            except Error as exc:
                found = [str(exc).splitlines()[0]]
            found = [f"{name}: {x}" for x in page.errors + found]
            problems += found
            print(("FAIL " if found else "ok   ") + name)
            page.p.close()
        if shots:
            out = Path(shots)
            out.mkdir(parents=True, exist_ok=True)
            todo = [("report.png", report.as_uri(), (1280, 2400), None)]
            if m04:
                pair = f"{viewer.as_uri()}#pair={m04}"
                todo += [("viewer-pair-m04.png", pair, (1500, 1300), None),
                         ("viewer-maps-m04.png", pair, (1500, 1300), "div.side:has(canvas.map)")]
            for fname, url, size, part in todo:
                page = Page(browser, url, size)
                if "#" in url:
                    page.rendered()
                    page.p.wait_for_function("document.querySelector('canvas.map')?.dataset.scale", timeout=TIMEOUT_MS)
                (page.p.locator(part).first if part else page.p).screenshot(path=str(out / fname))
                small_png(out / fname)
                print(f"screenshot {out / fname}")
                page.p.close()
        browser.close()
    return problems


def check_page(name: str, page: Page) -> list[str]:
    if name == "report":
        return check_report(page)
    state, rows = page.rendered(), page.js("+document.body.dataset.rows")
    if state != "ok" or not rows:
        return [f"render state {state} with {rows} rows"]
    if name == "browser":
        return check_index(page)
    if name.startswith("episode"):
        return check_inventory(page) + check_map(page, paired=False)
    if name.startswith("pair"):
        return check_map(page, paired=True)
    return []


if __name__ == "__main__":
    sys.exit(main())
