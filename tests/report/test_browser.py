"""The HTML report in a real browser: opened from disk with the network off.

Must show: no console errors, every chart drawn with a non-empty box, a click on a run
shows its trajectory with violations marked, injected markup never runs, planted secrets
never reach the page, and the τ-bench gpt-4o airline report renders.
"""

from __future__ import annotations

import base64
import json

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.report import render_html

from ..conftest import TAU_AIRLINE, need
from ._build import PAYLOAD, SECRETS, full_report, tau_runs

PROBLEM_LEVELS = {"error", "warning"}


def open_page(browser, path):
    """Load ``path`` from disk, offline, in a fresh document; return the load's own events."""
    browser.events.clear()
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable")
    browser.send("Network.emulateNetworkConditions", offline=True, latency=0, downloadThroughput=-1,
                 uploadThroughput=-1)
    browser.send("Page.navigate", url=path.resolve().as_uri())
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("document.readyState") == "complete"


def problems(browser):
    """Console errors and warnings, uncaught exceptions, and CSP or load failures, as text."""
    out = []
    for e in browser.events:
        p = e["params"]
        if e["method"] == "Runtime.exceptionThrown":
            out.append(p["exceptionDetails"].get("text", "exception"))
        elif e["method"] == "Runtime.consoleAPICalled" and p["type"] in ("error", "warning", "assert"):
            out.append(" ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
        elif e["method"] == "Log.entryAdded" and p["entry"]["level"] in PROBLEM_LEVELS:
            out.append(p["entry"]["text"])
        elif e["method"] == "Network.loadingFailed":
            out.append(f"load failed: {p.get('errorText')}")
    return out


def requests(browser):
    return [e["params"]["request"]["url"] for e in browser.events if e["method"] == "Network.requestWillBeSent"]


def chart_boxes(browser):
    return browser.evaluate("""Array.from(document.querySelectorAll('svg.chart')).map(function (s) {
        var b = s.getBBox(), r = s.getBoundingClientRect();
        return {chart: s.getAttribute('data-chart'), w: b.width, h: b.height, sw: r.width, sh: r.height,
                marks: s.querySelectorAll('rect, circle, line, path').length};
    })""")


def screenshot(browser, path, *, full=False):
    params = {"format": "png"}
    if full:
        params["captureBeyondViewport"] = True
        size = browser.send("Page.getLayoutMetrics")["cssContentSize"]
        params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 12000), "scale": 1}
    path.write_bytes(base64.b64decode(browser.send("Page.captureScreenshot", **params)["data"]))
    return path


def click(browser, selector):
    """A real mouse click at the centre of the element (scrolled into view first)."""
    box = browser.evaluate(f"""(function () {{ var e = document.querySelector({json.dumps(selector)});
        e.scrollIntoView({{block: 'center'}}); var r = e.getBoundingClientRect();
        return {{x: r.left + r.width / 2, y: r.top + r.height / 2}}; }})()""")
    for kind in ("mousePressed", "mouseReleased"):
        browser.send("Input.dispatchMouseEvent", type=kind, x=box["x"], y=box["y"], button="left", clickCount=1)


@pytest.mark.slow
def test_every_section_renders_and_hostile_runs_stay_inert(chromium, tmp_path, artifacts):
    runs = tau_runs(need(TAU_AIRLINE))
    data, bad, bad_index = full_report(runs)
    html = render_html(data)
    leaked = [s for s in SECRETS if s in html]  # a list, so a failure prints the secret, not a diff of the page
    assert leaked == []
    path = tmp_path / "full.html"
    path.write_text(html, encoding="utf-8")
    open_page(chromium, path)
    title = chromium.evaluate("document.title")
    assert title == "fluke report <script>document.title='pwned'</script>"  # shown as text, never run

    # Only the file itself was fetched: no fonts, scripts or images from anywhere.
    assert requests(chromium) == [path.resolve().as_uri()]
    boxes = chart_boxes(chromium)
    expected = {
        "paired-0",
        "leaderboard",
        "suite-board-0",
        "luck",
        "contrasts",
        "comparison",
        "null-calibration",
        "boundary-0",
        "calibration",
    }
    assert {b["chart"] for b in boxes} == expected
    for b in boxes:
        assert b["w"] > 100 and b["h"] > 20 and b["sw"] > 100 and b["marks"] > 3, b
    assert chromium.evaluate("document.querySelectorAll('.missing').length") == 0  # every section computed
    screenshot(chromium, artifacts / "full-top.png")
    screenshot(chromium, artifacts / "full-page.png", full=True)

    # Click the hostile run: its trajectory appears, event by event, with the violation marked.
    assert chromium.evaluate("document.querySelectorAll('ol.traj li').length") == 0
    click(chromium, f'button[data-run="{bad.hash}"]')
    shown = chromium.evaluate("""(function () { var items = document.querySelectorAll('#run-detail ol.traj > li');
        return {n: items.length, violated: Array.from(document.querySelectorAll('li.violated')).map(function (li) {
            return Number(li.getAttribute('data-index')); }),
            text: document.getElementById('run-detail').textContent,
            pressed: document.querySelector('button[aria-pressed=true]').getAttribute('data-run')}; })()""")
    assert shown["pressed"] == bad.hash
    assert shown["n"] == len(bad.events)
    assert shown["violated"] == [bad_index]
    assert "forbidden: called a forbidden tool <img src=x onerror=alert(1)>" in shown["text"]
    # The payload is on the page as literal text, and nothing in it ran.
    assert PAYLOAD.split("\u2028")[0] in shown["text"]
    assert chromium.evaluate("typeof window.__pwned") == "undefined"
    assert chromium.evaluate("document.title") == title
    assert (
        chromium.evaluate(
            "document.querySelectorAll('#run-detail img, #run-detail script, main svg:not(.chart)').length"
        )
        == 0
    )
    dom = chromium.evaluate("document.documentElement.outerHTML")
    leaked = [s for s in SECRETS if s in dom]
    assert leaked == []
    assert "[REDACTED:aws-key-id]" in shown["text"] and "[REDACTED:private-key]" in shown["text"]
    assert requests(chromium) == [path.resolve().as_uri()]
    screenshot(chromium, artifacts / "full-explorer.png")
    assert problems(chromium) == []


