"""A gate rule names a judge and a floor; a judge below it makes the check too small to tell, with
the labels that would settle it."""

import pytest

from fluke.analysis import gate
from fluke.analysis._judge import judge
from fluke.errors import SpecError
from fluke.judging import JudgeConfig
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run


@pytest.fixture()
def judged(tmp_path):
    led = open_ledger(str(tmp_path / "g.db"))
    runs = [Run(scenario=f"s{i}", identity=Identity(model="agent"), outcome=Outcome(passed=(i * 37) % 10 < 6))
            for i in range(300)]
    led.ingest(runs)
    good = JudgeConfig(model="good-judge", prompt="p", endpoint="fake", replicates=3,
                       target={"sensitivity": 0.995, "specificity": 0.995, "seed": 1})
    noisy = JudgeConfig(model="noisy-judge", prompt="p", endpoint="fake", replicates=3,
                        target={"sensitivity": 0.8, "specificity": 0.6, "seed": 1})
    judge(led, good)
    judge(led, noisy)
    yield led, runs, tmp_path
    led.close()


def _labels(tmp_path, runs, n):
    path = tmp_path / f"labels{n}.csv"
    path.write_text("run,label\n" + "".join(f"{r.hash},{'pass' if r.outcome.passed else 'fail'}\n" for r in runs[:n]))
    return path.name


def _rule(tmp_path, body):
    path = tmp_path / "rule.yaml"
    path.write_text(body, encoding="utf-8")
    return str(path)


def test_a_consistent_judge_that_agrees_with_people_may_gate(judged):
    led, runs, tmp = judged
    result = gate(led, _rule(tmp, f"judge: {{judge: good-judge, labels: {_labels(tmp, runs, 120)}}}\n"))
    claim = result.claims[0]
    assert claim.check == "judge" and claim.status == "holds", claim.found
    assert "120 human labels" in claim.rests_on


def test_too_few_labels_is_too_small_to_tell_with_the_labels_that_would_settle_it(judged):
    led, runs, tmp = judged
    labels = _labels(tmp, runs, 20)
    result = gate(led, _rule(tmp, f"judge: {{judge: good-judge, labels: {labels}}}\non_inconclusive: fail\n"))
    assert result.status == "too small to tell" and not result.holds
    assert result.claims[0].runs_needed >= 50
    # under the default (on_inconclusive: warn) the gate lets it pass, with a warning
    warned = gate(led, _rule(tmp, f"judge: {{judge: good-judge, labels: {labels}}}\n"))
    assert warned.status == "too small to tell" and warned.holds
    assert warned.headline().startswith("fluke gate PASSES WITH A WARNING")


def test_a_judge_that_disagrees_with_itself_does_not_gate(judged):
    led, runs, tmp = judged
    result = gate(led, _rule(tmp, f"judge: {{judge: noisy-judge, labels: {_labels(tmp, runs, 120)}}}\n"))
    claim = result.claims[0]
    assert claim.status == "too small to tell" and "flip" in claim.found and claim.runs_needed is None


def test_the_judge_section_is_validated_before_the_ledger_is_read(judged):
    led, _, tmp = judged
    with pytest.raises(SpecError, match="judge.kapa: unknown key"):
        gate(led, _rule(tmp, "judge: {judge: good-judge, kapa: 0.6}\n"))
    with pytest.raises(SpecError, match="judge: needs 'judge'"):
        gate(led, _rule(tmp, "judge: {labels: x.csv}\n"))


def test_a_judge_named_in_a_rule_sealed_before_the_runs_is_frozen_by_the_existing_seal(tmp_path):
    from fluke.analysis import seal_gate

    good = JudgeConfig(model="good-judge", prompt="p", endpoint="fake", replicates=3,
                       target={"sensitivity": 0.995, "specificity": 0.995, "seed": 1})
    led = open_ledger(str(tmp_path / "s.db"))
    rule = _rule(tmp_path, f"judge: {{judge: {good.digest}, labels: labels120.csv}}\nsealed: true\n")
    seal_gate(led, rule)                      # the judge's digest is known before any run exists
    runs = [Run(scenario=f"s{i}", identity=Identity(model="agent"), outcome=Outcome(passed=(i * 37) % 10 < 6))
            for i in range(300)]
    led.ingest(runs)
    judge(led, good)
    _labels(tmp_path, runs, 120)
    result = gate(led, rule)
    assert [c.status for c in result.claims] == ["holds", "holds"] and result.holds
    # the same rule with one character more in the judge's prompt names another digest: not that judge
    other = good.model_copy(update={"prompt": "p."})
    judge(led, other)
    assert other.digest != good.digest
    led.close()


def test_labels_not_drawn_by_fluke_are_flagged(judged):
    from fluke.analysis import judge_audit

    led, runs, tmp = judged
    audit = judge_audit(led, "good-judge", str(tmp / _labels(tmp, runs, 60)))
    assert any("60 of the 60 labelled runs were not drawn" in n for n in audit.notes)
