"""Report sections that come from the other capabilities: the luck rate (grading), the
two-version comparison (comparison) and the suite questions (inference)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..comparison import compare_versions
from ..errors import FlukeError
from ..grading import RunGrade, first_hard_index, grade_run, load_spec, luck_rate
from ..inference import posterior, suite_questions
from ._feed import comparison_from, luck_from, suite_questions_from
from ._headline import headline_from

_NO_SPEC = "no spec given (pass --spec SPEC to grade the runs and show the luck rate)"


def grade_for_report(runs: list, spec_path: str | None) -> tuple[list | None, str | None]:
    """Grades of ``runs`` against the spec at ``spec_path``, or (None, why not).

    >>> grade_for_report([], None)[1]
    'no spec given (pass --spec SPEC to grade the runs and show the luck rate)'
    """
    if not spec_path:
        return None, _NO_SPEC
    spec = load_spec(spec_path)
    return [grade_run(r, spec) for r in runs], None


def stored_grades(ledger: Any, runs: list, spec_digest: str | None = None) -> tuple[list | None, str | None, str]:
    """The grades ``fluke grade`` stored for ``runs``: under ``spec_digest`` (a prefix will do), else
    under the newest stored spec that grades any of them. Returns (grades or None, digest, why not).

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> stored_grades(open_ledger(os.path.join(tempfile.mkdtemp(), "g.db")), [])[2]
    'no grades stored in the ledger (run fluke grade --spec SPEC, or pass --spec SPEC)'
    """
    from ..errors import SelectorError

    docs = ledger.documents("spec")
    if spec_digest is not None:
        found = [d for d in docs if d.digest.startswith(spec_digest)]
        if len(found) != 1:
            held = ", ".join(d.digest[:12] for d in docs) or "none"
            raise SelectorError(f"--spec-digest {spec_digest}: {'no' if not found else len(found)} stored specs "
                                f"match; the ledger holds {held}")
        docs = found
    wanted = {r.hash for r in runs}
    for doc in reversed(docs):  # newest first
        body = ledger.grades(doc.digest)
        grades = [RunGrade.from_dict(body[h]) for h in sorted(wanted & set(body))]
        if grades:
            return grades, doc.digest, ""
    if spec_digest is not None:
        return None, None, f"no grades stored for the selected runs under spec {spec_digest}"
    return None, None, "no grades stored in the ledger (run fluke grade --spec SPEC, or pass --spec SPEC)"


def enrich(data: Any, runs: list, grades: list | None, *, spec_path: str | None, alpha: float, power: float,
           ceiling: float = 5.0, hazard_ceiling: float = 1.3, no_grades: str | None = None,
           suites: dict | None = None) -> Any:
    """``data`` with the luck rate, the two-version comparison and the suite questions added;
    reasons for what is left out go to ``missing``. ``grades`` are the runs' grades (or None, and
    then ``no_grades`` says why)."""
    updates: dict[str, Any] = {}
    missing = dict(data.missing)
    if grades is not None:
        updates["luck"] = luck_from(luck_rate(grades))
        missing.pop("luck", None)
    elif spec_path is None:
        missing["luck"] = no_grades or _NO_SPEC

    versions = [v.version for v in data.versions]
    if len(versions) == 2:
        hard = None
        if grades is not None:
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
