"""The report read as a person reads it, in a real browser at 1400 × 900: the headline panel
in the first screen, no label overflowing its box, the paired view for two versions, counts
instead of forty identical bars, and the run explorer driven by the keyboard alone."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.format import natural_key

from ..conftest import TAU_AIRLINE, need
from .test_browser import click, open_page, problems, requests, screenshot
from .test_families import _family, tagged_desk
from .test_story import tau2_retail_report

WIDTH, HEIGHT = 1400, 900

OVERFLOW = """(function () {
  var out = [];
  var boxes = 'main section.card, section.headline, li.claim .a, dl.parts dd, td, th, ul.cells li, #run-list button,'
            + ' .versions li, header.top h1, section.card h3, h4.family, li.mv, summary, .cond, .verdict,'
            + ' .explorer-note';
  document.querySelectorAll(boxes).forEach(function (e) {
    if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1) {
      out.push(e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 80)
               + ' (' + e.scrollWidth + ' > ' + e.clientWidth + ')');
    }
  });
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var box = svg.getBoundingClientRect();  // the text's drawn box, transforms included, against the chart's
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBoundingClientRect();
      if (b.width > 0 && box.width > 0 && (b.left < box.left - 1 || b.right > box.right + 1 || b.top < box.top - 1
                                           || b.bottom > box.bottom + 1)) {
        out.push(svg.getAttribute('data-chart') + ' text "' + t.textContent.slice(0, 60) + '" at ' + b.left.toFixed(0)
                 + '–' + b.right.toFixed(0) + ' outside ' + box.left.toFixed(0) + '–' + box.right.toFixed(0));
      }
    });
  });
  return out;
})()"""


def at_size(browser):
    browser.send("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1, mobile=False)


def headline_box(browser):
    return browser.evaluate("""(function () { var r = document.getElementById('headline').getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, claims: document.querySelectorAll('#headline li.claim').length,
                parts: document.querySelectorAll('#headline dl.parts dt').length}; })()""")


def key(browser, name, vk, text=None):
    """A real key press: down (with its character, for Enter) and up."""
    extra = {"text": text, "unmodifiedText": text} if text else {}
    browser.send("Input.dispatchKeyEvent", type="keyDown" if text else "rawKeyDown", key=name, code=name,
                 windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk, **extra)
    browser.send("Input.dispatchKeyEvent", type="keyUp", key=name, code=name, windowsVirtualKeyCode=vk,
                 nativeVirtualKeyCode=vk)


def pressed(browser):
    return browser.evaluate("""(function () { var b = document.querySelector('#run-list button[aria-pressed=true]');
        var all = Array.from(document.querySelectorAll('#run-list button'));
        return {at: b ? all.indexOf(b) : -1, focus: all.indexOf(document.activeElement),
                shown: document.querySelectorAll('#run-detail ol.traj > li').length}; })()""")


def check_first_screen(browser):
    box = headline_box(browser)
    assert box["claims"] >= 1 and box["parts"] == 4 * box["claims"]
    assert 0 <= box["top"] and box["bottom"] <= HEIGHT, box  # the whole panel in the first viewport
    assert browser.evaluate("scrollY") == 0
    assert browser.evaluate(OVERFLOW) == []


def test_the_demo_tells_its_story_at_1400_by_900(chromium, tmp_path, artifacts):
    out = tmp_path / "demo"
    result = CliRunner().invoke(group, ["--json", "demo", "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    at_size(chromium)
    page = out / "report.html"
    open_page(chromium, page)
    check_first_screen(chromium)
    headline = chromium.evaluate("document.getElementById('headline').textContent")
    assert "The change sits at step" in headline and f"({doc['planted_step']})" in headline
    # The paired view: one row per cell both versions hold, the counts beside it add up.
    paired = doc["report"]["paired"]
    rows = chromium.evaluate("document.querySelectorAll('[data-chart=paired-0] circle.pt-b').length")
    assert rows == len(paired["rows"]) == 48 == sum(paired["counts"].values())
    chips = chromium.evaluate(
        "Array.from(document.querySelectorAll('#paired li.mv b')).map(function (b) { return Number(b.textContent); })"
    )
    assert chips == list(paired["counts"].values())
    screenshot(chromium, artifacts / "story-demo-top.png")

    # Keyboard alone: Tab from the filter into the list, Enter opens a run, arrows move and show.
    chromium.evaluate("document.getElementById('run-filter').focus()")
    key(chromium, "Tab", vk=9)
    assert pressed(chromium) == {"at": -1, "focus": 0, "shown": 0}
    key(chromium, "Enter", 13, "\r")
    first = pressed(chromium)
    assert first["at"] == 0 and first["shown"] > 0
    key(chromium, "ArrowDown", vk=40)
    key(chromium, "ArrowDown", vk=40)
    assert pressed(chromium)["at"] == pressed(chromium)["focus"] == 2
    key(chromium, "ArrowUp", vk=38)
    assert pressed(chromium)["at"] == 1
    key(chromium, "End", vk=35)
    total = chromium.evaluate("document.querySelectorAll('#run-list button').length")
    last = pressed(chromium)
    assert last["at"] == last["focus"] == total - 1 and last["shown"] > 0
    assert requests(chromium) == [page.resolve().as_uri()]
    assert problems(chromium) == []


def test_one_run_per_task_shows_counts_not_forty_bars(chromium, tmp_path, artifacts):
    doc, out, _, _ = tau2_retail_report(tmp_path)
    at_size(chromium)
    open_page(chromium, out)
    check_first_screen(chromium)
    counts = chromium.evaluate("""Array.from(document.querySelectorAll('#paired li.mv')).map(function (li) {
        return [li.textContent.replace(/^\\d+\\s*/, ''), Number(li.querySelector('b').textContent)]; })""")
    assert dict(counts) == doc["paired"]["counts"]
    assert (
        chromium.evaluate("document.querySelectorAll('svg[data-chart^=suite-board], svg[data-chart^=paired]').length")
        == 0
    )
    boards = chromium.evaluate("""Array.from(document.querySelectorAll('ul.one-run')).map(function (u) {
        return Array.from(u.querySelectorAll('b')).map(function (b) { return Number(b.textContent); }); })""")
    for board, shown in zip(doc["suite_board"], boards, strict=True):
        k = sum(r["successes"] for r in board["rows"])
        assert sorted(shown) == sorted([k, len(board["rows"]) - k])
    screenshot(chromium, artifacts / "story-tau2-top.png")
    assert problems(chromium) == []


@pytest.mark.slow
def test_the_tau_bench_report_is_readable(chromium, tmp_path, artifacts):
    source = need(TAU_AIRLINE)
    ledger, out = str(tmp_path / "fluke.db"), tmp_path / "tau.html"
    runner = CliRunner()
    assert (
        runner.invoke(group, ["--ledger", ledger, "ingest", str(source), "--identity", "model=gpt-4o"]).exit_code == 0
    )
    assert runner.invoke(group, ["--ledger", ledger, "report", "--out", str(out)]).exit_code == 0
    at_size(chromium)
    open_page(chromium, out)
    check_first_screen(chromium)
    # One version: the paired view says why it is not there, in one line.
    assert "name two versions" in chromium.evaluate("document.getElementById('paired').textContent")
    assert problems(chromium) == []


def test_a_board_over_50_cells_groups_the_rest_by_family_tag(chromium, tmp_path, artifacts):
    """60 cells whose scenarios declare tool: tags (some none): the 50 worst drawn, the rest under
    "show all" by family, each heading naming its tag and count, nothing overflowing once opened."""
    url, out = tagged_desk(tmp_path / "tags.db"), tmp_path / "tags.html"
    done = CliRunner().invoke(
        group, ["--ledger", url, "--json", "report", "--out", str(out), "--family-prefix", "tool:"]
    )
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    at_size(chromium)
    open_page(chromium, out)
    check_first_screen(chromium)
    first = "document.querySelector('#suite-board details')"
    assert chromium.evaluate(f"{first}.open") is False
    click(chromium, "#suite-board details > summary")
    assert chromium.evaluate(f"{first}.open") is True
    shown = chromium.evaluate("""Array.from(document.querySelectorAll('#suite-board h4.family')).map(function (h) {
        var chart = h.nextElementSibling.querySelector('svg.chart');
        return [h.getAttribute('data-family'), h.getBoundingClientRect().height > 0,
                chart.querySelectorAll('circle.pt').length]; })""")
    rows = doc["suite_board"][0]["rows"]
    rest = sorted(rows, key=lambda r: (r["p_above_bar"], r["mean"], natural_key(r["scenario"])))[50:]
    families: dict[str, int] = {}
    for r in rest:
        fam = _family(r["scenario"], "tool:") or ""
        families[fam] = families.get(fam, 0) + 1
    assert {f: n for f, _, n in shown} == families and len(families) > 1  # one dot per cell, under its family
    assert all(visible for _, visible, _ in shown)
    assert chromium.evaluate(OVERFLOW) == []
    screenshot(chromium, artifacts / "story-families.png")
    assert problems(chromium) == []


def test_a_leaderboard_report_reads_at_1400_by_900(chromium, tmp_path, artifacts):
    """Four versions (τ-bench gpt-4o, each trial a version): the headline names who ranks first, the
    forest plot draws one interval per version, and nothing overflows."""
    from fluke.analysis import report
    from fluke.ledger import open_ledger

    from .test_story import tau_four_ways

    path = tau_four_ways(need(TAU_AIRLINE), tmp_path / "four.db")
    with open_ledger(str(path)) as ledger:
        data = report(ledger, out=tmp_path / "four.html").data
    at_size(chromium)
    open_page(chromium, tmp_path / "four.html")
    check_first_screen(chromium)
    assert data.headline[0].answer in chromium.evaluate("document.getElementById('headline').textContent")
    whiskers = chromium.evaluate("""Array.from(document.querySelectorAll('svg[data-chart=leaderboard] line.whisker'))
        .map(function (l) { return l.getBoundingClientRect().width > 0; })""")
    assert whiskers == [True] * len(data.leaderboard.rows) and len(whiskers) == 4  # one interval per version
    assert problems(chromium) == []
