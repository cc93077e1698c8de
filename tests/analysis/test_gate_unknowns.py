"""``fluke gate`` under the one unknown-outcome policy (issue 14, point 6): the rule declares it
(``unknown: fail | exclude``, default fail), every check decides under it, and every check says
how many outcomes were unknown and what was done with them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from scipy import stats

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

# per scenario: 8 passes, 1 failure and 3 unknown outcomes
OUTCOMES = [True] * 8 + [False] + [None] * 3


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("gateu") / "fluke.db")
    with open_ledger(path) as ledger:
        ledger.ingest([Run(scenario=f"s{i}", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=v))
                       for i in range(3) for t, v in enumerate(OUTCOMES)])
    return path


def _gate(url, tmp_path, body, code=None):
    rule = tmp_path / "rule.yaml"
    rule.write_text(body)
    result = CliRunner().invoke(group, ["--ledger", url, "gate", str(rule), "--json"])
    assert code is None or result.exit_code == code, result.output
    return result


@pytest.mark.parametrize("policy", [None, "fail", "exclude"])
def test_reliable_decides_under_the_declared_policy(url, tmp_path, policy):
    body = "reliable: {bar: 0.6, prob: 0.9}\n" + (f"unknown: {policy}\n" if policy else "")
    doc = json.loads(_gate(url, tmp_path, body).stdout)
    [claim] = doc["checks"]
    # uniform prior: Beta(1 + 8, 1 + failures), the unknowns among the failures under "fail"
    failures = 1 if policy == "exclude" else 4
    p = stats.beta.sf(0.6, 9, 1 + failures)            # 0.97 left out, 0.79 counted as failures
    assert (claim["status"] == "holds") == (p >= 0.9) == (policy == "exclude")
    said = "9 unknown outcomes " + ("left out (unknown: exclude)" if policy == "exclude"
                                    else "counted as failures (unknown: fail)")
    assert said in claim["rests_on"]


def test_a_bad_policy_is_refused_naming_the_field(url, tmp_path):
    result = _gate(url, tmp_path, "reliable: {bar: 0.6}\nunknown: drop\n", code=2)
    assert "unknown" in result.output and "'drop'" in result.output and "Traceback" not in result.output
