"""Pre-registration: changed bytes are detected, early runs void the seal, the rule decides."""

import hashlib

import pytest

from fluke.design import check_seal, evaluate_rule, parse_rule, seal_rule, seal_body, unseal_rule
from fluke.errors import SelectorError, SpecError
from fluke.record import digest
from fluke.simulate import simulate_support

RULE = """name: memory helps
hypothesis: memory on raises the pass rate by more than 0.025
scope:
  identity: {model: sim-support}
decision:
  statistic: contrast
  factors: [memory, retry]
  effect: memory
  above: 0.025
predictions:
  memory: 0.15
"""


def test_every_changed_byte_of_the_rule_file_is_detected():
    body = seal_body(RULE, sealed_at="2026-01-01T00:00:00+00:00")
    d = digest(body)
    assert check_seal(d, body, text=RULE).intact
    raw = RULE.encode()
    for i in range(len(raw)):
        mutated = raw[:i] + bytes([raw[i] ^ 0x01]) + raw[i + 1:]
        check = check_seal(d, body, text=mutated)
        assert not check.intact and f"first at byte {i})" in check.problems[0]
    assert not check_seal(d, body, text=RULE + "\n").intact        # an appended byte too


def test_tampering_with_the_stored_seal_is_detected():
    body = seal_body(RULE, sealed_at="2026-01-01T00:00:00+00:00")
    d = digest(body)
    moved = dict(body, rule={**body["rule"], "decision": {**body["rule"]["decision"], "above": 0.0}})
    problems = check_seal(d, moved).problems
    assert any("no longer hashes" in p for p in problems)
    assert any("stored rule differs" in p for p in problems)
    text = body["text"].replace("0.025", "0.001")
    forged = dict(body, text=text, text_sha256=hashlib.sha256(text.encode()).hexdigest(),
                  rule=parse_rule(text))
    # internally consistent forgery: only the digest can tell, and it does
    assert check_seal(d, forged).problems == (
        f"the stored seal no longer hashes to {d[:12]}: it was changed after sealing",)


def test_rule_validation_names_the_field():
    with pytest.raises(SpecError, match="decision.statistic: 'median'"):
        parse_rule("decision: {statistic: median, above: 1}")
    with pytest.raises(SpecError, match="exactly one of 'above' or 'below'"):
        parse_rule("decision: {statistic: mean}")
    with pytest.raises(SpecError, match="decision.k"):
        parse_rule("decision: {statistic: pass_at_k, above: 0.5}")
    with pytest.raises(SpecError, match="unknown key"):
        parse_rule("decision: {statistic: mean, above: 1}\nthreshhold: 2")


def test_unseal_holds_when_runs_come_after_and_the_rule_says_yes(ledger):
    d = seal_rule(ledger, RULE)
    ledger.ingest(simulate_support(120, seed=21).runs)
    report = unseal_rule(ledger, d[:8])
    assert report.intact and not report.early and report.runs == 480
    assert report.decision.passed and report.holds
    assert report.decision.compared == pytest.approx(report.decision.low)
    assert report.decision.low > 0.025


def test_a_run_recorded_before_the_seal_fails_the_unseal(ledger):
    runs = simulate_support(120, seed=22).runs
    ledger.ingest(runs[:1])
    d = seal_rule(ledger, RULE)
    ledger.ingest(runs[1:])
    report = unseal_rule(ledger, d)
    assert report.early == (runs[0].hash,)
    assert not report.holds and "ingested or executed before the seal" in report.problems()[0]


def test_the_rule_saying_no(ledger):
    d = seal_rule(ledger, RULE.replace("above: 0.025", "above: 0.5"))
    ledger.ingest(simulate_support(60, seed=23).runs)
    report = unseal_rule(ledger, d)
    assert report.intact and not report.early
    assert not report.decision.passed and not report.holds
    assert report.decision.text().startswith("no:")


def test_unknown_digest_is_a_selector_error(ledger):
    with pytest.raises(SelectorError, match="no seal with digest"):
        unseal_rule(ledger, "abcdef12")


def test_mean_and_pass_at_k_rules():
    runs = simulate_support(50, seed=24).runs
    rule = parse_rule("decision: {statistic: mean, above: 0.3, bound: estimate}")
    dec = evaluate_rule(rule, runs)
    share = sum(r.outcome.passed for r in runs) / len(runs)
    assert dec.estimate == pytest.approx(share) and dec.passed == (share > 0.3)
    rule = parse_rule("decision: {statistic: pass_at_k, k: 5, above: 0.5}")
    assert "k=5 exceeds" in evaluate_rule(rule, runs).reason
