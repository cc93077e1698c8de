"""The report's boundary chart over a condition space, in a real browser: the four regions of the
seed (tested and working, tested and failing, named but not run, never named, with 'uncertain' for
a point tested but not decided) and the three colours (completes, asks, fails) are drawn, each
distinguishable, and every region matches what ``fluke boundary`` computed for that point.
"""

from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from fluke.analysis import boundary
from fluke.boundary import Incident
from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.simulate import planted_agent

from .test_browser import open_page, problems, screenshot

SPACE = """name: account desk
axes:
  case: [unique, same_name, missing_id, no_permission]
  records: {levels: [1, 2, 5, 10, 20, 50], ordered: true}
"""


def _ledger(tmp_path):
    agent = planted_agent()
    path = tmp_path / "b.db"
    with open_ledger(str(path)) as ledger:
        # 30 runs at most points; two named points never run; a thin point stays uncertain
        runs = agent.suite(30, seed=4, skip=(("unique", "50"), ("no_permission", "20"), ("same_name", "10")))
        runs += agent.runs_at(("same_name", "10"), 2, np.random.default_rng(9))
        ledger.ingest(runs)
    space = tmp_path / "space.yaml"
    space.write_text(SPACE, encoding="utf-8")
    return path, space


def test_the_report_draws_four_regions_and_three_colours(chromium, tmp_path, artifacts):
    path, space = _ledger(tmp_path)
    cli = CliRunner()
    for at, when in (("case=unique,records=2", "2026-10-04"), ("case=two_accounts,records=5", "2026-11-12"),
                     ("case=unique,records=5,locale=fr", "2026-11-30")):
        done = cli.invoke(group, ["--ledger", str(path), "incident", "add", "--space", str(space), "--at", at,
                                  "--when", when])
        assert done.exit_code == 0, done.output
    out = tmp_path / "r.html"
    done = cli.invoke(group, ["--ledger", str(path), "report", "--space", str(space), "--bar", "0.8", "--out",
                              str(out)])
    assert done.exit_code == 0, done.output
    with open_ledger(str(path)) as ledger:
        truth = {p.key: p.verdict.region for p in boundary(ledger, space=str(space), bar=0.8).chart.points}
    assert {"works", "fails", "uncertain", "not run"} <= set(truth.values())   # the data holds every region

    open_page(chromium, out)
    assert problems(chromium) == []
    drawn = chromium.evaluate("""(function () {
        var svg = document.querySelector('svg[data-chart="boundary-0"]');
        function fill(sel) { var e = svg.querySelector(sel); if (!e) return null;
            var s = getComputedStyle(e); return {fill: s.fill, stroke: s.stroke, dash: s.strokeDasharray,
            w: e.getBoundingClientRect().width}; }
        var rows = Array.from(svg.querySelectorAll('rect.region')).map(function (r) {
            var t = r.querySelector('title'); return {cls: r.getAttribute('class'), tip: t ? t.textContent : ''}; });
        return {rows: rows,
                regions: ['works', 'uncertain', 'fails', 'not-run', 'never-named'].map(function (n) {
                    return [n, fill('rect.region-' + n)]; }),
                colours: ['works', 'ask', 'fails'].map(function (n) { return [n, fill('rect.seg-' + n)]; })};
    })()""")
    regions = dict(drawn["regions"])
    colours = dict(drawn["colours"])
    for name, style in {**regions, **colours}.items():
        assert style is not None and style["w"] > 0, f"{name} is not drawn"
    # three colours, each its own
    assert len({colours[n]["fill"] for n in colours}) == 3
    # the five marks differ from each other by fill, or by an outline (dashed or not, and its colour)
    looks = {n: (s["fill"], s["stroke"], s["dash"]) for n, s in regions.items()}
    assert len(set(looks.values())) == 5, looks
    assert regions["not-run"]["fill"] == "none" and regions["never-named"]["fill"] == "none"
    assert regions["not-run"]["stroke"] != regions["never-named"]["stroke"]
    # each point's mark is the region fluke boundary computed for it
    seen = {}
    for r in drawn["rows"]:
        key, _, what = r["tip"].partition(": ")
        seen[key] = what.split(" (")[0]
    words = {"works": "works", "uncertain": "uncertain", "fails": "fails", "not run": "named, not run"}
    assert {k: seen[k] for k in truth} == {k: words[v] for k, v in truth.items()}
    never = {k for k, v in seen.items() if v == "never named"}
    assert never == {"case=two_accounts,records=5", "case=unique,locale=fr,records=5"}
    screenshot(chromium, artifacts / "boundary-regions.png", full=True)


def test_incident_objects_roundtrip_through_the_ledger(tmp_path):
    """The incidents the report reads are the ones recorded (no browser needed)."""
    path, space = _ledger(tmp_path)
    from fluke.analysis import incident

    with open_ledger(str(path)) as ledger:
        r = incident(ledger, space=str(space), add=[Incident({"case": "unique", "records": 1}, "2026-09-01")])
        again = incident(ledger, space=str(space), add=[Incident({"case": "unique", "records": 1}, "2026-09-01")])
    assert (r.recorded, again.recorded, len(again.incidents.matches)) == (1, 0, 1)
