"""JUnit XML from gate and from the pytest plugin, read back with junitparser."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from fluke.cli import group

junitparser = pytest.importorskip("junitparser")

#: On the planted ledger (version b passes 3 of 10 per scenario, a forbidden call every fifth
#: run): reliable fails, the not-worse comparison against a fails, luck is judged on the spec.
RULE = """name: release gate
version: model=b
spec: spec.yaml
reliable: {bar: 0.9, prob: 0.95}
compare: {baseline: model=a, margin: 0.05}
luck: {at_most: 0.5}
"""


def _cases(xml: str):
    suites = junitparser.JUnitXml.fromstring(xml)
    [suite] = list(suites)
    return suite, {case.name.split(":")[0]: case for case in suite}


def _result(case):
    [result] = case.result or [None]
    return result


def test_gate_junit_has_a_case_per_check_with_failures_and_reasons(planted, tmp_path):
    path, spec = planted
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE, encoding="utf-8")
    out = CliRunner().invoke(group, ["--ledger", str(path), "gate", str(rule), "--format", "junit"])
    assert out.exit_code == 1, out.stderr
    doc = CliRunner().invoke(group, ["--ledger", str(path), "--json", "gate", str(rule)])
    import json

    decided = {c["check"]: c for c in json.loads(doc.stdout)["checks"]}
    suite, cases = _cases(out.stdout)
    assert set(cases) == set(decided) and suite.tests == len(decided)
    for check, claim in decided.items():
        result = _result(cases[check])
        if claim["status"] == "holds":
            assert result is None
        elif claim["status"] == "fails":
            assert isinstance(result, junitparser.Failure)
            first = (claim["reasons"] or [claim["found"]])[0]
            assert result.message == (first if first.startswith("fails: ") else f"fails: {first}")
            assert not result.message.startswith("fails: fails:")
            for reason in claim["reasons"]:
                assert reason in result.text
            assert f"rests on: {claim['rests_on']}" in result.text
        else:
            assert isinstance(result, junitparser.Skipped)
            assert result.message.startswith("too small to tell: ")
    assert isinstance(_result(cases["reliable"]), junitparser.Failure)
    assert suite.failures == sum(c["status"] == "fails" for c in decided.values())
    assert suite.skipped == sum(c["status"] == "too small to tell" for c in decided.values())


def test_a_claim_too_small_to_tell_is_skipped_with_its_reason(tmp_path):
    from fluke.ledger import open_ledger
    from fluke.record import Identity, Outcome, Run

    path = tmp_path / "small.db"
    with open_ledger(str(path)) as ledger:
        ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True))
                       for t in range(5)])
    rule = tmp_path / "rule.yaml"
    rule.write_text("reliable: {bar: 0.9}\n", encoding="utf-8")
    out = tmp_path / "g.xml"
    result = CliRunner().invoke(group, ["--ledger", str(path), "export", "--format", "junit", "--rule", str(rule),
                                        "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    suite, cases = _cases(out.read_text(encoding="utf-8"))
    skipped = _result(cases["reliable"])
    assert isinstance(skipped, junitparser.Skipped) and suite.skipped == 1 and suite.failures == 0
    # 5 of 5 passed: P(θ > 0.9) = 1 − 0.9⁶ under the uniform prior
    assert f"P(θ > 0.9) = {1 - 0.9 ** 6:.3f}" in skipped.message
    assert "about 23 more clean runs" in skipped.message
