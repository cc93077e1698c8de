"""Pair each run with the prediction for its cell made before it: what calibration scores.

Pure: the caller reads the prediction documents and the runs with their ingest times from
the ledger; this decides which run is scored against which prediction.

>>> preds = [dict(version="v", scenario="s", condition="", probability=0.8, made_at="2026-01-01T00:00:00+00:00")]
>>> runs = [("v", "s", "", True, "2026-01-02T00:00:00+00:00"), ("v", "s", "", None, "2026-01-02T00:00:00+00:00"),
...         ("v", "s", "", False, "2025-12-31T00:00:00+00:00")]
>>> m = match_predictions(preds, runs)
>>> m.probability.tolist(), m.outcome.tolist(), m.unknowns, m.before_any
([0.8, 0.8], [1.0, 0.0], 1, 1)
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Mapping

import numpy as np

from .._time import utc_time
from ..errors import UsageError
from ._unknown import UnknownPolicy, check_unknown_policy

__all__ = ["PredictionMatch", "match_predictions"]


@dataclass(frozen=True, eq=False)
class PredictionMatch:
    """Per scored run: the probability predicted for it, its outcome, its family and cell.

    ``unknowns`` runs had no known outcome (scored as failures under ``unknown="fail"``,
    left out under ``"exclude"``); ``before_any`` runs were recorded before any prediction
    for their cell and are not scored; ``predictions`` is how many predictions were read.
    """

    probability: np.ndarray
    outcome: np.ndarray
    family: tuple[str | None, ...]
    cell: tuple[tuple[str, str, str], ...]
    predictions: int
    unknowns: int
    before_any: int
    unknown_policy: str

    def describe(self) -> str:
        return (f"{self.outcome.size} runs scored against {self.predictions} predictions; "
                f"{UnknownPolicy.of(self.unknown_policy).describe(self.unknowns)}; {self.before_any} runs recorded "
                "before any prediction for their scenario were not scored")


def _time(value) -> datetime:
    t = utc_time(value)
    if t is None:
        raise UsageError(f"time {value!r} is not an ISO-8601 time")
    return t


def match_predictions(predictions: Iterable[Mapping], runs: Iterable[tuple], *,
                      unknown: UnknownPolicy | str = "fail") -> PredictionMatch:
    """Score each run against the latest prediction for its cell made strictly before it was recorded.

    ``predictions`` are the prediction documents' bodies (``version``, ``scenario``,
    ``condition``, ``probability``, ``made_at``, optional ``family``); ``runs`` are
    ``(version, scenario, condition, passed, recorded_at)`` with ``passed`` True, False or
    None. Times are compared as times, not as strings.
    """
    unknown = check_unknown_policy(unknown)
    by_cell: dict[tuple[str, str, str], list[tuple[datetime, Mapping]]] = {}
    count = 0
    for d in predictions:
        count += 1
        key = (d["version"], d["scenario"], d.get("condition", "") or "")
        by_cell.setdefault(key, []).append((_time(d["made_at"]), d))
    stamps = {}
    for key, preds in by_cell.items():
        preds.sort(key=lambda item: item[0])
        stamps[key] = [t for t, _ in preds]
    probs, outcomes, families, cells = [], [], [], []
    unknowns = before_any = 0
    for version, scenario, condition, passed, recorded in runs:
        key = (version, scenario, condition or "")
        preds = by_cell.get(key)
        if not preds:
            continue
        at = bisect_left(stamps[key], _time(recorded))     # predictions made strictly before
        if at == 0:
            before_any += 1
            continue
        chosen = preds[at - 1][1]
        unknowns += passed is None
        if not unknown.keeps(passed):
            continue
        probs.append(float(chosen["probability"]))
        outcomes.append(0.0 if passed is None else float(bool(passed)))
        families.append(chosen.get("family"))
        cells.append(key)
    return PredictionMatch(np.array(probs, float), np.array(outcomes, float), tuple(families), tuple(cells),
                           count, unknowns, before_any, unknown)
