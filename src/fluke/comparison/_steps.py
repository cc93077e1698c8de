"""Where a change happened: per-step deaths and per-cell failures, each with BH q-values.

A *step* is an event index. At each step where some run died, the runs still at risk there
(time ≥ step) are split into those that died at that step and those that went on; a test
compares the two arms on that split, which is the step's own hazard, so a change at one step
does not show up as a change at the later steps it thins out. Stratified by scenario, the
test compares the arms within each scenario (so different scenario mixes cannot make a step
look changed); unstratified with small counts, it is Fisher's exact test. A *cell* is a
scenario × condition; Fisher's exact test compares failures out of trials per cell.

>>> import numpy as np
>>> time = np.array([1, 1, 2, 3, 3, 1, 1, 1, 1, 3])
>>> died = np.array([1, 0, 1, 0, 0, 1, 1, 1, 1, 0], dtype=bool)
>>> group = np.arange(10) >= 5
>>> table = per_step(time, died, group)
>>> [(s.step, s.deaths_a, s.at_risk_a, s.deaths_b, s.at_risk_b) for s in table.steps]
[(1, 1, 5, 4, 5), (2, 1, 3, 0, 1)]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ._fisher import bh_qvalues, fisher_exact_many
from ._stratified import stratified_pvalues

__all__ = ["CellTable", "CellTest", "StepTable", "StepTest", "per_cell", "per_step"]


@dataclass(frozen=True)
class StepTest:
    """Deaths at one step in each arm, out of the runs at risk there, with p and BH q."""

    step: int
    label: str | None
    deaths_a: int
    at_risk_a: int
    deaths_b: int
    at_risk_b: int
    pvalue: float
    qvalue: float


@dataclass(frozen=True)
class StepTable:
    """Per-step tests; BH across the steps where some run died."""

    steps: tuple[StepTest, ...]
    stratified: bool = False

    def significant(self, q: float = 0.05) -> tuple[StepTest, ...]:
        """The steps whose q-value is below ``q``."""
        return tuple(s for s in self.steps if s.qvalue < q)


def _step_labels(steps: np.ndarray, time: np.ndarray, died: np.ndarray, labels, weights) -> list[str | None]:
    if labels is None:
        return [None] * steps.size
    labels = np.asarray(labels, dtype=object).reshape(-1)
    if labels.size != time.size:
        raise InputError(None, None, "labels", f"labels has {labels.size} entries but time has {time.size}; "
                         "give one per run")
    idx = np.searchsorted(steps, time[died])
    lab = labels[died].astype(str)
    names, codes = np.unique(lab, return_inverse=True)
    counts = np.zeros((steps.size, names.size), dtype=np.int64)
    np.add.at(counts, (idx, codes.reshape(-1)), weights[died].astype(np.int64))
    return [str(names[i]) for i in counts.argmax(axis=1)]


def per_step(time, died, group, *, labels=None, strata=None, method: str = "auto", weights=None) -> StepTable:
    """Deaths per step in arm A and arm B (``group`` True), a test per step, BH q-values across steps.

    At each step the runs at risk are those that reached it. With ``strata`` (e.g. the scenario)
    each step's test is stratified (:func:`~fluke.comparison.stratified_test`: CMH, or exact for
    small counts), so arms that ran different scenario mixes are compared within scenarios;
    without, one stratum (which for small counts is Fisher's exact test). ``labels`` names each
    run's death event (e.g. the tool that failed); a step is named by the label most of its
    deaths carry. ``weights`` says how many runs each entry stands for (counted runs).

    >>> t = per_step([1, 2, 4, 1, 1, 4], [1, 1, 0, 1, 1, 0], [0, 0, 0, 1, 1, 1],
    ...              labels=["review", "sample", "reply", "review", "review", "reply"])
    >>> [(s.label, s.deaths_a, s.deaths_b) for s in t.steps]
    [('review', 1, 2), ('sample', 1, 0)]
    """
    time = np.asarray(time, dtype=float).reshape(-1)
    died = np.asarray(died, dtype=bool).reshape(-1)
    group = np.asarray(group, dtype=bool).reshape(-1)
    if not (time.size == died.size == group.size):
        raise InputError(None, None, "died", "time, died and group must have one entry per run")
    if strata is None:
        codes, n_strata = np.zeros(time.size, dtype=np.int64), 1
    else:
        strata = np.asarray(strata).reshape(-1)
        if strata.size != time.size:
            raise InputError(None, None, "strata", f"strata has {strata.size} entries but time has {time.size}")
        codes = np.unique(strata, return_inverse=True)[1].reshape(-1)
        n_strata = int(codes.max()) + 1 if codes.size else 1
    from ._logrank import _weights

    w = _weights(weights, time.size)
    w = np.ones(time.size) if w is None else w
    died = died & (w > 0)
    steps = np.unique(time[died])
    if steps.size == 0:
        return StepTable(())
    # a run is at risk at every step up to its own time: reached[j] counts runs past step j − 1
    reach = np.searchsorted(steps, time, side="right")
    at_j = np.searchsorted(steps, time)
    grids = []
    for arm in (False, True):
        m = group == arm
        ended = np.zeros((steps.size + 1, n_strata))
        np.add.at(ended, (reach[m], codes[m]), w[m])
        at_risk = np.cumsum(ended[::-1], axis=0)[::-1][1:]
        dead = np.zeros((steps.size, n_strata))
        md = m & died
        np.add.at(dead, (at_j[md], codes[md]), w[md])
        grids.append((dead, at_risk))
    (da, na), (db, nb) = grids
    # a step with no information (every run at risk died, or one arm had none at risk) gets p = 1,
    # as Fisher's test gives such a table
    p = np.nan_to_num(stratified_pvalues(da, na, db, nb, method=method), nan=1.0)
    q = bh_qvalues(p)
    names = _step_labels(steps, time, died, labels, w)
    out = [StepTest(int(step), names[i], int(da[i].sum()), int(na[i].sum()), int(db[i].sum()),
                    int(nb[i].sum()), float(p[i]), float(q[i])) for i, step in enumerate(steps)]
    return StepTable(tuple(out), stratified=strata is not None)


@dataclass(frozen=True)
class CellTest:
    """Failures out of trials in one scenario × condition cell, per arm, with p and BH q."""

    scenario: str
    condition: str
    failures_a: int
    trials_a: int
    failures_b: int
    trials_b: int
    pvalue: float
    qvalue: float

    def to_dict(self) -> dict:
        """The fields as plain data (what ``dataclasses.asdict`` gives, without its deep copy:
        every field is a string or a number, and a comparison has ten thousand cells).

        >>> CellTest("s", "", 1, 4, 3, 4, 0.5, 0.5).to_dict()["failures_b"]
        3
        """
        return dict(self.__dict__)


@dataclass(frozen=True)
class CellTable:
    """Per-cell Fisher tests with BH across cells; cells seen in only one arm are listed apart."""

    cells: tuple[CellTest, ...]
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()

    def significant(self, q: float = 0.05) -> tuple[CellTest, ...]:
        """The cells whose q-value is below ``q``."""
        return tuple(c for c in self.cells if c.qvalue < q)


def per_cell(counts_a, counts_b) -> CellTable:
    """Fisher exact per scenario × condition cell, BH across the cells both arms ran.

    ``counts_a``/``counts_b`` map ``(scenario, condition)`` to ``(failures, trials)``.

    >>> t = per_cell({("s1", ""): (9, 10), ("s2", ""): (1, 10)}, {("s1", ""): (1, 10), ("s2", ""): (1, 10)})
    >>> [(c.scenario, round(c.pvalue, 4)) for c in t.cells]
    [('s1', 0.0011), ('s2', 1.0)]
    """
    keys = sorted(set(counts_a) & set(counts_b))
    for name, counts in (("counts_a", counts_a), ("counts_b", counts_b)):
        for key, (failures, trials) in counts.items():
            if not 0 <= failures <= trials:
                raise InputError(None, None, name, f"{name}[{key!r}]: failures={failures} must lie between 0 "
                                 f"and trials={trials}")
    if not keys:
        p = q = np.empty(0)
    else:
        fa, ta = np.array([counts_a[k] for k in keys]).T
        fb, tb = np.array([counts_b[k] for k in keys]).T
        p = fisher_exact_many(fa, ta - fa, fb, tb - fb)
        q = bh_qvalues(p)
    cells = tuple(CellTest(str(k[0]), str(k[1]), int(counts_a[k][0]), int(counts_a[k][1]),
                           int(counts_b[k][0]), int(counts_b[k][1]), float(p[i]), float(q[i]))
                  for i, k in enumerate(keys))
    fmt = lambda k: f"{k[0]}|{k[1]}" if k[1] else str(k[0])
    return CellTable(cells, tuple(fmt(k) for k in sorted(set(counts_a) - set(counts_b))),
                     tuple(fmt(k) for k in sorted(set(counts_b) - set(counts_a))))
