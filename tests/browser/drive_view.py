#!/usr/bin/python3
"""Drives a `tasklens view` page in headless Chromium through chromedriver (WebDriver, the
Debian packages chromium and chromium-driver), with the Python standard library only.

    drive_view.py PAGE.html --shots DIR [--name NAME] [--text STRING]... [--view-shots]
                  [--timing-only]

Opens the page (a fresh user-data dir), waits until the page's script has drawn every view
(body[data-ready]), then:
  * records per view whether it was drawn and what it contains (rows, curves, slices, bars...),
  * sorts the profile table by clicking its "work" header, then its "site" header,
  * expands a collapsed node of the construct hierarchy by clicking its toggle,
  * clicks a timeline slice and reports what got highlighted, then zooms the timeline by a drag,
  * on a compare page, reads the differential view (rows, inflated rows, or the reason it has
    none) and sorts its site table by clicking the "ratio" header twice,
  * looks for each --text literally in the page's visible text,
  * saves a full-page screenshot into --shots, one of the differential view when there is one
    (and one per view with --view-shots),
  * collects the browser's console messages and any alert/confirm/prompt dialog.
Prints one JSON object on stdout; the C++ test (tests/e2e/e2e_view_test.cpp) judges it. Exit code 0
when the driving worked (whatever the page did), 2 when the browser could not be driven.
"""
import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

CHROMIUM = next((p for p in ("/usr/lib/chromium/chromium", "/usr/bin/chromium") if os.path.exists(p)),
                "chromium")
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


class DriverError(Exception):
    pass


