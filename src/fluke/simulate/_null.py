"""Null calibration on the staged workload: many unchanged pairs, compared in one batch.

Each pair is compared by the primary test, the stratified test of pass rates (CMH by task,
exact where counts are small), with the detection limit in points that ``compare`` prints for
it (:func:`fluke.comparison.design_limits`, the regression direction: power under the
shifted design, refused where the runs cannot vouch for one); ``test="log-rank"`` gives
the survival comparison instead (limit as a hazard ratio). Verdicts come from the same rule as
every comparison (:func:`fluke.comparison.verdicts_of`).

>>> result = calibrate_null(20, tasks=10, runs_per_task=10, rng=np.random.default_rng(0))
>>> v = result.verdicts
>>> result.calibration.pairs, v["different"] + v["no significant difference"] + v["too small to tell"]
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
    bh_qvalues,
    design_limits,
    detection_z,
    logrank_batch,
    null_calibration,
    stratified_pvalues,
    verdicts_of,
)
from ..errors import UsageError
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
        raise UsageError(f"pairs={pairs} must be at least 1", argument="pairs")
    if tasks < 1 or runs_per_task < 1:
        raise UsageError(f"tasks={tasks} and runs_per_task={runs_per_task} must be at least 1", argument="tasks")
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

    ``test`` names the comparison (``"pass rate"`` or ``"log-rank"``); the limits are in points
    for the first and a hazard ratio for the second, as is ``ceiling``. ``step_alarms`` counts
    the pairs where some stage's per-step BH q-value (stratified by task) fell below alpha.
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
    test: str = "pass rate"


TESTS = ("pass rate", "log-rank")


def calibrate_null(pairs: int = 200, *, tasks: int = 50, runs_per_task: int = 40,
                   rates: dict[str, float] = BASELINE_RATES, alpha: float = 0.05, power: float = 0.8,
                   ceiling: float | None = None, bins: int = 20, step_tests: bool = True,
                   test: str = "pass rate", rng: np.random.Generator) -> NullRun:
    """Simulate ``pairs`` unchanged pairs, compare each, and calibrate the false alarms.

    ``ceiling`` defaults to 5 points for the pass-rate test and a hazard ratio of 1.3 for the
    log-rank. With ``step_tests`` it also runs the per-step tests (stratified by task, BH
    within each pair) and counts the pairs where some step came out below alpha.
    """
    if test not in TESTS:
        raise UsageError(f"test={test!r} must be one of {', '.join(TESTS)}", argument="test")
    ceiling = (5.0 if test == "pass rate" else 1.3) if ceiling is None else float(ceiling)
    # in chunks of about two million episodes, so 10,000 pairs fit in memory
    chunk = max(1, 2_000_000 // (2 * tasks * runs_per_task))
    pvalue, limit = np.empty(pairs), np.empty(pairs)
    step_alarms = 0
    z = detection_z(alpha, power)
    for start in range(0, pairs, chunk):
        stop = min(pairs, start + chunk)
        data = null_pairs(stop - start, tasks=tasks, runs_per_task=runs_per_task, rates=rates, rng=rng)
        if test == "pass rate":
            pvalue[start:stop], limit[start:stop] = _pass_rate_batch(data, tasks, runs_per_task, alpha, power)
        else:
            _, pvalue[start:stop], _, v = logrank_batch(data.time, data.died, data.group, data.strata,
                                                        with_variance=True)
            with np.errstate(divide="ignore"):
                limit[start:stop] = np.exp(z / np.sqrt(v))
        if step_tests:
            step_alarms += int((_step_qvalues(data, tasks) < alpha).any(axis=1).sum())
    verdict = verdicts_of(pvalue, limit, alpha=alpha, ceiling=ceiling)
    verdicts = {name: int((verdict == name).sum()) for name in (DIFFERENT, NO_DIFFERENCE, TOO_SMALL)}
    usable = np.isfinite(pvalue)
    cal = null_calibration(pvalue[usable], alpha=alpha, bins=bins)
    return NullRun(cal, verdicts, float(limit.min()), float(limit.max()), pvalue, tasks, runs_per_task,
                   ceiling, step_alarms, test)


def _pass_rate_batch(data: NullPairs, tasks: int, runs_per_task: int, alpha: float, power: float):
    """Per pair: the stratified test's p-value and the regression limit in points ``compare`` prints.

    The limit is :func:`fluke.comparison.design_limits` on the pair's counts, pair by pair (a
    few milliseconds each): the one the verdict of ``compare`` rests on, so the simulated
    verdicts are the printed ones.
    """
    pairs = data.died.shape[0]
    fails = data.died.reshape(pairs, 2, tasks, runs_per_task).sum(axis=3)
    fa, fb = fails[:, 0], fails[:, 1]
    n = np.full(fa.shape, runs_per_task)
    p = stratified_pvalues(fa, n, fb, n)
    limit = np.array([design_limits(n[i] - fa[i], n[i], n[i] - fb[i], n[i], alpha=alpha, power=power,
                                    directions=("regression",))[0] for i in range(pairs)])
    return p, limit


def _step_qvalues(data: NullPairs, tasks: int) -> np.ndarray:
    """Per pair and stage: deaths among runs at risk, stratified by task, BH within the pair."""
    pairs = data.time.shape[0]
    width = len(STAGES) + 2                       # event indices 0 .. reply
    # cell = (pair, arm, task, time)
    cell = ((np.arange(pairs)[:, None] * 2 + data.group) * tasks + data.strata) * width + data.time
    size = pairs * 2 * tasks * width
    ended = np.bincount(cell.ravel(), minlength=size).reshape(pairs, 2, tasks, width)
    dead = np.bincount(cell[data.died], minlength=size).reshape(pairs, 2, tasks, width)
    at_risk = np.cumsum(ended[..., ::-1], axis=3)[..., ::-1]
    stages = np.arange(1, len(STAGES) + 1)
    # to (pair, stage, task)
    da, db = (dead[:, arm][..., stages].transpose(0, 2, 1) for arm in (0, 1))
    na, nb = (at_risk[:, arm][..., stages].transpose(0, 2, 1) for arm in (0, 1))
    shape = da.shape
    p = stratified_pvalues(*(x.reshape(-1, tasks) for x in (da, na, db, nb))).reshape(shape[:2])
    return bh_qvalues(p)
