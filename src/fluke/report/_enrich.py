"""Report sections that come from the other capabilities: the luck rate (grading), the
two-version comparison (comparison) and the suite questions (inference)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..comparison import compare_versions
from ..errors import FlukeError
from ..grading import first_hard_index, luck_rate
from ..inference import posterior, suite_questions
from ._feed import comparison_from, luck_from, suite_questions_from
from ._headline import headline_from

_NO_SPEC = "no spec given (pass --spec SPEC to grade the runs and show the luck rate)"


def enrich(data: Any, runs: list, grades: list | None, *, spec_path: str | None, alpha: float, power: float,
           ceiling: float = 5.0, hazard_ceiling: float = 1.3, no_grades: str | None = None,
           suites: dict | None = None, hard: dict | None = None) -> Any:
    """``data`` with the luck rate, the two-version comparison and the suite questions added;
    reasons for what is left out go to ``missing``. ``runs`` are the two versions' runs (or their
    :class:`fluke.analysis.RunFacts`); ``grades`` their grades (or what the luck rate reads of them:
    ``scenario``, ``output_ok``, ``path_ok``), or None, and then ``no_grades`` says why. ``hard``
    maps a failed run's hash to its first hard violation; without it, it comes from ``grades``."""
    updates: dict[str, Any] = {}
    missing = dict(data.missing)
    if grades is not None:
        updates["luck"] = luck_from(luck_rate(grades))
        missing.pop("luck", None)
    elif spec_path is None:
        missing["luck"] = no_grades or _NO_SPEC

    versions = [v.version for v in data.versions]
    if len(versions) == 2:
        if hard is None and grades is not None:
            by_hash = {g.run_hash: g for g in grades}
            hard = {r.hash: first_hard_index(by_hash[r.hash]) for r in runs
                    if r.outcome.passed is False and r.outcome.died_at is None and r.hash in by_hash}
        arm_a = [r for r in runs if r.version == versions[0]]
        arm_b = [r for r in runs if r.version == versions[1]]
        try:
            found = compare_versions(arm_a, arm_b, hard_index=hard, alpha=alpha, power=power, ceiling=ceiling,
                                     hazard_ceiling=hazard_ceiling, rng=np.random.default_rng(0))
        except FlukeError as exc:
            updates["comparison"] = data.comparison.model_copy(update={"note": f"Not compared: {exc}"})
        else:
            labels = {v.version: v.label for v in data.versions}
            updates["comparison"] = comparison_from(((labels[versions[0]], versions[0]),
                                                     (labels[versions[1]], versions[1])), found)

    if data.suite_board:
        blocks = []
        for board in data.suite_board:
            answers = (suites or {}).get(board.version)
            if answers is None:
                belief = posterior([r.successes for r in board.rows], [r.trials for r in board.rows])
                answers = suite_questions(belief, bar=board.bar)
            blocks.append(suite_questions_from(answers, version=board.version,
                                               label=board.label, conditional_on=(
                                                   f"version {board.version[:12]} ({board.label}); uniform prior "
                                                   f"per scenario; bar {board.bar:g}")))
        updates["suite_questions"] = blocks
        missing.pop("suite_questions", None)
    data = data.model_copy(update={**updates, "missing": missing})
    return data.model_copy(update={"headline": headline_from(data)})