class WebDriver:
    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port
        self.session = None

    def call(self, method, path, body=None, timeout=60):
        data = None if body is None else json.dumps(body).encode()
        if self.session is None or path in ("/status", "/session"):
            url = self.base + path
        else:
            url = self.base + "/session/" + self.session + path
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read().decode() or "{}").get("value")
        except urllib.error.HTTPError as e:
            payload = json.loads(e.read().decode() or "{}").get("value", {})
            raise DriverError("%s %s: %s: %s" % (method, path, payload.get("error"),
                                                 str(payload.get("message", ""))[:300]))

    def execute(self, script, *args):
        return self.call("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        found = self.call("POST", "/elements", {"using": "css selector", "value": css})
        return [list(e.values())[0] for e in found]

    def click(self, element):
        self.call("POST", "/element/%s/click" % element, {})

    def alert_text(self):
        try:
            return self.call("GET", "/alert/text")
        except DriverError as e:
            if "no such alert" in str(e):
                return None
            raise


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def save_png(b64, path):
    with open(path, "wb") as f:
        f.write(base64.b64decode(b64))


# What each view holds, counted in the DOM (per run column).
INSPECT = r"""
const out = {};
for (const s of document.querySelectorAll('section.view')) {
  const q = (sel) => s.querySelectorAll(sel).length;
  out[s.id] = {
    rendered: s.getAttribute('data-rendered'),
    text_length: s.innerText.length,
    errors: q('.error'),
    unavailable: q('.note') ,
    table_rows: q('table.grid tbody tr'),
    curves: q('polyline.curve'),
    steps: q('ol.steps li'),
    running_paths: q('path.running'),
    ready_paths: q('path.ready'),
    slices: q('rect.slice'),
    tree_rows: q('.tree .tree-row:not(.head)'),
    task_types: q('.type'),
    hist_bars: q('svg.hist rect'),
    bar_rows: q('.bars .row'),
    bar_segments: q('.bars .stack > div'),
    columns: q('.cols > .col'),
  };
}
return {views: out, ready: document.body.getAttribute('data-ready'),
        ready_ms: Number(document.body.getAttribute('data-ready-ms')),
        scripts: document.scripts.length, images: document.images.length,
        title: document.title};
"""

COLUMN = r"""
const sec = document.querySelector('#view-profile .col');
const head = [...sec.querySelectorAll('thead th')].map((th) => th.textContent);
const i = head.indexOf(arguments[0]);
return [...sec.querySelectorAll('tbody tr')].map((tr) => tr.children[i].textContent);
"""

SORT_STATE = r"""
return [...document.querySelectorAll('#view-profile .col')[0].querySelectorAll('thead th')]
  .map((th) => [th.textContent, th.getAttribute('aria-sort')]);
"""

DIFF_STATE = r"""
const v = document.querySelector('#view-diff');
const q = (sel) => v.querySelectorAll(sel).length;
const reason = v.querySelector('.diff-reason');
return {rendered: v.getAttribute('data-rendered'), columns: q('.cols > .col'),
        site_rows: q('.diff-sites tbody tr'), fragment_rows: q('.diff-fragments tbody tr'),
        inflated_rows: q('.diff-table tr.inflated'), notes: q('.diff-notes li'),
        summary_rows: q('.diff-summary tbody tr'), reason: reason ? reason.textContent : null,
        headers: [...v.querySelectorAll('.diff-sites thead th')].map((th) => th.textContent),
        errors: q('.error'), text: v.innerText.slice(0, 4000)};
"""

DIFF_COLUMN = r"""
return [...document.querySelectorAll('#view-diff .diff-sites tbody tr')]
  .map((tr) => tr.children[arguments[0]].textContent);
"""


def drive(args, wd, result):
    url = "file://" + os.path.abspath(args.page)
    t0 = time.time()
    wd.call("POST", "/url", {"url": url}, timeout=120)
    deadline = time.time() + 60
    while True:
        alert = wd.alert_text()
        if alert is not None:
            result["dialogs"].append(alert)
            wd.call("POST", "/alert/dismiss", {})
            continue
        if wd.execute("return document.body && document.body.getAttribute('data-ready')") == "true":
            break
        if time.time() > deadline:
            raise DriverError("the page never finished drawing (body[data-ready])")
        time.sleep(0.05)
    result["wall_open_seconds"] = time.time() - t0
    result["timing"] = wd.execute(
        "const n = performance.getEntriesByType('navigation')[0];"
        "return {load_end: n ? n.loadEventEnd : null, dom_content_loaded: n ? n.domContentLoadedEventEnd : null,"
        " ready: Number(document.body.getAttribute('data-ready-ms')),"
        " transfer_size: n ? n.decodedBodySize : null};")
    if args.timing_only:
        return
    result["inspect"] = wd.execute(INSPECT)

    # Sort the profile by work (numbers: largest first), then by site (names: A to Z).
    sort = {}
    for column, clicks in (("work", 1), ("site", 2)):
        headers = wd.find("#view-profile .col:first-child th[data-col='%s']" % column)
        if not headers:
            raise DriverError("no '%s' header in the profile table" % column)
        entry = {"before": wd.execute(COLUMN, column)}
        for k in range(clicks):
            wd.click(headers[0])
            entry["after" if k == 0 else "after_second"] = wd.execute(COLUMN, column)
            entry["state" if k == 0 else "state_second"] = wd.execute(SORT_STATE)
        sort[column] = entry
    result["sort"] = sort

    # Expand the first collapsed node with children in the construct hierarchy.
    count = "return document.querySelectorAll('#view-hierarchy .col:first-child .tree .tree-row:not(.head)').length"
    toggles = wd.find("#view-hierarchy .col:first-child .toggle[aria-expanded='false']:not(.leaf)")
    expand = {"before": wd.execute(count), "collapsed_toggles": len(toggles)}
    if toggles:
        wd.click(toggles[0])
        expand["after"] = wd.execute(count)
        expand["expanded"] = wd.execute(
            "return document.querySelectorAll('#view-hierarchy .col:first-child .toggle[aria-expanded=\"true\"]').length")
    result["expand"] = expand

    # Click the longest timeline slice: its construct is highlighted in the hierarchy.
    slices = wd.find("#view-timeline .col:first-child rect.slice")
    click = {"slices": len(slices)}
    if slices:
        widest = wd.execute(
            "const r = [...document.querySelectorAll('#view-timeline .col:first-child rect.slice')];"
            "let best = 0; r.forEach((x, i) => { if (+x.getAttribute('width') > +r[best].getAttribute('width')) best = i; });"
            "return best;")
        pick = "document.querySelectorAll('#view-timeline .col:first-child rect.slice')[%d]" % widest
        try:
            wd.click(slices[widest])
            click["how"] = "webdriver"
        except DriverError as e:  # an SVG shape may be reported as not interactable
            wd.execute(pick + ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
            click["how"] = "script (%s)" % str(e)[:80]
        click["highlighted_tree_rows"] = wd.execute(
            "return document.querySelectorAll('#view-hierarchy .tree-row.hl').length")
        click["highlighted_profile_rows"] = wd.execute(
            "return document.querySelectorAll('#view-profile tr.hl').length")
        click["slice_agg"] = wd.execute("return " + pick + ".getAttribute('data-agg')")
        click["highlighted_agg"] = wd.execute(
            "const r = document.querySelector('#view-hierarchy .tree-row.hl'); return r ? r.getAttribute('data-agg') : null")
    result["timeline_click"] = click

    # Zoom the timeline by dragging across 30% .. 60% of its width (pointer actions).
    charts = wd.find("#view-timeline .col:first-child svg.timeline")
    zoom = {}
    if charts:
        box = wd.execute(
            "const s = document.querySelector('#view-timeline .col:first-child svg.timeline');"
            "s.scrollIntoView({block: 'center'}); const r = s.getBoundingClientRect();"
            "return {left: r.left, top: r.top, width: r.width};")
        y = int(box["top"] + 6)  # the band above the rows: no slice under the pointer
        x0, x1 = int(box["left"] + box["width"] * 0.3), int(box["left"] + box["width"] * 0.6)
        wd.call("POST", "/actions", {"actions": [{"type": "pointer", "id": "mouse",
            "parameters": {"pointerType": "mouse"}, "actions": [
                {"type": "pointerMove", "origin": "viewport", "x": x0, "y": y},
                {"type": "pointerDown", "button": 0},
                {"type": "pointerMove", "origin": "viewport", "x": x1, "y": y, "duration": 100},
                {"type": "pointerUp", "button": 0}]}]})
        wd.call("DELETE", "/actions")
        zoom["note"] = wd.execute(
            "return document.querySelector('#view-timeline .col:first-child .toolbar .note').textContent")
        zoom["axis_first"] = wd.execute(
            "return document.querySelector('#view-timeline .col:first-child svg.timeline .axis text').textContent")
        for b in wd.find("#view-timeline .col:first-child .zoom-reset"):
            wd.click(b)
        zoom["note_after_reset"] = wd.execute(
            "return document.querySelector('#view-timeline .col:first-child .toolbar .note').textContent")
    result["timeline_zoom"] = zoom

    # A compare page's differential view: its rows, its inflated rows, or the reason it has none;
    # then its site table sorted by a real click on the sort metric's "ratio" header (numbers:
    # largest first), and a second click (smallest first).
    if wd.find("#view-diff"):
        result["diff"] = wd.execute(DIFF_STATE)
        headers = wd.find("#view-diff .diff-sites th.sortable")
        titles = [wd.call("GET", "/element/%s/text" % h) for h in headers]
        ratio = next((i for i, t in enumerate(titles) if t.endswith("ratio")), None)
        if ratio is not None:
            entry = {"column": titles[ratio], "before": wd.execute(DIFF_COLUMN, ratio)}
            # Below the sticky page header, so that the click lands on the header cell.
            wd.execute("document.querySelectorAll('#view-diff .diff-sites th.sortable')"
                       "[arguments[0]].scrollIntoView({block: 'center'})", ratio)
            wd.click(headers[ratio])
            entry["after"] = wd.execute(DIFF_COLUMN, ratio)
            wd.click(headers[ratio])
            entry["after_second"] = wd.execute(DIFF_COLUMN, ratio)
            entry["units_after"] = wd.execute(DIFF_COLUMN, 0)
            result["diff_sort"] = entry

    body_text = wd.execute("return document.body.innerText")
    result["texts"] = {t: (t in body_text) for t in args.text}

    # Screenshots: the whole page (the window made as tall as the page), then each view.
    os.makedirs(args.shots, exist_ok=True)
    wd.execute("window.scrollTo(0, 0)")
    height = min(int(wd.execute("return document.documentElement.scrollHeight")), 12000)
    wd.call("POST", "/window/rect", {"width": 1400, "height": height})
    save_png(wd.call("GET", "/screenshot"), os.path.join(args.shots, args.name + "-page.png"))
    shots = [args.name + "-page.png"]
    views = wd.find("section.view") if args.view_shots else wd.find("#view-diff")
    for view in views:
        vid = wd.call("GET", "/element/%s/attribute/id" % view)
        name = "%s-%s.png" % (args.name, vid)
        save_png(wd.call("GET", "/element/%s/screenshot" % view), os.path.join(args.shots, name))
        shots.append(name)
    result["screenshots"] = shots


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--shots", default=".")
    ap.add_argument("--name", default="view")
    ap.add_argument("--text", action="append", default=[])
    ap.add_argument("--view-shots", action="store_true", help="also a screenshot of each view")
    ap.add_argument("--timing-only", action="store_true")
    args = ap.parse_args()

    result = {"console": [], "dialogs": [], "driver_error": None}
    profile = tempfile.mkdtemp(prefix="tasklens-chromium-")
    port = free_port()
    driver = subprocess.Popen([DRIVER, "--port=%d" % port], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    wd = WebDriver(port)
    code = 0
    try:
        for _ in range(200):
            try:
                if wd.call("GET", "/status", timeout=2).get("ready"):
                    break
            except (OSError, DriverError):
                pass
            time.sleep(0.05)
        caps = {"browserName": "chrome", "unhandledPromptBehavior": "ignore",
                "goog:loggingPrefs": {"browser": "ALL"},
                "goog:chromeOptions": {"binary": CHROMIUM, "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile,
                    "--window-size=1400,1000", "--hide-scrollbars"]}}
        created = wd.call("POST", "/session", {"capabilities": {"alwaysMatch": caps}}, timeout=120)
        wd.session = created["sessionId"]
        try:
            drive(args, wd, result)
        finally:
            alert = wd.alert_text()
            if alert is not None:
                result["dialogs"].append(alert)
                wd.call("POST", "/alert/dismiss", {})
            try:
                logs = wd.call("POST", "/se/log", {"type": "browser"})
            except DriverError:
                logs = wd.call("POST", "/log", {"type": "browser"})
            result["console"] = [{"level": m.get("level"), "message": m.get("message")} for m in logs or []]
            wd.call("DELETE", "")
    except (DriverError, OSError, KeyError) as e:
        result["driver_error"] = str(e)
        code = 2
    finally:
        driver.terminate()
        try:
            driver.wait(10)
        except subprocess.TimeoutExpired:
            driver.kill()
        shutil.rmtree(profile, ignore_errors=True)
    print(json.dumps(result))
    return code


if __name__ == "__main__":
    sys.exit(main())
