#!/usr/bin/env python3
"""The HTML report (--html) in a real browser: headless Chromium loads the page llmp wrote,
takes a screenshot and dumps the DOM it rendered, with a net log of every request.

  check_html.py LLMP SOURCE_DIR WORK_DIR KIND

KIND is scenario (llmp run), sweep, validate, or detector: a control page with an image
from the network and no Content-Security-Policy, which the net-log check must catch (so that
check can fail).  Each kind checks the charts' elements in the DOM and the numbers the text
output prints, that the page has no script and refers to nothing outside itself, and that it
made no request.  Exit 0, 1 on a failed check, 77 (skipped) when Chromium is not installed.
"""
import csv
import html.parser
import io
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree

SKIP = 77
PROBLEMS = []


def problem(msg):
    PROBLEMS.append(msg)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def llmp(args, cwd):
    p = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        problem("%s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def well_formed(page):
    """The page as written: its body parses as XML (every element closed and nested, every
    attribute quoted, no stray `<` or `&`), which a browser would repair silently."""
    with open(page, encoding="utf-8") as f:
        text = f.read()
    body = text.split("<body>", 1)[-1].split("</body>", 1)[0]
    try:
        xml.etree.ElementTree.fromstring("<body>" + body + "</body>")
    except xml.etree.ElementTree.ParseError as e:
        problem("%s is not well formed: %s" % (os.path.basename(page), e))


def load(browser, page, work, png, llmps=True):
    """Loads the page (one llmp wrote, unless not llmps): its rendered DOM (text) and the URLs
    of requests a page initiated."""
    if llmps:
        well_formed(page)
    profile = os.path.join(work, "profile")
    shutil.rmtree(profile, ignore_errors=True)
    netlog = os.path.join(work, "netlog.json")
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage",
            "--user-data-dir=" + profile, "--hide-scrollbars", "--window-size=1040,1400",
            "--log-net-log=" + netlog, "--net-log-capture-mode=Everything",
            "--screenshot=" + png, "--dump-dom", "file://" + os.path.abspath(page)]
    env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=work, XDG_CACHE_HOME=work)  # nothing outside WORK_DIR
    p = subprocess.run(args, capture_output=True, text=True, timeout=90, env=env)
    if p.returncode != 0 or "</html>" not in p.stdout:
        problem("chromium failed (%d) on %s: %s" % (p.returncode, page, p.stderr[-2000:]))
    with open(png, "rb") as f:
        head = f.read(8)
    if head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(png) < 10000:
        problem("no screenshot of %s" % page)
    return p.stdout, page_requests(netlog)


def page_requests(netlog):
    """The URLs of the requests in the net log that a page (an origin) initiated; the
    browser's own (update checks and the like) say `not an origin`."""
    with open(netlog) as f:
        log = json.load(f)
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    for e in log["events"]:
        params = e.get("params") or {}
        if names.get(e["type"]) == "URL_REQUEST_START_JOB" and params.get("initiator", "not an origin") != "not an origin":
            yield params.get("url", "?")


class Dom(html.parser.HTMLParser):
    """The elements (tag, attributes) and the text of a rendered page."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.elements, self.chunks = [], []
        self.parent, self.stack = [], []  # each element's parent (index, -1 at the top); the open ones
        self.cells, self.row = {}, None  # the texts of the cells of each <tr data-reason=R>
        self.feed(text)
        self.text = " ".join(" ".join(self.chunks).split())

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.parent.append(self.stack[-1] if self.stack else -1)
        self.elements.append((tag, attrs))
        if tag not in self.VOID:
            self.stack.append(len(self.elements) - 1)
        if tag == "tr":
            self.row = attrs.get("data-reason")
            if self.row is not None:
                self.cells[self.row] = []
        if tag in ("td", "th") and self.row is not None:
            self.cells[self.row].append("")

    def children(self, i):
        return [self.elements[j] for j, p in enumerate(self.parent) if p == i]

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.chunks.append(data)
        if self.row is not None and self.cells[self.row] and self.stack and \
                self.elements[self.stack[-1]][0] in ("td", "th"):
            self.cells[self.row][-1] += data

    def handle_endtag(self, tag):
        while self.stack:
            if self.elements[self.stack.pop()][0] == tag:
                break

    def count(self, tag, **want):
        return sum(1 for t, a in self.elements
                   if t == tag and all(a.get(k.replace("_", "-")) == v for k, v in want.items()))


def self_contained(dom, what):
    """No script, nothing loaded from outside the document, and a CSP that forbids it."""
    for tag in ("script", "link", "img", "iframe", "object", "embed", "image", "use", "audio", "video"):
        if dom.count(tag):
            problem("%s: the page has <%s>" % (what, tag))
    for tag, attrs in dom.elements:
        for key in ("src", "href", "xlink:href", "srcset", "action"):
            if key in attrs and not attrs[key].startswith("#"):
                problem("%s: <%s %s=%r> refers outside the page" % (what, tag, key, attrs[key]))
        for key, value in attrs.items():
            if key.startswith("on"):
                problem("%s: <%s> has the handler %s" % (what, tag, key))
            if "url(" in (value or "") and "url(#" not in value:
                problem("%s: <%s %s> loads a url()" % (what, tag, key))
    csp = [a.get("content", "") for t, a in dom.elements
           if t == "meta" and a.get("http-equiv", "").lower() == "content-security-policy"]
    if not csp or "default-src 'none'" not in csp[0]:
        problem("%s: no Content-Security-Policy default-src 'none'" % what)


def expect(dom, what, cond, msg):
    if not cond:
        problem("%s: %s" % (what, msg))


def report_time(s):
    """llmp's report_time (report.c): 4 significant digits and a unit."""
    for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if abs(s) >= scale or unit == "ns":
            v = s / scale
            return ("%.0f" % v if unit == "s" and abs(v) >= 1000 else "%.4g" % v) + " " + unit
    return "0 s"


