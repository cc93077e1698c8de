"""``fluke gate RULE`` over the demo's ledger: a rule that holds (exit 0), one that does not (exit 1,
every reason listed), bad rules (exit 2, before the ledger is read), TOML, and sealing.

Oracles: each scenario cell's P(θ > bar) from scipy's Beta on the ledger's own counts; the
comparison's verdict from fluke.analysis.compare read directly.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from scipy import stats

from fluke.analysis import compare, gate, parse_gate_rule
from fluke.cli import group
from fluke.errors import SpecError
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

HOLDS = """name: desk v1 release
version: model=support-desk-v1
spec: spec.yaml
reliable: {bar: 0.3, prob: 0.95}
luck: {at_most: 0.1}
compare: {baseline: model=support-desk-v2}
"""
FAILS = """name: desk v2 release
version: model=support-desk-v2
spec: spec.yaml
gate: true
reliable: {bar: 0.9, prob: 0.95}
compare: {baseline: model=support-desk-v1}
"""


def _cli(folder, *args):
    return CliRunner().invoke(group, ["--ledger", str(folder / "fluke.db"), *args])


def _tails(folder, model, bar):
    with open_ledger(str(folder / "fluke.db")) as led:
        version = led.resolve_version(f"model={model}")
        return {(c.scenario, c.condition): stats.beta(1 + c.passes, 1 + c.trials - c.passes).sf(bar)
                for c in led.counts(version=version)}


def test_a_rule_that_holds_exits_0(demo_folder):
    (demo_folder / "hold.yaml").write_text(HOLDS)
    result = _cli(demo_folder, "gate", str(demo_folder / "hold.yaml"))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("fluke gate HOLDS: desk v1 release\n3 of 3 checks hold")
    tails = _tails(demo_folder, "support-desk-v1", 0.3)
    assert all(p >= 0.95 for p in tails.values())  # the oracle agrees every cell clears
    assert f"{len(tails)} of {len(tails)} scenario cells have P(θ > 0.3) ≥ 0.95" in result.output
    assert "Conditional on (reliable):" in result.output and "prior uniform Beta(1, 1)" in result.output


def test_a_rule_that_does_not_hold_exits_1_with_every_reason(demo_folder):
    (demo_folder / "fail.yaml").write_text(FAILS)
    result = _cli(demo_folder, "--json", "gate", str(demo_folder / "fail.yaml"))
    assert result.exit_code == 1, result.output
    doc = json.loads(result.output)
    assert doc["kind"] == "gate" and doc["holds"] is False and doc["status"] == "fails"
    checks = {c["check"]: c for c in doc["checks"]}
    assert {k: c["status"] for k, c in checks.items()}["gate"] == "fails"
    # reliable: one reason per cell short of P ≥ 0.95, fails exactly where P ≤ 0.05 (scipy's Beta)
    tails = _tails(demo_folder, "support-desk-v2", 0.9)
    short = {k: p for k, p in tails.items() if p < 0.95}
    reasons = checks["reliable"]["reasons"]
    assert len(reasons) == len(short) > 0
    assert sum(r.startswith("fails:") for r in reasons) == sum(p <= 0.05 for p in short.values())
    # compare: read from the analysis layer's own answer
    with open_ledger(str(demo_folder / "fluke.db")) as led:
        direct = compare(led, "model=support-desk-v1", "model=support-desk-v2", record=False)
    assert direct.verdict == "different" and checks["not_worse_than"]["status"] == "fails"
    assert direct.pass_rates.summary() in checks["not_worse_than"]["reasons"][0]
    assert direct.pass_rates.difference < 0 and direct.pass_rates.direction == "lower"
    # every reason of every check, in the document and in the text
    assert len(doc["reasons"]) == sum(len(c["reasons"]) for c in doc["checks"])
    text = _cli(demo_folder, "--all", "gate", str(demo_folder / "fail.yaml")).output
    assert text.startswith("fluke gate FAILS: desk v2 release")
    assert all(r in text for r in doc["reasons"])
    assert "detection limit (not_worse_than): could not have detected a difference below" in text


@pytest.mark.parametrize("rule, message", [
    ("relaible: {bar: 0.8}\n", "relaible: unknown key (did you mean 'reliable'?)"),
    ("reliable: {bra: 0.8}\n", "reliable.bra: unknown key (did you mean 'bar'?)"),
    ("reliable: {bar: 1.5}\n", "reliable.bar: 1.5 must lie strictly between 0 and 1"),
    ("reliable: {bar: high}\n", "reliable.bar: 'high' is not a number"),
    ("luck: {at_most: 0.05}\n", "spec: gate and luck grade the runs' paths: name the spec"),
    ("compare: {margin: 0.05}\n", "compare: needs 'baseline'"),
    ("compare: {baseline: model=a, margin: 5}\n", "compare.margin: 5.0 must lie strictly between 0 and 1"),
    ("name: nothing\n", "names no check"),
    ("reliable: [\n", "not valid YAML"),
])
def test_a_bad_rule_exits_2_before_the_ledger_is_opened(tmp_path, rule, message):
    (tmp_path / "rule.yaml").write_text(rule)
    result = CliRunner().invoke(group, ["--ledger", str(tmp_path / "missing.db"), "gate", str(tmp_path / "rule.yaml")])
    assert result.exit_code == 2
    assert message in result.stderr and "no ledger" not in result.stderr
    assert not (tmp_path / "missing.db").exists()


def test_a_toml_rule_is_read_as_toml(demo_folder):
    (demo_folder / "rule.toml").write_text('version = "model=support-desk-v1"\n[reliable]\nbar = 0.3\n')
    assert _cli(demo_folder, "gate", str(demo_folder / "rule.toml")).exit_code == 0
    (demo_folder / "bad.toml").write_text("[reliable\n")
    bad = _cli(demo_folder, "gate", str(demo_folder / "bad.toml"))
    assert bad.exit_code == 2 and "not valid TOML" in bad.stderr


def _batch(led, model, trials):
    led.ingest([Run(scenario=f"s{i}", trial=t, identity=Identity(model=model), outcome=Outcome(passed=True))
                for i in range(3) for t in trials])


def test_a_sealed_rule_holds_only_over_runs_recorded_after_its_seal(tmp_path):
    rule = tmp_path / "rule.yaml"
    rule.write_text("version: model=m\nreliable: {bar: 0.8, prob: 0.9}\nsealed: true\n")
    db = str(tmp_path / "l.db")
    sealed = CliRunner().invoke(group, ["--ledger", db, "gate", str(rule), "--seal"])
    assert sealed.exit_code == 0 and "sealed gate rule" in sealed.output
    with open_ledger(db) as led:
        _batch(led, "m", range(30))
        assert gate(led, str(rule)).holds
        _batch(led, "early", range(30))
    # the same rule judging runs recorded before its seal: sealed too late
    late = tmp_path / "late.yaml"
    late.write_text("version: model=early\nreliable: {bar: 0.8, prob: 0.9}\nsealed: true\n")
    CliRunner().invoke(group, ["--ledger", db, "gate", str(late), "--seal"])
    result = CliRunner().invoke(group, ["--ledger", db, "gate", str(late)])
    assert result.exit_code == 1
    assert "90 of 90 runs of version" in result.output and "were recorded before the seal" in result.output
    # a rule file changed by one byte after sealing has no seal
    rule.write_text(rule.read_text().replace("0.8", "0.7"))
    changed = CliRunner().invoke(group, ["--ledger", db, "gate", str(rule)])
    assert changed.exit_code == 1 and "no seal of this exact rule file" in changed.output


def test_parse_gate_rule_fills_defaults_and_rejects_wrong_types():
    rule = parse_gate_rule({"compare": {"baseline": "model=a"}, "gate": True, "spec": {"tools": ["x"]}})
    assert rule["compare"] == {"baseline": "model=a", "margin": None, "alpha": 0.05, "power": 0.8, "judge": None,
                               "labels": None}
    with pytest.raises(SpecError, match="gate: 'yes' is not true/false"):
        parse_gate_rule({"gate": "yes", "spec": "s.yaml"})
