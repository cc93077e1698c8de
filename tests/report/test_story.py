"""The report tells its story at a glance: headline claims, the paired view, readable boards."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from fluke.cli import group

from fluke.analysis import run_demo
from fluke.report import headline_from

from ..conftest import SHARED, need


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return run_demo(tmp_path_factory.mktemp("demo"), seed=7)


def test_the_headline_answers_each_question_in_four_parts(demo):
    data = demo.data
    claims = {c.question: c for c in data.headline}
    assert data.headline == headline_from(data)  # what --json carries is what the page shows
    assert list(claims) == ["Did the pass rate change?", "What does a success cost, and which version should ship?",
                            "Which scenarios clear the bar?", "How often was a pass luck?",
                            "Where does the change sit?"]
    c = data.comparison
    verdict = claims["Did the pass rate change?"]
    # the limit worded as compare words it for the verdict: after *different*, what the design had
    # power for, never "could not have detected … below" beside a difference that was detected
    assert c.verdict == "different" and f"{c.verdict}; {c.limit_text}." in verdict.answer
    assert f"power for a regression of {c.detection_limit:.1f} points or more" in c.limit_text.replace("only ", "")
    assert "could not have" not in verdict.answer
    assert f"B − A = {c.difference:+.1f} points" in verdict.infer
    # What happened is the counts, recomputed here from the boards.
    for arm, board in zip(c.arms, data.suite_board, strict=True):
        k = sum(r.successes for r in board.rows)
        side = 'AB'[c.arms.index(arm)]
        assert f"{arm.label} ({side}): {100 * k / arm.runs:.1f}% ({k}/{arm.runs}) passed" in verdict.happened
    assert claims["Where does the change sit?"].answer.endswith(f"({demo.planted_step}).")
    said = [c for c in data.headline if c.question == "How often was a pass luck?"]
    assert len(said) == len(data.luck) == 2     # one per graded version, each naming the spec it rests on
    for claim, luck in zip(said, data.luck, strict=True):
        p = luck.pooled
        assert claim.answer.startswith(f"{luck.label}: {p.lucky} of {p.green} green runs")
        assert claim.answer.endswith("broke spec support desk.") and luck.spec_digest[:12] in claim.conditional_on
    for claim in data.headline:
        assert claim.happened and claim.infer and claim.conditional_on and claim.carried


def test_p_b_better_agrees_with_monte_carlo():
    from fluke.analysis._report_paired import p_b_better

    rng = np.random.default_rng(11)
    for k_a, n_a, k_b, n_b in [(3, 10, 7, 10), (20, 24, 14, 24), (0, 1, 1, 1), (5, 5, 5, 5)]:
        draws = 200_000
        hits = rng.beta(1 + k_b, 1 + n_b - k_b, draws) > rng.beta(1 + k_a, 1 + n_a - k_a, draws)
        share = hits.mean()
        assert abs(p_b_better(k_a, n_a, k_b, n_b) - share) < 4 * np.sqrt(share * (1 - share) / draws) + 1e-4


def test_the_demo_paired_view_sorts_by_evidence(demo):
    view = demo.data.paired
    assert not view.single_run and len(view.rows) == 48
    strength = [min(r.p_b_better, 1 - r.p_b_better) for r in view.rows]
    assert strength == sorted(strength)
    assert view.counts["worse"] == sum(r.p_b_better <= 0.05 for r in view.rows) > view.counts["better"]


TAU2 = SHARED / "data/tau2-bench/src/experiments/model_training/results"


def tau2_retail_report(tmp_path):
    """gpt-4.1 against its fine-tune on τ²-bench retail (one run per task), written by ``fluke report``."""
    base = need(TAU2 / "gpt-4.1_retail_defautl_gpt-4.1_1trials.json")
    tuned = need(TAU2 / "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm_retail_default_gpt-4.1_1trials.json")
    ledger, out = str(tmp_path / "t2.db"), tmp_path / "t2.html"
    runner = CliRunner()
    for path in (base, tuned):
        assert runner.invoke(group, ["--ledger", ledger, "ingest", str(path)]).exit_code == 0
    result = runner.invoke(group, ["--ledger", ledger, "--json", "report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output), out, base, tuned


def test_one_run_per_task_pairs_into_counts(tmp_path):
    doc, out, base, tuned = tau2_retail_report(tmp_path)
    # The oracle: the files' own rewards, task by task.
    def passed(path):
        return {str(s["task_id"]): s["reward_info"]["reward"] >= 1 for s in json.loads(path.read_text())["simulations"]}
    a, b = passed(base), passed(tuned)
    expected = {"broken": sum(a[t] and not b[t] for t in a), "fixed": sum(b[t] and not a[t] for t in a),
                "both fail": sum(not a[t] and not b[t] for t in a), "both pass": sum(a[t] and b[t] for t in a)}
    view = doc["paired"]
    assert view["single_run"] is True and view["counts"] == expected
    assert sum(expected.values()) == 40 and expected["broken"] > 0 and expected["fixed"] > 0
    html = out.read_text()
    assert 'data-chart="suite-board' not in html and 'data-chart="paired' not in html  # counts, not forty bars
    assert html.count('class="moves one-run"') == 2


def test_report_uses_the_grades_stored_in_the_ledger(demo, tmp_path):
    from fluke.analysis import report
    from fluke.errors import SelectorError
    from fluke.ledger import open_ledger

    with open_ledger(str(demo.ledger)) as ledger:
        digest = ledger.documents("spec")[-1].digest
        stored = report(ledger, out=tmp_path / "r.html", versions=["model=support-desk-v1", "model=support-desk-v2"])
        again = report(ledger, out=tmp_path / "s.html", spec_digest=digest[:10],
                       versions=["model=support-desk-v1", "model=support-desk-v2"])
        with pytest.raises(SelectorError, match="no stored specs match"):
            report(ledger, out=tmp_path / "t.html", spec_digest="0000000000")
    # No --spec given: the luck rate is the one the demo computed from the grades it graded and stored.
    assert stored.data.luck == demo.data.luck == again.data.luck
    assert all(f"sha256 {digest[:12]}" in luck.conditional_on for luck in stored.data.luck)
    assert "luck" not in stored.data.missing


def tau_four_ways(path, ledger_path):
    """τ-bench gpt-4o airline with each trial recorded as its own version: one agent four times."""
    from fluke.adapters import read_file
    from fluke.ledger import open_ledger

    with open_ledger(str(ledger_path)) as ledger:
        for t in range(4):
            ledger.ingest([r for r in read_file(path, identity={"model": f"gpt-4o trial {t}"}) if r.trial == t])
    return ledger_path


def test_three_or_more_versions_get_the_leaderboard(tmp_path):
    from fluke.analysis import leaderboard, report
    from fluke.ledger import open_ledger

    from ..conftest import TAU_AIRLINE

    path = tau_four_ways(need(TAU_AIRLINE), tmp_path / "four.db")
    with open_ledger(str(path)) as ledger:
        result = report(ledger, out=tmp_path / "lb.html")
        oracle = leaderboard(ledger, costs=False).payload()
    lb = result.data.leaderboard
    assert [(r.label, r.rank_low, r.rank_high, r.group) for r in lb.rows] == [
        (v["label"], *v["rank_interval"], v["group"] or "") for v in oracle["versions"]]
    assert sum(r.passes for r in lb.rows) == 84 and len(lb.rows) == 4  # the file's 84 passes of 200
    assert result.data.paired is None and "leaderboard" not in result.data.missing
    html = (tmp_path / "lb.html").read_text()
    assert html.count('data-chart="leaderboard"') == 1
    assert result.data.headline[0].question == "Which version is best?"
