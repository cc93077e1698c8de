"""A pairwise judge with a planted taste for the first slot: balanced order removes it from the
verdict, and the positional bias is reported."""

import pytest

from fluke.judging import FakeJudge, JudgeConfig, judge_pairs, positional_bias
from fluke.record import AgentMessage, Outcome, Run

PAIRS = 400
FIRST_SLOT = 0.4   # the judge picks the first slot 40% of the time whatever it is shown


def _pairs():
    """Two equally good agents: in each pair both pass or both fail, so neither should win."""
    out = []
    for i in range(PAIRS):
        passed = i % 3 != 0
        a = Run(scenario=f"s{i}", events=[AgentMessage(text=f"A says {i}")], outcome=Outcome(passed=passed))
        b = Run(scenario=f"s{i}", events=[AgentMessage(text=f"B says {i}")], outcome=Outcome(passed=passed))
        out.append((a, b))
    return out


@pytest.fixture(scope="module")
def verdicts():
    pairs = _pairs()
    judge = FakeJudge.from_runs([r for p in pairs for r in p], first_slot=FIRST_SLOT, seed=5)
    config = JudgeConfig(model="fake", prompt="Which answer is better? FIRST or SECOND.", endpoint="fake",
                         pairwise=True, replicates=2)
    return judge_pairs(pairs, config, judge), judge_pairs(pairs, config, judge, balance=False)


def _a_share(vs):
    a = sum(v.a_wins for v in vs)
    return a / sum(v.a_wins + v.b_wins for v in vs)


def test_unbalanced_order_hands_the_first_slot_a_win(verdicts):
    _, unbalanced = verdicts
    # expected share for A shown first: FIRST_SLOT + (1 - FIRST_SLOT) / 2 = 0.7
    assert _a_share(unbalanced) == pytest.approx(FIRST_SLOT + (1 - FIRST_SLOT) / 2, abs=0.05)


def test_balanced_order_removes_the_first_slot_preference_from_the_verdict(verdicts):
    balanced, _ = verdicts
    share = _a_share(balanced)
    # two equal agents: 0.5, within 3 binomial standard errors of 2 x PAIRS judgments
    assert abs(share - 0.5) < 3 * (0.25 / (2 * PAIRS)) ** 0.5


def test_the_report_shows_the_positional_bias(verdicts):
    balanced, _ = verdicts
    bias = positional_bias(balanced)
    assert bias.n == 2 * PAIRS
    assert bias.value == pytest.approx(FIRST_SLOT + (1 - FIRST_SLOT) / 2, abs=0.05)
    assert bias.low > 0.5          # the interval excludes no bias


def test_each_pair_sits_in_both_orders_across_its_replicates(verdicts):
    balanced, _ = verdicts
    # with K = 2 each pair is shown once A-first and once B-first; the planted judge picks the
    # first slot in both, which the verdict scores as one win each
    config_first = FakeJudge({}, first_slot=1.0)
    pairs = _pairs()[:6]
    config = JudgeConfig(model="fake", prompt="p", endpoint="fake", pairwise=True, replicates=2)
    for v in judge_pairs(pairs, config, config_first):
        assert (v.a_wins, v.b_wins, v.winner) == (1, 1, "tie")


def test_the_pairs_verb_reports_the_bias_and_a_verdict_free_of_it(tmp_path):
    import json

    from click.testing import CliRunner

    from fluke.cli import group
    from fluke.ledger import open_ledger
    from fluke.record import Identity

    db = str(tmp_path / "p.db")
    with open_ledger(db) as led:   # two equally good versions on the same 300 scenarios
        led.ingest([Run(scenario=f"s{i}", identity=Identity(model=m), events=[AgentMessage(text=f"{m} {i}")],
                        outcome=Outcome(passed=i % 3 != 0)) for m in ("a", "b") for i in range(300)])
    (tmp_path / "pair.yaml").write_text("model: fake\nendpoint: fake\nprompt: FIRST or SECOND?\npairwise: true\n"
                                        f"replicates: 2\ntarget: {{first_slot: {FIRST_SLOT}, seed: 2}}\n")
    out = CliRunner().invoke(group, ["--ledger", db, "--json", "judge", "pairs", str(tmp_path / "pair.yaml"),
                                     "model=a", "model=b"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["pairs"] == 300 and doc["balanced"]
    assert doc["first_slot_share"]["value"] == pytest.approx(FIRST_SLOT + (1 - FIRST_SLOT) / 2, abs=0.05)
    assert doc["a_share"]["low"] <= 0.5 <= doc["a_share"]["high"]          # equal versions: no winner
    text = CliRunner().invoke(group, ["--ledger", db, "judge", "pairs", str(tmp_path / "pair.yaml"),
                                      "model=a", "model=b"]).output
    assert "too small to tell apart" in text and "the judge favours a slot" in text
    with open_ledger(db) as led:
        digest = doc["judge"]
        stored = led.grades(digest)
    assert len(stored) == 300 and all(len(b["slots"]) == 2 for b in stored.values())
