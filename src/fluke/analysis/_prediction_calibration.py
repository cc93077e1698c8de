"""Were the recorded predictions any good? (``calibration``): each run scored against the latest
prediction for its cell made before the run was recorded.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "cal.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=0, identity=Identity(model="m"), outcome=Outcome(passed=True))])
>>> version = ledger.versions()[0].version
>>> _ = ledger.put_document("prediction", {"version": version, "scenario": "s", "condition": "",
...                                        "probability": 0.8, "made_at": "2000-01-01T00:00:00Z"})
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t != 2))
...                    for t in (1, 2)])
>>> result = calibration(ledger)
>>> result.scored_runs, round(result.report.overall.brier, 3)
(3, 0.24)
>>> print(result.render())  # doctest: +ELLIPSIS
3 runs scored against predictions made before they were recorded. Brier 0.2400 ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..format import fluke_command, fmt_is, fmt_num, fmt_share
from ._document import Column, Table, line, note
from ._result import Result
from ._select import require_runs
from ._unknowns import check_unknown, closing_notes, unknown_fields, unknown_note


def read_prediction_matches(ledger, version: str | None = None, *, unknown: str = "fail"):
    """Pair each run with the latest prediction for its (version, scenario, condition) made before
    the run was recorded (:func:`fluke.inference.match_predictions` decides; this reads the ledger);
    a run whose outcome is unknown is a failure (``unknown="fail"``) or is left out (``"exclude"``).

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> read_prediction_matches(open_ledger(os.path.join(tempfile.mkdtemp(), "m.db"))).predictions
    0
    """
    from ..inference import match_predictions as pair

    docs = [d.body for d in ledger.documents("prediction")]
    if version:
        wanted = ledger.resolve_version(version)
        docs = [d for d in docs if d["version"] == wanted]

    def runs():
        for v in sorted({d["version"] for d in docs}):
            times = ledger.recorded_times(version=v)
            for run in ledger.runs(version=v):
                yield v, run.scenario, run.condition_key(), run.outcome.passed, times[run.hash]

    return pair(docs, runs(), unknown=check_unknown(unknown))


def _score(s) -> dict[str, Any]:
    d = s.decomposition
    return dict(predictions=s.predictions, brier=s.brier, baseline_brier=s.baseline_brier, skill=s.skill,
                reliability=d.reliability, resolution=d.resolution, uncertainty=d.uncertainty,
                within_bin=d.within_bin, z=s.test.statistic, pvalue=s.test.pvalue,
                expected_brier=s.test.expected_brier, verdict=s.verdict, table=s.table.rows())


@dataclass(frozen=True)
class CalibrationResult(Result):
    """The Brier score of the matched predictions, the always-the-average baseline beside it, a
    reliability table overall and by family, and Spiegelhalter's test (``report`` is ``None`` when
    no run has been scored yet). ``unknowns`` runs after a prediction had no known outcome; under
    ``unknown_policy`` ``"fail"`` they are scored as failures, under ``"exclude"`` left out."""

    kind = "calibration"
    predictions: int
    scored_runs: int
    unknowns: int
    report: Any = None   # fluke.inference.CalibrationReport
    unknown_policy: str = "fail"
    before_any: int = 0  # runs recorded before any prediction for their cell (not scored)
    ledger: str | None = None  # its URL, so that the hint names it

    def payload(self) -> dict[str, Any]:
        r = self.report
        return {"predictions": self.predictions, "scored_runs": self.scored_runs, "before_any": self.before_any,
                **unknown_fields(self.unknowns, self.unknown_policy),
                "overall": _score(r.overall) if r else None,
                "by_family": {f: _score(s) for f, s in r.by_family.items()} if r else {}}

    def blocks(self) -> list:
        r = self.report
        if r is None:
            return [line(f"nothing to score yet: {self.predictions} predictions, and no run to score was recorded "
                         f"after one (ingest the next batch, then: {fluke_command(self.ledger, 'calibration')})"),
                    unknown_note(self.unknowns, self.unknown_policy)]
        o = r.overall
        out: list = [line(f"{o.predictions} runs scored against predictions made before they were recorded. "
                          f"Brier {o.brier:.4f} (if the predictions were right: {o.test.expected_brier:.4f} ± "
                          f"{o.test.brier_sd:.4f}); always predicting the average pass rate {r.base_rate:.3f}: "
                          f"{o.baseline_brier:.4f}; skill {fmt_num(o.skill, 3)}. Verdict: {o.verdict} "
                          f"(Spiegelhalter z = {fmt_num(o.test.statistic, 2)}, "
                          f"{fmt_is('p', o.test.pvalue, kind='p')}).",
                          style="bold")]
        for name, s in [("all", o)] + sorted(r.by_family.items()):
            title = f"reliability: {name}" + ("" if name == "all" else
                                               f" (Brier {s.brier:.4f}, baseline {s.baseline_brier:.4f}, {s.verdict})")
            rows = [[f"{b['lower']:.1f}–{b['upper']:.1f}", str(b["count"]), f"{b['mean_forecast']:.3f}",
                     fmt_share(b["passes"], b["count"])] for b in s.table.rows()]
            out.append(Table(title, [Column("predicted", "right", key=True), Column("runs", "right"),
                                     Column("mean prediction", "right"), Column("passed", "right")],
                             rows, limit=None, more="bins"))
        out += closing_notes(["each run scored against the latest prediction for its version, scenario and "
                              "condition made before the run was recorded", "runs independent given the predictions",
                              f"Spiegelhalter's test at α = {r.alpha:g}"], self.unknowns, self.unknown_policy)
        if self.before_any:
            out.append(
                note(f"{self.before_any} runs recorded before any prediction for their scenario were not scored")
            )
        out.append(note("A predictor that always says the average is calibrated and useless: compare the Brier "
                        "score with the baseline, not only with the reliability table."))
        return out


def calibration(ledger, *, version: str | None = None, bins: int = 10, unknown: str = "fail") -> CalibrationResult:
    """Score the predictions recorded in ``ledger`` (only those for ``version`` when given) against
    the runs recorded after them, in ``bins`` forecast bins; a run whose outcome is unknown is
    scored as a failure (``unknown="fail"``) or left out (``"exclude"``)."""
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= 50:
        raise UsageError(f"bins={bins!r} must be a whole number from 1 to 50")
    unknown = check_unknown(unknown)
    require_runs(ledger)
    m = read_prediction_matches(ledger, version, unknown=unknown)
    report = None
    if m.outcome.size:
        from ..inference import score_predictions

        report = score_predictions(m.probability, m.outcome, families=list(m.family), bins=bins)
    return CalibrationResult(m.predictions, int(m.outcome.size), m.unknowns, report, unknown, m.before_any,
                             getattr(ledger, "url", None))
