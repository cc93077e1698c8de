"""Compare two sets of runs end to end: survival arrays, shared strata, and every test."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import UsageError
from ._data import failure_counts, survival_data
from ._steps import per_cell, per_step
from ._verdict import compare_survival


class RunComparison(NamedTuple):
    """What :func:`compare_runs` found: the verdict, per-step and per-cell tests, and what was left out."""

    result: Any
    steps: Any
    cells: Any
    excluded: dict[str, int]
    died_from: dict[str, int]
    strata: int


#: joins scenario and condition into one stratum key (a character no id uses)
_SEP = "\x1f"


def compare_runs(runs_a, runs_b, *, hard_index=None, alpha: float = 0.05, power: float = 0.8,
                 ceiling: float = 1.3) -> RunComparison:
    """Compare two sets of runs on the strata (scenario × condition) both ran (the old question).

    Superseded by :func:`compare_versions`, which leads with pass rates and runs the log-rank
    only over runs whose failure step is known; this one is kept for callers not yet moved.

    Builds the survival arrays of both arms (DESIGN §5's died_at rule, with ``hard_index``
    giving first hard violations by run hash), keeps the shared strata, and runs the
    stratified log-rank with its detection limit, the per-step tests and the per-cell tests.

    >>> from fluke.simulate import support_desk
    >>> desk = support_desk(scenarios=6, trials=8, planted_factor=4, seed=3)
    >>> found = compare_runs(desk.version(1), desk.version(2))
    >>> found.strata, found.result.verdict in ("different", "no significant difference", "too small to tell")
    (12, True)
    """

    # the old rule (a failed run with no known step dies at its last event), kept so today's CLI
    # answers as before until it calls compare_versions; see DESIGN §5 for why it is wrong there
    a = survival_data(runs_a, hard_index=hard_index, unknown_step="last event")
    b = survival_data(runs_b, hard_index=hard_index, unknown_step="last event")
    key_a = np.array([f"{s}{_SEP}{c}" for s, c in zip(a.scenario, a.condition, strict=True)], dtype=object)
    key_b = np.array([f"{s}{_SEP}{c}" for s, c in zip(b.scenario, b.condition, strict=True)], dtype=object)
    shared = np.intersect1d(key_a.astype(str), key_b.astype(str))
    if shared.size == 0:
        raise UsageError("the two arms share no scenario × condition, so there is "
                         "nothing to compare", argument="scenario", hint="check the selectors and --scenario")
    in_a, in_b = np.isin(key_a.astype(str), shared), np.isin(key_b.astype(str), shared)
    time = np.r_[a.time[in_a], b.time[in_b]]
    died = np.r_[a.died[in_a], b.died[in_b]]
    group = np.r_[np.zeros(int(in_a.sum()), bool), np.ones(int(in_b.sum()), bool)]
    strata = np.r_[key_a[in_a], key_b[in_b]].astype(str)
    labels = np.r_[a.label[in_a], b.label[in_b]]
    result = compare_survival(time, died, group, strata=strata, alpha=alpha, power=power, ceiling=ceiling)
    steps = per_step(time, died, group, labels=labels, strata=strata)

    def counts(keys, died):
        names, failures, trials = failure_counts(keys, died)
        return {tuple(k.split(_SEP, 1)): (int(f), int(n)) for k, f, n in zip(names, failures, trials, strict=True)}

    cells = per_cell(counts(key_a[in_a].astype(str), a.died[in_a]), counts(key_b[in_b].astype(str), b.died[in_b]))
    excluded = {"a": int((~in_a).sum()), "b": int((~in_b).sum()), "unknown_a": a.unknown, "unknown_b": b.unknown}
    died_from = {k: a.died_from[k] + b.died_from[k] for k in a.died_from}
    return RunComparison(result, steps, cells, excluded, died_from, int(shared.size))


