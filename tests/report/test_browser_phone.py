"""The report on a phone: at 390 px nothing scrolls sideways and chart labels stay legible.

Must show: at a 390 px wide viewport (mobile emulation, scale 1) the document is no wider than
the viewport; every chart label is drawn at 10 px or more (its font size times the scale the
SVG is drawn at); the section list takes less than a fifth of the screen. Charts keep their
drawn size and scroll inside their card, which is not the page scrolling.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.cli import group

from ..conftest import TAU2_RESULTS, need
from .test_browser import open_page, problems, screenshot

PHONE = {"width": 390, "height": 844}

MEASURE = """(function () {
  var smallest = null;
  document.querySelectorAll('svg.chart text').forEach(function (t) {
    if (!t.textContent.trim()) return;
    var svg = t.ownerSVGElement, box = svg.viewBox.baseVal;
    var scale = box && box.width ? svg.getBoundingClientRect().width / box.width : 1;
    var px = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (smallest === null || px < smallest.px) smallest = {px: px, chart: svg.getAttribute('data-chart'),
                                                           text: t.textContent};
  });
  var nav = document.querySelector('nav.toc');
  return {doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, view: window.innerWidth,
          charts: document.querySelectorAll('svg.chart').length, smallest: smallest,
          nav: nav ? nav.getBoundingClientRect().height : 0};
})()"""


@pytest.fixture()
def phone(chromium):
    chromium.send("Emulation.setDeviceMetricsOverride", width=PHONE["width"], height=PHONE["height"],
                  deviceScaleFactor=1, mobile=True)
    try:
        yield chromium
    finally:
        chromium.send("Emulation.clearDeviceMetricsOverride")


def _reports(tmp_path):
    runner = CliRunner()
    demo = tmp_path / "demo"
    assert runner.invoke(group, ["demo", "--out", str(demo)], catch_exceptions=False).exit_code == 0
    ledger = str(tmp_path / "tau2.db")
    files = sorted(str(p) for p in need(TAU2_RESULTS).glob("*.json"))
    assert runner.invoke(group, ["--ledger", ledger, "ingest", *files], catch_exceptions=False).exit_code == 0
    doc = json.loads(runner.invoke(group, ["--ledger", ledger, "--json", "summary"]).output)
    retail = sorted({r["version"] for r in doc["rows"] if r["scenario"].startswith("retail/")})
    tau2 = tmp_path / "tau2.html"
    made = runner.invoke(group, ["--ledger", ledger, "report", "--out", str(tau2), "--version", retail[0],
                                 "--version", retail[1]], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    return {"demo": demo / "report.html", "tau2-retail": tau2}


def test_the_report_reads_at_390px_without_sideways_scrolling(phone, tmp_path, artifacts):
    for name, path in _reports(tmp_path).items():
        open_page(phone, path)
        m = phone.evaluate(MEASURE)
        assert m["view"] == PHONE["width"], m
        assert m["doc"] <= PHONE["width"] and m["body"] <= PHONE["width"], (name, m)
        assert m["charts"] > 0 and m["smallest"]["px"] >= 10, (name, m["smallest"])
        assert m["nav"] < PHONE["height"] / 5, (name, m["nav"])
        screenshot(phone, artifacts / f"phone-{name}.png")
        assert problems(phone) == []
