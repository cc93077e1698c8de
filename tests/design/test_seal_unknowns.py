"""A sealed decision follows the one unknown-outcome policy (issue 14, point 6), declared in the rule
before the runs (``decision.unknown``, default: a failure); the unseal says how many there were."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.design import parse_rule, seal_rule, seal_body, unseal_rule
from fluke.errors import SpecError
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

# 20 runs on 5 scenarios: 11 pass, 3 fail, 6 unknown
OUTCOMES = [True, True, None, False, True, None, True, True, None, True,
            False, True, None, True, True, None, False, True, None, True]


def _runs():
    return [Run(scenario=f"s{i % 5}", trial=i, identity=Identity(model="m"), outcome=Outcome(passed=v))
            for i, v in enumerate(OUTCOMES)]


@pytest.mark.parametrize("policy", [None, "fail", "exclude"])
def test_the_sealed_policy_decides_the_mean(tmp_path, policy):
    rule = (
        "decision: {statistic: mean, above: 0.6, bound: estimate" + (f", unknown: {policy}" if policy else "") + "}\n"
    )
    with open_ledger(str(tmp_path / "l.db")) as led:
        d = seal_rule(led, rule)
        led.ingest(_runs())
        report = unseal_rule(led, d[:12])
    kept = [0.0 if v is None else float(v) for v in OUTCOMES if not (policy == "exclude" and v is None)]
    mean = sum(kept) / len(kept)                   # 11/20 = 0.55 under fail, 11/14 = 0.786 left out
    dec = report.decision
    assert (dec.estimate, dec.runs, dec.unknowns, dec.unknown_policy) == \
        (pytest.approx(mean, abs=1e-12), len(kept), 6, policy or "fail")
    assert dec.passed is (mean > 0.6) and dec.passed is (policy == "exclude")


def test_the_unseal_prints_the_count_and_the_policy_and_records_it(tmp_path):
    url = str(tmp_path / "l.db")
    rule = tmp_path / "rule.yaml"
    rule.write_text("decision: {statistic: mean, above: 0.6, unknown: exclude}\n")
    run = CliRunner()
    out = run.invoke(group, ["--ledger", url, "seal", str(rule)])
    assert out.exit_code == 0, out.output
    with open_ledger(url) as led:
        led.ingest(_runs())
        digest = led.documents("seal")[0].digest
    text = run.invoke(group, ["--ledger", url, "unseal", digest[:12]]).stdout
    assert "6 unknown outcomes left out (the sealed rule's decision.unknown: exclude)" in text
    with open_ledger(url) as led:
        [doc] = led.documents("unseal")
    assert (doc.body["unknowns"], doc.body["unknown_policy"]) == (6, "exclude")


def test_a_bad_policy_is_refused_and_an_old_seal_still_parses_to_itself():
    with pytest.raises(SpecError, match="decision.unknown"):
        parse_rule("decision: {statistic: mean, above: 0.5, unknown: drop}")
    # a rule without the key is not rewritten (a seal made before the key existed stays intact)
    body = seal_body("decision: {statistic: mean, above: 0.5}\n", sealed_at="2026-01-01T00:00:00+00:00")
    assert "unknown" not in body["rule"]["decision"]
    assert parse_rule(body["text"]) == body["rule"]