def check_scenario(ll, src, work, browser, png):
    # The file's name carries markup: the page must show it as text.
    name = "q\"<img src=x onerror=alert(1)>'.llmp"
    shutil.copy(os.path.join(src, "examples", "quickstart.llmp"), os.path.join(work, name))
    out = llmp([ll, "run", "--html", "scenario.html", name], work)
    text, requests = load(browser, os.path.join(work, "scenario.html"), work, png)
    dom = Dom(text)
    self_contained(dom, "scenario")
    for chart in ("breakdown", "timeline", "memory", "kernels"):
        expect(dom, "scenario", dom.count("svg", data_chart=chart) == 1, "no %s chart" % chart)
        expect(dom, "scenario", dom.count("table", data_table=chart) == 1, "no table under the %s chart" % chart)
    iteration = next(l.split()[-2] + " " + l.split()[-1] for l in out.splitlines() if l.strip().startswith("iteration"))
    peak = next(l.split()[1] + " " + l.split()[2] for l in out.splitlines() if l.strip().startswith("peak "))
    expect(dom, "scenario", "iteration " + iteration in dom.text, "the iteration time %s is not shown" % iteration)
    expect(dom, "scenario", peak in dom.text, "the peak memory %s is not shown" % peak)
    pp = int(next(w[3:] for l in out.splitlines() for w in l.split() if w.startswith("pp=")))
    for d in range(pp):
        expect(dom, "scenario", "stage %d compute" % d in dom.text, "the timeline has no row for stage %d" % d)
    expect(dom, "scenario", dom.count("rect") > 100, "the timeline has few marks")
    expect(dom, "scenario", name in dom.text, "the file's name is not shown as text")
    return requests


def check_sweep(ll, src, work, browser, png):
    small = os.path.join(src, "tests", "sweep", "small.llmp")
    out = llmp([ll, "sweep", "--no-progress", "--format", "jsonl", "--html", "sweep.html", small], work)
    lines = [json.loads(l) for l in out.splitlines()]
    meta, rows = lines[0], lines[1:]
    text, requests = load(browser, os.path.join(work, "sweep.html"), work, png)
    dom = Dom(text)
    self_contained(dom, "sweep")
    for chart in ("sweep-scatter", "dropped"):
        expect(dom, "sweep", dom.count("svg", data_chart=chart) == 1, "no %s chart" % chart)
    with open(small) as f:  # the first sweep's `vary` lines
        first = f.read().split("\nsweep ")[1]
    axes = [l.split()[1] for l in first.splitlines() if l.strip().startswith("vary ")]
    expect(dom, "sweep", dom.count("svg", data_chart="axis-effect") == len(axes),
           "%d axis charts for %d axes" % (dom.count("svg", data_chart="axis-effect"), len(axes)))
    expect(dom, "sweep", dom.count("circle") > 100, "the scatter has few points")
    expect(dom, "sweep", dom.count("polyline", data_marks="pareto") == 1, "no Pareto front")
    best = report_time(rows[0]["iteration_s"])
    expect(dom, "sweep", best in dom.text, "the best iteration time %s is not shown" % best)
    expect(dom, "sweep", "%d kept" % meta["kept"] in dom.text, "the kept count %d is not shown" % meta["kept"])
    for reason, count in meta["dropped"].items():
        if count:
            expect(dom, "sweep", reason in dom.text, "the drop reason `%s` is not shown" % reason)
    return list(requests) + check_dropped(ll, src, work, browser, png)


