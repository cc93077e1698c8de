"""``fluke report`` with the other capabilities present: comparison, luck rate, suite questions.

Skips where this build lacks grading or comparison; once merged it checks the sections
against figures computed here independently.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import norm

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Run

from ..conftest import TAU_AIRLINE, need
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
    result = CliRunner().invoke(group, ["--ledger", url, "report", "--json", "--out", str(out), "--version", "model=arm-a",
                                        "--version", "model=arm-b", "--spec", str(spec)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    cmp_ = doc["comparison"]
    deaths = sum(r.outcome.passed is False for r in runs)
    assert sum(sum(a["deaths"]) for a in cmp_["arms"]) == deaths == 116
    # Detection limit exp((z_{1−α/2} + z_power)/√V), V the log-rank information, computed here by a
    # loop over strata and death times (deaths at the first hard violation, else the last event)
    loaded_spec = grading.load_spec(str(spec))
    rows = []
    for r in runs:
        t = len(r.events) - 1
        if r.outcome.passed is False:
            hard = grading.first_hard_index(grading.grade_run(r, loaded_spec))
            t = hard if hard is not None else t
        rows.append((r.scenario, t, r.outcome.passed is False, r.trial >= 2))
    from tests.comparison._oracles import logrank_by_loop

    _, variance = logrank_by_loop(*(np.array(x) for x in list(zip(*rows))[1:]), np.array([x[0] for x in rows]))
    assert cmp_["detection_limit"] == pytest.approx(math.exp((norm.ppf(0.975) + norm.ppf(0.8)) / math.sqrt(variance)))
    assert cmp_["detection_limit"] > math.exp(2 * (norm.ppf(0.975) + norm.ppf(0.8)) / math.sqrt(deaths))
    assert cmp_["verdict"] in ("different", "no significant difference", "too small to tell")
    assert len(cmp_["qvalues"]) == len(cmp_["steps"])
    loaded = grading.load_spec(str(spec))
    grades = [grading.grade_run(r, loaded) for r in runs]
    assert doc["luck"]["pooled"]["green"] == sum(bool(g.output_ok) for g in grades) == 84
    assert doc["luck"]["pooled"]["lucky"] == sum(bool(g.output_ok) and not g.path_ok for g in grades)
    flagged = sum(bool(g.violations) for g in grades)
    assert sum(bool(r["violations"]) for r in doc["explorer"]["runs"]) == flagged
    inference = pytest.importorskip("fluke.inference")
    if hasattr(inference, "suite_questions"):
        names = [q["name"] for q in doc["suite_questions"][0]["questions"]]
        assert "P(every scenario clears 0.9)" in names
    page = out.read_text()
    assert cmp_["verdict"] in page and "Not computed: no spec" not in page
