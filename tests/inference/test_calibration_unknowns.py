"""``fluke calibration`` under the one unknown-outcome policy (issue 14, point 6): a run scored
against a prediction whose outcome is unknown is a failure by default, or is left out, and the
output says how many there were and what was done with them."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone

import numpy as np
import pytest
from click.testing import CliRunner

from fluke.analysis import calibration
from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

PROBS = {"s0": 0.9, "s1": 0.6, "s2": 0.3, "s3": 0.75}
# the second batch: per scenario, outcomes True/False/None (unknown)
LATER = {"s0": [True, None, True, True], "s1": [False, None, None, True], "s2": [None, False, True, False],
         "s3": [True, True, False, True]}


@pytest.fixture(scope="module")
def ledger_url(tmp_path_factory):
    url = str(tmp_path_factory.mktemp("calu") / "fluke.db")
    ident = Identity(model="m")
    with open_ledger(url) as ledger:
        ledger.ingest([Run(scenario=s, trial=t, identity=ident, outcome=Outcome(passed=t % 2 == 0))
                       for s in PROBS for t in range(2)])
        version = ledger.versions()[0].version
        time.sleep(0.01)
        for s, p in PROBS.items():
            ledger.put_document("prediction", {"version": version, "scenario": s, "condition": "", "probability": p,
                                               "made_at": datetime.now(timezone.utc).isoformat()})
        time.sleep(0.01)
        ledger.ingest([Run(scenario=s, trial=2 + t, identity=ident, outcome=Outcome(passed=v))
                       for s, vs in LATER.items() for t, v in enumerate(vs)])
    return url


def _expected(policy):
    """(Brier, scored runs, unknowns) from the batch alone."""
    pairs = [(PROBS[s], v) for s, vs in LATER.items() for v in vs]
    unknowns = sum(v is None for _, v in pairs)
    kept = [(p, 0.0 if v is None else float(v)) for p, v in pairs if not (policy == "exclude" and v is None)]
    p, y = np.array(kept).T
    return float(np.mean((p - y) ** 2)), len(kept), unknowns


@pytest.mark.parametrize("policy", ["fail", "exclude"])
def test_calibration_scores_unknowns_under_the_policy(ledger_url, policy):
    brier, scored, unknowns = _expected(policy)
    assert unknowns == 4 and scored == (16 if policy == "fail" else 12)
    with open_ledger(ledger_url) as ledger:
        result = calibration(ledger, bins=5, unknown=policy)
    assert (result.scored_runs, result.unknowns, result.unknown_policy, result.before_any) == \
        (scored, unknowns, policy, 8)
    assert result.report.overall.brier == pytest.approx(brier, abs=1e-12)
    # the two policies differ here, so ignoring the option would be caught
    assert abs(_expected("fail")[0] - _expected("exclude")[0]) > 0.02


def test_the_cli_takes_the_policy_and_prints_it(ledger_url):
    run = CliRunner()
    text = run.invoke(group, ["--ledger", ledger_url, "calibration", "--bins", "5"])
    assert text.exit_code == 0, text.output
    assert "4 unknown outcomes counted as failures (--unknown fail)" in text.stdout
    assert text.stdout.startswith("16 runs scored")
    left = run.invoke(group, ["--ledger", ledger_url, "calibration", "--unknown", "exclude"])
    assert "4 unknown outcomes left out (--unknown exclude)" in left.stdout and left.stdout.startswith("12 runs")
    doc = json.loads(run.invoke(group, ["--ledger", ledger_url, "calibration", "--unknown", "exclude",
                                        "--json"]).stdout)
    assert (doc["unknowns"], doc["unknown_policy"], doc["scored_runs"]) == (4, "exclude", 12)
    assert doc["overall"]["brier"] == pytest.approx(_expected("exclude")[0], abs=1e-12)