def check_dropped(ll, src, work, browser, png):
    """A sweep that drops points for every kind of reason, some more than the page samples: each
    reason's group of marks in the DOM has as many marks as it says, the table beneath gives the
    sweep's count and those marks, the ranked points not kept are drawn, and the reasons whose
    points have no figures (a plan that does not divide) say so."""
    sweep = os.path.join(src, "examples", "sweeps", "llama3_70b_eos.llmp")
    out = llmp([ll, "sweep", "--no-progress", "--format", "json", "--html", "dropped.html", sweep], work)
    doc = json.loads(out)
    text, requests = load(browser, os.path.join(work, "dropped.html"), work, png.replace(".png", "-dropped.png"))
    dom = Dom(text)
    self_contained(dom, "dropped")
    groups = {a["data-dots"]: i for i, (t, a) in enumerate(dom.elements) if t == "g" and "data-dots" in a}
    drawn = {}
    for key, i in groups.items():
        marks = [t for t, a in dom.children(i) if t in ("circle", "path", "rect")]
        drawn[key] = int(dom.elements[i][1]["data-count"])
        expect(dom, "dropped", len(marks) == drawn[key] > 0,
               "group %s says %d marks and has %d" % (key, drawn[key], len(marks)))
    kinds = {"failed a require": 0, "does not fit": 0, "equivalent to another plan": 0}
    for r, (reason, count) in enumerate(doc["dropped"].items()):
        if not count:
            continue
        cells = dom.cells.get(str(r))
        if not cells:
            problem("dropped: no table row for `%s`" % reason)
            continue
        expect(dom, "dropped", cells[0] == reason and cells[2] == str(count),
               "the row of `%s` says %s, not %d" % (reason, cells, count))
        if str(r) in drawn:
            kinds[cells[1]] = kinds.get(cells[1], 0) + 1
            expect(dom, "dropped", cells[3] == str(drawn[str(r)]) and drawn[str(r)] == min(count, 1000),
                   "`%s`: %d points, %s drawn, %d marks" % (reason, count, cells[3], drawn[str(r)]))
        else:
            expect(dom, "dropped", cells[3] == "none: no figures", "`%s` has no marks: %s" % (reason, cells))
    expect(dom, "dropped", all(kinds.values()) and len(kinds) == 3, "not every kind of drop is drawn: %s" % kinds)
    expect(dom, "dropped", any(not str(r) in drawn and c for r, c in enumerate(doc["dropped"].values())),
           "no reason without figures")
    ranked = doc["kept"] - len(doc["rows"])
    cells = dom.cells.get("ranked", [])
    expect(dom, "dropped", cells[2:3] == [str(ranked)] and 0 < drawn.get("ranked", 0) <= min(ranked, 1000),
           "the ranked points not kept: %s, %d marks, %d points" % (cells, drawn.get("ranked", 0), ranked))
    return list(requests)


def check_validate(ll, src, work, browser, png):
    folder = os.path.join(src, "tests", "validation", "scenarios", "h100_weak_scaling")
    out = llmp([ll, "validate", "--no-jit", "--format", "csv", "--html", "validate.html", folder], work)
    rows = list(csv.DictReader(io.StringIO(out)))
    text, requests = load(browser, os.path.join(work, "validate.html"), work, png)
    dom = Dom(text)
    self_contained(dom, "validate")
    expect(dom, "validate", dom.count("svg", data_chart="validate-scatter") == 1, "no scatter")
    expect(dom, "validate", dom.count("polygon") == 2, "not two bands (5 % and 10 %)")
    marks = sum(1 for t, a in dom.elements if "data-point" in a)
    expect(dom, "validate", marks == len(rows) and rows, "%d marks for %d rows" % (marks, len(rows)))
    for r in rows:
        expect(dom, "validate", r["scenario"] in dom.text, "`%s` is not named" % r["scenario"])
        # the CSV rounds to 3 decimals: the page's 2 may round the unrounded value either way
        errs = {"%+.2f %%" % (float(r["error_pct"]) + d) for d in (-0.0005, 0, 0.0005)}
        expect(dom, "validate", any(e in dom.text for e in errs),
               "the error %s of %s is not shown" % (" or ".join(sorted(errs)), r["scenario"]))
    return requests


def check_detector(ll, src, work, browser, png):
    """A page that does load something from the network: the check must see it."""
    page = os.path.join(work, "control.html")
    with open(page, "w") as f:
        f.write("<!DOCTYPE html><html><body><p>%s</p><img src=\"http://127.0.0.1:9/pixel.png\"></body></html>\n"
                % ("control " * 4000))
    text, requests = load(browser, page, work, png, llmps=False)
    if not any("127.0.0.1:9" in u for u in requests):
        problem("the net log shows no request from a page that makes one: the check cannot fail")
    dom = Dom(text)
    before = len(PROBLEMS)
    self_contained(dom, "control")
    if len(PROBLEMS) == before:
        problem("the DOM check passes a page with an <img> from the network")
    del PROBLEMS[before:]
    return []


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    ll, src, work, kind = sys.argv[1:5]
    browser = chromium()
    if not browser:
        print("SKIP: Chromium is not installed (Debian: apt-get install chromium; scripts/bootstrap.sh "
              "installs it): the HTML report is not checked in a browser")
        return SKIP
    work = os.path.join(os.path.abspath(work), kind)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ll = os.path.abspath(ll)
    png = os.path.join(work, kind + ".png")
    check = {"scenario": check_scenario, "sweep": check_sweep, "validate": check_validate,
             "detector": check_detector}[kind]
    requests = list(check(ll, os.path.abspath(src), work, browser, png))
    for url in requests:
        problem("%s: the page requested %s" % (kind, url))
    for p in PROBLEMS:
        print("FAIL:", p)
    if not PROBLEMS:
        print("ok: %s page checked in %s" % (kind, os.path.basename(browser)))
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
