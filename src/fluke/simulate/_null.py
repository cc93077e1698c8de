"""Null calibration on the staged workload: many unchanged pairs, compared in one batch.

>>> result = calibrate_null(20, tasks=10, runs_per_task=10, rng=np.random.default_rng(0))
>>> result.calibration.pairs, result.verdicts["different"] + result.verdicts["no significant difference"] + result.verdicts["too small to tell"]
(20, 20)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..comparison import (
    DIFFERENT,
    NO_DIFFERENCE,
    TOO_SMALL,
    NullCalibration,
    fisher_exact_many,
    logrank_batch,
    null_calibration,
)
from ..comparison._verdict import _z
from ._staged import BASELINE_RATES, STAGES, draw_failures

__all__ = ["NullPairs", "NullRun", "calibrate_null", "null_pairs"]


@dataclass(frozen=True)
class NullPairs:
    """``pairs`` unchanged A vs A′ comparisons as 2-D arrays (one row per pair)."""

    time: np.ndarray
    died: np.ndarray
    group: np.ndarray
    strata: np.ndarray


def null_pairs(pairs: int, *, tasks: int = 50, runs_per_task: int = 40,
               rates: dict[str, float] = BASELINE_RATES, rng: np.random.Generator) -> NullPairs:
    """Draw ``pairs`` independent pairs of arms with the same rates (nothing changed).

    >>> d = null_pairs(2, tasks=3, runs_per_task=4, rng=np.random.default_rng(0))
    >>> d.time.shape, int(d.group[0].sum()), d.strata[1, :4].tolist()
    ((2, 24), 12, [0, 0, 0, 0])
    """
    if pairs < 1:
        raise ValueError(f"pairs={pairs} must be at least 1")
    if tasks < 1 or runs_per_task < 1:
        raise ValueError(f"tasks={tasks} and runs_per_task={runs_per_task} must be at least 1")
    per_arm = tasks * runs_per_task
    stage = draw_failures(rates, (pairs, 2 * per_arm), rng=rng)
    died = stage >= 0
    time = np.where(died, stage + 1, len(STAGES) + 1)
    group = np.broadcast_to(np.arange(2 * per_arm) >= per_arm, died.shape)
    strata = np.broadcast_to(np.tile(np.repeat(np.arange(tasks), runs_per_task), 2), died.shape)
    return NullPairs(time, died, group, strata)


@dataclass(frozen=True)
class NullRun:
    """The calibration, the verdict counts and the range of detection limits over the pairs.

    ``step_alarms`` counts the pairs where some stage's per-step BH q-value fell below alpha.
    """

    calibration: NullCalibration
    verdicts: dict[str, int]
    limit_min: float
    limit_max: float
    pvalues: np.ndarray
    tasks: int
    runs_per_task: int
    ceiling: float
    step_alarms: int = 0


def calibrate_null(pairs: int = 200, *, tasks: int = 50, runs_per_task: int = 40,
                   rates: dict[str, float] = BASELINE_RATES, alpha: float = 0.05, power: float = 0.8,
                   ceiling: float = 1.3, bins: int = 20, step_tests: bool = True,
                   rng: np.random.Generator) -> NullRun:
    """Simulate ``pairs`` unchanged pairs, compare each by the stratified log-rank, calibrate.

    With ``step_tests`` it also runs the per-step Fisher tests (BH within each pair) and counts
    the pairs where some step came out below alpha.
    """
    # in chunks of about two million episodes, so 10,000 pairs fit in memory
    chunk = max(1, 2_000_000 // (2 * tasks * runs_per_task))
    pvalue, deaths = np.empty(pairs), np.empty(pairs, dtype=np.int64)
    step_alarms = 0
    for start in range(0, pairs, chunk):
        stop = min(pairs, start + chunk)
        data = null_pairs(stop - start, tasks=tasks, runs_per_task=runs_per_task, rates=rates, rng=rng)
        _, pvalue[start:stop], deaths[start:stop] = logrank_batch(data.time, data.died, data.group, data.strata)
        if step_tests:
            step_alarms += int((_step_qvalues(data) < alpha).any(axis=1).sum())
    with np.errstate(divide="ignore"):
        limit = np.exp(2 * _z(alpha, power) / np.sqrt(deaths))
    different = pvalue < alpha
    too_small = ~different & (limit > ceiling)
    verdicts = {DIFFERENT: int(different.sum()), NO_DIFFERENCE: int((~different & ~too_small).sum()),
                TOO_SMALL: int(too_small.sum())}
    usable = np.isfinite(pvalue)
    cal = null_calibration(pvalue[usable], alpha=alpha, bins=bins)
    return NullRun(cal, verdicts, float(limit.min()), float(limit.max()), pvalue, tasks, runs_per_task,
                   ceiling, step_alarms)


def _step_qvalues(data: NullPairs) -> np.ndarray:
    """Per pair and stage: Fisher p on deaths among runs at risk, BH within the pair."""
    pairs = data.time.shape[0]
    width = len(STAGES) + 2                       # event indices 0 .. reply
    cell = (np.arange(pairs)[:, None] * 2 + data.group) * width
    ended = np.bincount((cell + data.time).ravel(), minlength=pairs * 2 * width).reshape(pairs, 2, width)
    dead = np.bincount((cell + data.time)[data.died], minlength=pairs * 2 * width).reshape(pairs, 2, width)
    at_risk = np.cumsum(ended[:, :, ::-1], axis=2)[:, :, ::-1]
    stages = np.arange(1, len(STAGES) + 1)
    da, db = dead[:, 0, stages], dead[:, 1, stages]
    na, nb = at_risk[:, 0, stages], at_risk[:, 1, stages]
    p = fisher_exact_many(da.ravel(), (na - da).ravel(), db.ravel(), (nb - db).ravel()).reshape(da.shape)
    # Benjamini–Hochberg within each pair, row by row in one pass
    m = p.shape[1]
    order = np.argsort(p, axis=1)
    ranked = np.take_along_axis(p, order, axis=1) * m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[:, ::-1], axis=1)[:, ::-1]
    q = np.empty_like(p)
    np.put_along_axis(q, order, np.minimum(ranked, 1.0), axis=1)
    return q
