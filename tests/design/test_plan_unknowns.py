"""``fluke plan`` on a ledger holding unknown outcomes (issue 14, point 6): the counts it plans from
follow the one policy (a failure by default, or left out), and the output says how many."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.design import certification_plan
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

# per scenario: outcomes True / False / None (unknown)
OUTCOMES = {"a": [True] * 6 + [None] * 2, "b": [True, False, None, True, True, None, True, True],
            "c": [None, None, None, True, True, True, True, False]}


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("planu") / "fluke.db")
    with open_ledger(path) as ledger:
        ledger.ingest([Run(scenario=s, trial=t, identity=Identity(model="m"), outcome=Outcome(passed=v))
                       for s, vs in OUTCOMES.items() for t, v in enumerate(vs)])
    return path


def _counts(policy):
    """(passes, trials) per scenario, in scenario order, from the outcomes alone."""
    out = []
    for s in sorted(OUTCOMES):
        kept = [v for v in OUTCOMES[s] if not (policy == "exclude" and v is None)]
        out.append((sum(v is True for v in kept), len(kept)))
    return out


def _json(url, *args):
    result = CliRunner().invoke(group, ["--ledger", url, "plan", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("policy", ["fail", "exclude"])
def test_plan_certifies_from_the_counts_under_the_policy(url, policy):
    counts = _counts(policy)
    want = certification_plan(bar=0.8, level=0.9, passes=[k for k, _ in counts], trials=[n for _, n in counts])
    doc = _json(url, "--bar", "0.8", "--level", "0.9", "--version", "model=m", "--unknown", policy)
    assert doc["certification"]["remaining"] == list(want.remaining)
    assert (doc["unknowns"], doc["unknown_policy"]) == (7, policy)
    # the policies differ here: a verb ignoring the option would be caught
    other = certification_plan(bar=0.8, level=0.9, passes=[k for k, _ in _counts("fail")],
                               trials=[n for _, n in _counts("fail")])
    assert (policy == "fail") == (list(other.remaining) == list(want.remaining))


@pytest.mark.parametrize("policy", ["fail", "exclude"])
def test_plan_detect_reads_rates_under_the_policy(url, policy):
    rates = [(k + 1) / (n + 2) for k, n in _counts(policy)]
    doc = _json(url, "--detect", "10", "--runs", "5", "--version", "model=m", "--unknown", policy)
    assert doc["paired"]["rate"] == pytest.approx(sum(rates) / len(rates), abs=1e-12)


def test_plan_prints_the_unknowns_and_what_was_done(url):
    run = CliRunner()
    text = run.invoke(group, ["--ledger", url, "plan", "--bar", "0.8", "--version", "model=m"]).stdout
    assert "7 unknown outcomes counted as failures (--unknown fail)" in text
    text = run.invoke(group, ["--ledger", url, "plan", "--bar", "0.8", "--version", "model=m",
                              "--unknown", "exclude"]).stdout
    assert "7 unknown outcomes left out (--unknown exclude)" in text
    # a plan from numbers alone reads no run: it says nothing about outcomes it never saw
    alone = _json(url, "--bar", "0.8", "--scenarios", "10")
    assert alone["unknowns"] is None


def test_a_sealed_plan_carries_its_policy(url, tmp_path):
    import shutil

    copy = str(tmp_path / "copy.db")
    shutil.copy(url, copy)
    doc = _json(copy, "--bar", "0.8", "--version", "model=m", "--unknown", "exclude", "--seal")
    with open_ledger(copy) as ledger:
        [sealed] = [d for d in ledger.documents("seal") if d.digest == doc["sealed"]]
    assert sealed.body["rule"]["decision"]["unknown"] == "exclude"
