"""The report shows a stored intervention's effect beside the observational comparison, both
read back from the ledger (the effect recomputed from the stored arms equals the live one)."""

from __future__ import annotations

import json

import pytest

from fluke.analysis import report
from fluke.ledger import open_ledger
from fluke.replay import Intervention, intervene, select_sources, stored_interventions
from fluke.runner import evaluate
from fluke.simulate import SUPPORT_TOOLS, support_tool_agent, support_tool_cases


def _cases(retry):   # the policy lives in the identity, so the two versions share scenario cells
    return [{**c, "condition": {}} for c in support_tool_cases(30, retry=retry)]


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    ledger = open_ledger(str(folder / "support.db"))
    made = {}
    for retry in (1, 3):
        made[retry] = evaluate(_cases(retry), support_tool_agent, k=4, tools=SUPPORT_TOOLS, ledger=ledger,
                               identity={"model": f"sim-retry{retry}", "date": "2026-12-01"})
    timeouts = [r.run.hash for r in made[1].results if r.tool_log["calls"][1]["error"]][:5]
    live = intervene(select_sources(ledger, timeouts), support_tool_agent, SUPPORT_TOOLS,
                     [Intervention("set", "retry", 3)], step=1, n=40, ledger=ledger)
    result = report(ledger, out=str(folder / "r.html"), versions=[made[1].version[:12], made[3].version[:12]])
    yield ledger, made, live, result
    ledger.close()


def test_the_stored_arms_give_back_the_live_effect(reported):
    ledger, made, live, _ = reported
    (stored,) = stored_interventions(ledger, [made[1].version])
    assert (stored.baseline, stored.intervened) == (live.baseline.version, live.intervened.version)
    assert stored.effect.estimate == pytest.approx(live.effect.estimate)
    assert stored.effect.variance_factor == pytest.approx(live.effect.variance_factor)
    assert [i.describe() for i in stored.interventions] == ["set the policy parameter retry to 3"]
    assert stored_interventions(ledger, ["0" * 64]) == []     # touches neither arm nor origin


def test_the_report_shows_the_intervention_beside_the_observational_comparison(reported):
    _, made, live, result = reported
    section = result.data.interventions
    assert section is not None and result.data.comparison is not None
    (row,) = section.rows
    assert row.effect == pytest.approx(live.effect.estimate) and row.low == pytest.approx(live.effect.low)
    assert (row.intervened_passes, row.intervened_trials) == (live.intervened.passes, live.intervened.judged)
    c = result.data.comparison
    assert section.observational.startswith("sim-retry3 − sim-retry1: ") or section.observational.startswith(
        "sim-retry1 − sim-retry3: ")
    assert f"{c.difference:+.1f} points" in section.observational
    html = result.path.read_text()
    start = html.index('id="interventions"')
    comparison = html.index('id="comparison"')
    assert comparison < start      # right after the comparison
    part = html[start:html.index("</section>", start)]
    assert "Observational comparison" in part and "set the policy parameter retry to 3" in part
    assert f"{100 * live.effect.estimate:+.1f} [{100 * live.effect.low:+.1f}, {100 * live.effect.high:+.1f}]" in part
    doc = json.loads(result.to_json())
    assert doc["interventions"]["rows"][0]["target"] == "conditional (coupled draws)"
