"""The airline spec on the real τ-bench gpt-4o airline runs.

The expected figures are computed here from the raw JSON, without fluke's adapters or
grader: 200 runs, 84 with reward 1, and the runs that changed a booking before a
successful lookup of the reservation and of the user.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluke.grading import evaluate_gate, grade_run, load_spec, luck_rate

from ..conftest import TAU_AIRLINE, need

SPEC = Path(__file__).resolve().parents[2] / "examples" / "specs" / "airline.yaml"


def _raw_before_breaches(doc):
    """(task_id, trial) -> set of (a, b) pairs breached, from the raw OpenAI-format messages."""
    spec = load_spec(SPEC)
    out = {}
    for item in doc:
        # τ-bench reuses call ids within a run, so each result answers the earliest open call with its id
        calls, open_calls = [], []
        for m in item["traj"]:
            for tc in m.get("tool_calls") or []:
                entry = [tc["function"]["name"], tc["id"], None]
                calls.append(entry)
                open_calls.append(entry)
            if m.get("role") == "tool":
                entry = next(c for c in open_calls if c[1] == m["tool_call_id"])
                entry[2] = m["content"]
                open_calls.remove(entry)
        done, first, breached = set(), set(), set()
        for name, _id, content in calls:
            if name not in first:
                first.add(name)
                breached |= {(a, b) for a, b in spec.before if b == name and a not in done}
            if content is not None and not str(content).startswith("Error:"):
                done.add(name)
        out[item["task_id"], item["trial"]] = breached
    return out


@pytest.fixture(scope="module")
def graded():
    from fluke.adapters import read_file

    path = need(TAU_AIRLINE)
    runs = list(read_file(path, identity={"model": "gpt-4o"}))
    spec = load_spec(SPEC)
    return json.loads(path.read_text()), runs, [grade_run(r, spec) for r in runs]


def test_counts_and_before_breaches_match_an_independent_reading(graded):
    doc, runs, grades = graded
    assert len(grades) == len(doc) == 200
    assert sum(g.output_ok is True for g in grades) == sum(item["reward"] == 1.0 for item in doc) == 84
    expected = _raw_before_breaches(doc)
    got = {}
    for run, g in zip(runs, grades, strict=True):
        key = (int(run.scenario.split("/")[1]), run.trial)
        pairs = set()
        for v in g.violations:
            if v.check == "before":
                b, a = v.message.split(" called before any successful ")[0], v.message.split()[5]
                pairs.add((a, b))
        got[key] = pairs
    assert got == expected
    assert sum(map(len, expected.values())) > 20


def test_luck_rate_per_case_and_pooled(graded):
    _doc, _runs, grades = graded
    report = luck_rate(grades)
    lucky_runs = [g for g in grades if g.lucky]
    assert report.pooled.lucky == len(lucky_runs) and report.pooled.green == 84
    assert sum(c.lucky for c in report.cases.values()) == report.pooled.lucky
    assert len(report.cases) == 50 and all(c.runs == 4 for c in report.cases.values())
    # cases with no green run print a dash, not 0
    assert {k for k, c in report.cases.items() if c.statistic is None} == {
        k for k, c in report.cases.items() if c.green == 0}
    assert not evaluate_gate(grades).passed
