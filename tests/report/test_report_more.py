"""``fluke report`` with the other capabilities present: comparison, luck rate, suite questions.

Skips where this build lacks grading or comparison; once merged it checks the sections
against figures computed here independently.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.comparison import ROOM_SHARE
from fluke.ledger import open_ledger
from fluke.record import Run

from ..conftest import TAU_AIRLINE, need
from ..comparison._oracles import regression_limit_by_root
from ._build import tau_runs


def test_two_versions_and_a_spec_fill_comparison_luck_and_questions(tmp_path):
    import fluke.grading as grading
    runs = []
    for r in tau_runs(need(TAU_AIRLINE)):  # trials 0–1 as version A, 2–3 as version B: one agent, two arms
        body = r.model_dump(mode="json")
        body["identity"] = {**body["identity"], "model": "arm-a" if r.trial < 2 else "arm-b"}
        runs.append(Run.model_validate(body))
    tools = sorted({e.tool for r in runs for e in r.tool_calls})
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tools": tools, "required": ["get_user_details"]}))
    url = str(tmp_path / "fluke.db")
    with open_ledger(url) as ledger:
        ledger.ingest(runs)
    out = tmp_path / "r.html"
    result = CliRunner().invoke(group, ["--ledger", url, "report", "--json", "--out", str(out),
                                        "--version", "model=arm-a",
                                        "--version", "model=arm-b", "--spec", str(spec)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    cmp_ = doc["comparison"]
    loaded_spec = grading.load_spec(str(spec))
    # Deaths are drawn only where the failure step is known: a failed run's first hard violation, else
    # the failed tool call it ends on (an engine that rejected the call and ended the episode)
    def step_known(r):
        if grading.first_hard_index(grading.grade_run(r, loaded_spec)) is not None:
            return True
        last = r.events[-1] if r.events else None
        return getattr(last, "kind", None) == "tool" and last.ok is False
    known = sum(r.outcome.passed is False and step_known(r) for r in runs)
    assert sum(sum(a["deaths"]) for a in cmp_["arms"]) == known
    # The verdict and its limit are the pass-rate comparison's, in points: the regression B would be found
    # in with 80% power, solved here by a root finder over the normal power, scenario by scenario
    cells = []
    for scenario in {r.scenario for r in runs}:
        fa = sum(r.outcome.passed is not True for r in runs if r.scenario == scenario and r.trial < 2)
        fb = sum(r.outcome.passed is not True for r in runs if r.scenario == scenario and r.trial >= 2)
        cells.append(((fa, 2), (fb, 2)))
    # ... and refused (null) when it is beyond half the room a regression has: the mean pass share
    room = 100 * sum(1 - (fa + fb) / 4 for (fa, _), (fb, _) in cells) / len(cells)
    expected = regression_limit_by_root(cells)
    if expected > ROOM_SHARE * room:
        assert cmp_["detection_limit"] is None
    else:
        assert cmp_["detection_limit"] == pytest.approx(expected, rel=1e-6)
    assert cmp_["verdict"] in ("different", "no significant difference", "too small to tell")
    assert len(cmp_["qvalues"] or []) == len(cmp_["steps"])
    loaded = grading.load_spec(str(spec))
    grades = [grading.grade_run(r, loaded) for r in runs]
    assert sum(luck["pooled"]["green"] for luck in doc["luck"]) == sum(bool(g.output_ok) for g in grades) == 84
    assert sum(luck["pooled"]["lucky"] for luck in doc["luck"]) == sum(bool(g.output_ok) and not g.path_ok
                                                                       for g in grades)
    assert [luck["spec"] for luck in doc["luck"]] == [str(spec)] * 2
    flagged = sum(bool(g.violations) for g in grades)
    assert sum(bool(r["violations"]) for r in doc["explorer"]["runs"]) == flagged
    inference = pytest.importorskip("fluke.inference")
    if hasattr(inference, "suite_questions"):
        names = [q["name"] for q in doc["suite_questions"][0]["questions"]]
        assert "P(every scenario clears 0.9)" in names
    page = out.read_text()
    assert cmp_["verdict"] in page and "Not computed: no spec" not in page


def _same_comparison(mine, theirs):
    where = sorted(theirs["where"]["steps"]["steps"], key=lambda s: s["step"]) if not theirs["where"]["skipped"] else []
    assert (mine.verdict, mine.pvalue, mine.detection_limit) == (theirs["verdict"], theirs["pvalue"],
                                                                theirs["detection_limit"])
    assert mine.steps == [s["step"] for s in where]
    assert [mine.arms[0].deaths, mine.arms[1].deaths] == [[s["deaths_a"] for s in where],
                                                          [s["deaths_b"] for s in where]]
    assert (mine.qvalues or []) == [s["qvalue"] for s in where]


def test_the_comparison_is_fluke_compare_and_stored_grades_never_move_where_runs_die(tmp_path):
    """The page's comparison is compare's: without --spec, compare's (stored grades are named, not
    used: a failed run dies where its harness or a failed call says); with --spec, compare --spec's."""
    from fluke.analysis import compare, report

    runs = []
    for r in tau_runs(need(TAU_AIRLINE)):
        body = r.model_dump(mode="json")
        body["identity"] = {**body["identity"], "model": "arm-a" if r.trial < 2 else "arm-b"}
        body["outcome"] = {**body["outcome"], "died_at": None}   # every failure step from the spec or the last call
        runs.append(Run.model_validate(body))
    tools = sorted({e.tool for r in runs for e in r.tool_calls})
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tools": tools, "required": ["get_user_details"],
                                "forbidden": ["transfer_to_human_agents"]}))
    url = str(tmp_path / "g.db")
    with open_ledger(url) as ledger:
        ledger.ingest(runs)
    assert CliRunner().invoke(group, ["--ledger", url, "grade", "--spec", str(spec)]).exit_code in (0, 1)
    arms = ["model=arm-a", "model=arm-b"]
    with open_ledger(url) as ledger:
        stored = report(ledger, out=tmp_path / "r.html", versions=arms).data
        plain = compare(ledger, *arms, record=False).to_dict()
        graded = report(ledger, out=tmp_path / "s.html", versions=arms, spec=str(spec)).data
        theirs = compare(ledger, *arms, spec=str(spec), record=False).to_dict()
    assert theirs["died_from"]["hard violation"] > 0 and plain["died_from"]["hard violation"] == 0
    _same_comparison(stored.comparison, plain)
    _same_comparison(graded.comparison, theirs)
    assert stored.comparison.steps != graded.comparison.steps or stored.comparison.arms != graded.comparison.arms
    assert "are not used for where runs die" in stored.comparison.note and stored.luck  # named, luck still shown
