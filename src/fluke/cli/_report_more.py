"""Sections of ``fluke report`` that come from the other capabilities, where this build has them.

Each capability is imported lazily: a build without it leaves its section *not computed*
with the reason, and the report still renders.
"""

from __future__ import annotations

from typing import Any

from ..errors import FlukeError


def _missing(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return True
    return False


def grade(runs: list, spec_path: str | None) -> tuple[list | None, str | None]:
    """Grades of ``runs`` against the spec, or (None, why not)."""
    if not spec_path:
        return None, "no spec given (pass --spec SPEC to grade the runs and show the luck rate)"
    if _missing("fluke.grading"):
        raise FlukeError("--spec needs fluke.grading, which this build lacks")
    from ..grading import grade_run, load_spec

    spec = load_spec(spec_path)
    return [grade_run(r, spec) for r in runs], None


def enrich(data: Any, runs: list, grades: list | None, *, spec_path: str | None, alpha: float, power: float,
           ceiling: float) -> Any:
    """``data`` with the luck rate, the two-version comparison and the suite questions added
    where their capabilities exist; reasons for what is left out go to ``missing``."""
    from ..report import board_from, comparison_from, luck_from, suite_questions_from

    updates: dict[str, Any] = {}
    missing = dict(data.missing)
    if grades is not None:
        from ..grading import luck_rate

        updates["luck"] = luck_from(luck_rate(grades))
        missing.pop("luck", None)
    elif spec_path is None:
        missing["luck"] = "no spec given (pass --spec SPEC to grade the runs and show the luck rate)"

    versions = [v.version for v in data.versions]
    if len(versions) == 2 and not _missing("fluke.comparison"):
        try:
            from ._compare import survival_comparison
        except ImportError:
            survival_comparison = None
        if survival_comparison is not None:
            hard = None
            if grades is not None:
                from ..grading import first_hard_index

                by_hash = {g.run_hash: g for g in grades}
                hard = {r.hash: first_hard_index(by_hash[r.hash]) for r in runs
                        if r.outcome.passed is False and r.outcome.died_at is None}
            arm_a = [r for r in runs if r.version == versions[0]]
            arm_b = [r for r in runs if r.version == versions[1]]
            try:
                result, steps, *_ = survival_comparison(arm_a, arm_b, hard_index=hard, alpha=alpha, power=power,
                                                        ceiling=ceiling)
            except FlukeError as exc:
                updates["comparison"] = data.comparison.model_copy(update={"note": f"Not compared: {exc}"})
            else:
                labels = {v.version: v.label for v in data.versions}
                updates["comparison"] = comparison_from(((labels[versions[0]], versions[0]),
                                                         (labels[versions[1]], versions[1])), result, steps)

    try:
        from ..inference import posterior, suite_questions
    except ImportError:
        posterior = suite_questions = None
    if posterior is not None and data.suite_board:
        boards, blocks = [], []
        for board in data.suite_board:
            cells = [(r.scenario, r.condition, r.successes, r.trials) for r in board.rows]
            belief = posterior([c[2] for c in cells], [c[3] for c in cells])
            boards.append(board_from(belief, cells, version=board.version, label=board.label, bar=board.bar,
                                     level=board.level, conditional_on=board.conditional_on))
            blocks.append(suite_questions_from(suite_questions(belief, bar=board.bar), version=board.version,
                                               label=board.label, conditional_on=(
                                                   f"version {board.version[:12]} ({board.label}); uniform prior "
                                                   f"per scenario; bar {board.bar:g}")))
        updates["suite_board"], updates["suite_questions"] = boards, blocks
        missing.pop("suite_questions", None)
    return data.model_copy(update={**updates, "missing": missing})
