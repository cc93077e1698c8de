"""The report tells its story at a glance: headline claims, the paired view, readable boards."""

from __future__ import annotations

import pytest

from fluke.report import headline_from, run_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return run_demo(tmp_path_factory.mktemp("demo"), seed=7)


def test_the_headline_answers_each_question_in_four_parts(demo):
    data = demo.data
    claims = {c.question: c for c in data.headline}
    assert data.headline == headline_from(data)  # what --json carries is what the page shows
    assert list(claims) == ["Did the pass rate change?", "Which scenarios clear the bar?",
                            "How often was a pass luck?", "Where does the change sit?"]
    c = data.comparison
    verdict = claims["Did the pass rate change?"]
    assert f"{c.verdict}; a difference below {c.detection_limit:.1f} points" in verdict.answer
    assert f"B − A = {c.difference:+.1f} points" in verdict.infer
    # What happened is the counts, recomputed here from the boards.
    for arm, board in zip(c.arms, data.suite_board):
        k = sum(r.successes for r in board.rows)
        assert f"{arm.label} ({'AB'[c.arms.index(arm)]}): {100 * k / arm.runs:.1f}% ({k}/{arm.runs}) passed" in verdict.happened
    assert claims["Where does the change sit?"].answer.endswith(f"({demo.planted_step}).")
    luck = data.luck.pooled
    assert claims["How often was a pass luck?"].answer.startswith(f"{luck.lucky} of {luck.green} green runs")
    for claim in data.headline:
        assert claim.happened and claim.infer and claim.conditional_on and claim.carried