@pytest.mark.slow
def test_the_tau_bench_gpt4o_airline_report_renders(chromium, tmp_path, artifacts):
    source = need(TAU_AIRLINE)
    raw = json.loads(source.read_text())
    ledger = str(tmp_path / "fluke.db")
    out = tmp_path / "tau.html"
    runner = CliRunner()
    result = runner.invoke(group, ["--ledger", ledger, "ingest", str(source), "--identity", "model=gpt-4o"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(group, ["--ledger", ledger, "report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert str(out) in result.output.replace("\n", "")
    open_page(chromium, out)
    assert requests(chromium) == [out.resolve().as_uri()]
    boxes = chart_boxes(chromium)
    assert {b["chart"] for b in boxes} == {"suite-board-0", "comparison"}
    for b in boxes:
        assert b["w"] > 100 and b["h"] > 20 and b["marks"] > 3, b
    # One board row per task, one bar per failed run's death (the file's own failures).
    assert chromium.evaluate("document.querySelectorAll('[data-chart=suite-board-0] circle').length") == 50
    failed = sum(x["reward"] < 1 for x in raw)
    bars = chromium.evaluate("""Array.from(document.querySelectorAll('[data-chart=comparison] rect.arm0'))
        .filter(function (r) { return r.querySelector('title'); })
        .map(function (r) { return Number(r.querySelector('title').textContent.split(' ')[1]); })""")
    assert sum(bars) == failed == 116
    assert chromium.evaluate("document.querySelectorAll('#run-list button').length") == len(raw) == 200
    screenshot(chromium, artifacts / "tau-top.png")
    # Click the 6th run in the list: its trajectory has one item per event of that run.
    target = chromium.evaluate("document.querySelectorAll('#run-list button')[5].getAttribute('data-run')")
    click(chromium, f'button[data-run="{target}"]')
    from fluke.ledger import open_ledger

    with open_ledger(ledger) as opened:
        run = next(r for r in opened.runs() if r.hash == target)
    assert chromium.evaluate("document.querySelectorAll('#run-detail ol.traj > li').length") == len(run.events)
    first_user = next(m["content"] for m in raw[run.source.position]["traj"] if m["role"] == "user")
    assert first_user in chromium.evaluate("document.getElementById('run-detail').textContent")
    screenshot(chromium, artifacts / "tau-explorer.png")
    assert problems(chromium) == []


def test_the_demo_runs_end_to_end_and_its_report_renders(chromium, tmp_path, artifacts):
    """``fluke demo``: two versions with a planted change, recorded, graded, compared, reported."""
    out = tmp_path / "demo"
    result = CliRunner().invoke(group, ["--json", "demo", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["runs"] == 2304 and (out / "fluke.db").exists()
    report = doc["report"]
    # The planted change: version 2's check_policy fails four times as often. The comparison must
    # call the versions different and put the change on that step, and only there.
    comparison = report["comparison"]
    assert comparison["verdict"] == "different"
    flagged = [
        label
        for label, q in zip(comparison["step_labels"], comparison["qvalues"], strict=True)
        if q is not None and q < 0.05
    ]
    assert flagged == [doc["planted_step"]] == ["check_policy"]
    # two versions: compared and paired, not ranked; the demo declares no loss table, so no decision
    assert sorted(report["missing"]) == ["decision", "leaderboard"]
    assert [luck["spec"] for luck in report["luck"]] == ["support desk"] * 2
    assert all(luck["pooled"]["lucky"] > 0 for luck in report["luck"])
    open_page(chromium, out / "report.html")
    boxes = chart_boxes(chromium)
    assert {"comparison", "calibration", "contrasts", "null-calibration", "luck"} <= {b["chart"] for b in boxes}
    for b in boxes:
        assert b["w"] > 100 and b["h"] > 20 and b["marks"] > 3, b
    assert requests(chromium) == [(out / "report.html").resolve().as_uri()]
    screenshot(chromium, artifacts / "demo-top.png")
    assert problems(chromium) == []
