"""The live view in headless Chromium (``make test-browser``): a scripted study runs while
``mcbuild study watch`` serves its page, and the page must follow it.

Checks, failing (exit 1) on any JavaScript error: the page says the study is running; episodes in
flight are listed with their last actions; the count of stored episodes grows and finished episodes
move to "Just finished"; an episode opened while it plays shows its map with a path that grows and
an action list that grows; when the study ends the page says so; the study itself finishes normally
beside the watcher (which never takes the store's lock) and leaves no live logs behind.
``--screenshots DIR`` saves ``watch.png`` with an episode open.

    python tests/browser_watch.py [--build build] [--screenshots docs]
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from browser_check import CHROMIUM, FLAGS, small_png

from mcbuild.runtime.study.store.results import Store

STUDY = """name: watched
worlds: [plains-1]
conditions: [vanilla, m01, m02, m03, m04, m05, m06]
tasks: [iron_armor, diamond, enchantment]
configurations: [vanilla-planner, adaptive-planner]
repetitions: 4
workers: 1
concurrency: 3
"""
WAIT_MS = 240_000            # a loaded machine: the study's first episodes may take a while


def mcbuild(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mcbuild", *args], cwd=ROOT, **kw)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--screenshots", default=None)
    a = ap.parse_args()
    if not CHROMIUM.is_file():
        print(f"error: {CHROMIUM} is missing (apt-get install -y chromium)", file=sys.stderr)
        return 2
    if not (Path(a.build) / "worlds" / "plains-1" / "m05" / "level.dat").is_file():
        print(f"error: no built worlds in {a.build} (mcbuild compile --all && mcbuild build worlds)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mcbuild-watch-") as tmp:
        config, study = Path(tmp) / "watched.yaml", Path(tmp) / "study"
        config.write_text(STUDY)
        Store.open(study).close()       # an empty store: the page is open before the run starts
        run = watch = None
        try:
            watch = mcbuild("study", "watch", str(study), "--port", "0", "--build", a.build,
                            stderr=subprocess.PIPE, text=True)
            url = re.search(r"at (http://\S+) ", watch.stderr.readline()).group(1)
            start = lambda: mcbuild("study", "run", str(config), "--out", str(study), "--build", a.build,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            problems, run = check(url, start, a.screenshots)
            out, err = run.communicate(timeout=WAIT_MS / 1000)
            if run.returncode != 0:
                problems.append(f"the study beside the watcher exited {run.returncode}: {err.strip()[-300:]}")
            if (study / "live").exists():
                problems.append("the run left its live logs behind")
        finally:
            for p in (run, watch):
                if p is not None and p.poll() is None:
                    p.terminate()
                    p.wait(timeout=60)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"live view: {len(problems)} problems")
    return 1 if problems else 0


def check(url: str, start, shots: str | None) -> tuple[list[str], subprocess.Popen]:
    from playwright.sync_api import Error, sync_playwright

    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))
        page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
        step = "opening the page"
        run = None
        try:
            page.goto(url)
            page.wait_for_function("document.body.dataset.state === 'ended'", timeout=WAIT_MS)  # nothing runs yet
            run = start()
            step = "the page says the study is running"
            page.wait_for_function("document.body.dataset.state === 'running'", timeout=WAIT_MS)
            step = "an episode in flight with its last actions"
            page.wait_for_selector("#inflight tr[data-id] td div", timeout=WAIT_MS)
            first_stored = int(page.evaluate("document.body.dataset.stored"))
            eid = page.evaluate("document.querySelector('#inflight tr[data-id]').dataset.id")
            page.click(f"#inflight tr[data-id='{eid}']")
            step = f"episode {eid} opened: its actions"
            page.wait_for_function("+document.getElementById('episode').dataset.steps >= 1", timeout=WAIT_MS)
            step = f"episode {eid} opened: its map"
            page.wait_for_function("document.querySelector('#map canvas.map')?.dataset.scale", timeout=WAIT_MS)
            step = f"episode {eid}: more actions"
            steps = int(page.evaluate("+document.getElementById('episode').dataset.steps"))
            page.wait_for_function(f"+document.getElementById('episode').dataset.steps > {steps} || "
                                   "document.getElementById('episode').dataset.done", timeout=WAIT_MS)
            grown = int(page.evaluate("+document.getElementById('episode').dataset.steps"))
            rows = page.evaluate("document.querySelectorAll('#actions tr').length - 1")
            if rows != grown:
                problems.append(f"episode {eid}: {grown} actions reported, {rows} listed")
            if grown <= steps and not page.evaluate("document.getElementById('episode').dataset.done"):
                problems.append(f"episode {eid}: its action list did not grow")
            if shots:
                out = Path(shots)
                out.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out / "watch.png"), full_page=True)
                small_png(out / "watch.png")
                print(f"screenshot {out / 'watch.png'}")
            step = "more episodes stored"
            page.wait_for_function(f"+document.body.dataset.stored > {first_stored}", timeout=WAIT_MS)
            step = "episodes seen finishing"
            page.wait_for_selector("#finished li[data-id]", timeout=WAIT_MS)
            step = "the page says the study ended"
            page.wait_for_function("document.body.dataset.state === 'ended'", timeout=WAIT_MS * 4)
            status = page.inner_text("#status")
            if "the study ended" not in status or "every planned episode is stored" not in status:
                problems.append(f"the page's status after the run: {status!r}")
            if page.evaluate("document.querySelectorAll('#inflight tr[data-id]').length"):
                problems.append("episodes still listed in flight after the study ended")
        except Error as exc:
            problems.append(f"{step}: {str(exc).splitlines()[0]}")
        errors = page.evaluate("document.documentElement.dataset.jsErrors || ''")
        if errors:
            problems.append(f"{errors} JavaScript errors on the page")
        browser.close()
    return problems, run if run is not None else start()


if __name__ == "__main__":
    sys.exit(main())
