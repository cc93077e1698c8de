"""Two versions compared end to end: pass rates first, then where runs die, then per cell.

:func:`pass_counts` reduces runs to counts per scenario × condition (what a ledger query
returns); :func:`compare_pass_counts` compares two such maps on the strata both ran;
:func:`compare_versions` does all of it from runs, adding the survival analysis over runs whose
failure step is known and the per-cell Fisher tests.

>>> from fluke.simulate import support_desk
>>> desk = support_desk(scenarios=6, trials=8, planted_factor=4, seed=3)
>>> found = compare_versions(desk.version(1), desk.version(2))
>>> found.pass_rates.strata, found.where.skipped, sorted(found.to_dict())[:3]
(12, False, ['cells', 'cells_only_a', 'cells_only_b'])
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ._data import SurvivalData, survival_data
from ._passrate import UNKNOWN_POLICIES, PassRateComparison, compare_pass_rates
from ._steps import CellTable, per_cell
from ._verdict import CLOSING_STATEMENT
from ._where import WhereComparison, compare_where

if TYPE_CHECKING:
    from ..record import Run

__all__ = ["VersionComparison", "compare_counted", "compare_pass_counts", "compare_versions", "pass_counts",
           "places_of"]

#: joins scenario and condition into one stratum key (a character no id uses)
_SEP = "\x1f"


def pass_counts(runs: Iterable[Run], *, unknown_policy: str = "failure") -> tuple[dict, int]:
    """``({(scenario, condition): (passes, trials)}, unknown)`` with the policy applied to unknowns.

    ``unknown_policy`` says what a run whose outcome is unknown counts as: ``"failure"`` (the
    default, as harnesses count it), ``"exclude"`` (left out) or ``"success"``.

    >>> from fluke.record import Run, Outcome
    >>> runs = [Run(scenario="s", outcome=Outcome(passed=True)), Run(scenario="s", trial=1, outcome=Outcome())]
    >>> pass_counts(runs), pass_counts(runs, unknown_policy="exclude")
    (({('s', ''): (1, 2)}, 1), ({('s', ''): (1, 1)}, 1))
    """
    if unknown_policy not in UNKNOWN_POLICIES:
        raise InputError(None, None, "unknown_policy", f"unknown_policy={unknown_policy!r} must be one of "
                         + ", ".join(UNKNOWN_POLICIES))
    counts: dict[tuple[str, str], list[int]] = {}
    unknown = 0
    for run in runs:
        passed = run.outcome.passed
        if passed is None:
            unknown += 1
            if unknown_policy == "exclude":
                continue
            passed = unknown_policy == "success"
        cell = counts.setdefault((run.scenario, run.condition_key()), [0, 0])
        cell[0] += bool(passed)
        cell[1] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}, unknown


def compare_pass_counts(counts_a: Mapping, counts_b: Mapping, *, unknown: tuple[int, int] = (0, 0),
                        unknown_policy: str = "failure", **options) -> PassRateComparison:
    """Compare two maps ``(scenario, condition) → (passes, trials)`` on the strata both ran.

    Strata are clustered by scenario. ``options`` go to :func:`compare_pass_rates` (alpha,
    power, ceiling, method, prior, draws, rng, confidence_level).

    >>> r = compare_pass_counts({("s1", ""): (2, 4), ("s2", ""): (4, 4)}, {("s1", ""): (4, 4), ("s3", ""): (1, 4)})
    >>> r.strata, r.test.method
    (1, 'exact conditional')
    """
    keys = sorted(set(counts_a) & set(counts_b))
    if not keys:
        raise InputError(None, None, "scenario", "the two arms share no scenario × condition, so there is "
                         "nothing to compare", hint="check the selectors and the scenario filter")
    pa, na = np.array([counts_a[k] for k in keys], dtype=np.int64).T
    pb, nb = np.array([counts_b[k] for k in keys], dtype=np.int64).T
    return compare_pass_rates(pa, na, pb, nb, scenarios=np.array([k[0] for k in keys], dtype=object).astype(str),
                              unknown=unknown, unknown_policy=unknown_policy, **options)


@dataclass(frozen=True)
class VersionComparison:
    """Pass rates (the verdict), where runs die (or why not), per-cell tests, and what was left out.

    ``excluded`` counts runs of each arm in strata the other arm never ran.
    """

    pass_rates: PassRateComparison
    where: WhereComparison
    cells: CellTable
    excluded: dict[str, int]
    died_from: dict[str, int]
    statement: str = CLOSING_STATEMENT

    @property
    def verdict(self) -> str:
        return self.pass_rates.verdict

    def to_dict(self) -> dict:
        """Plain data for JSON: the pass rates and where as their own dicts, the cells, the rest."""
        return {"verdict": self.verdict, "pass_rates": self.pass_rates.to_dict(), "where": self.where.to_dict(),
                "cells": [c.to_dict() for c in self.cells.cells], "cells_only_a": list(self.cells.only_a),
                "cells_only_b": list(self.cells.only_b), "excluded": dict(self.excluded),
                "died_from": dict(self.died_from), "statement": self.statement}

    def summary(self) -> str:
        """The pass-rate line, then the where line."""
        return self.pass_rates.summary() + "\n" + self.where.summary()


def places_of(data: SurvivalData) -> dict[tuple, int]:
    """Runs per place ``(scenario, condition, cause, step, event)`` from :func:`survival_data`'s
    arrays: the shape of the ledger's ``steps`` table (``event`` is ``""`` for a censored run;
    the failed runs with no known step are one ``("", "", "unknown step", -1, "")`` entry).

    >>> from fluke.record import Run, Outcome, ToolCall
    >>> runs = [Run(scenario="s", trial=t, events=[ToolCall(tool="pay", ok=False)], outcome=Outcome(passed=t > 0))
    ...         for t in range(3)]
    >>> places_of(survival_data(runs))
    {('s', '', 'failed call', 0, 'pay'): 1, ('s', '', 'censored', 0, ''): 2}
    """
    out: dict[tuple, int] = {}
    for key in zip(data.scenario.tolist(), data.condition.tolist(), data.cause.tolist(), data.time.tolist(),
                   np.where(data.died, data.label, "").tolist(), strict=True):
        out[key] = out.get(key, 0) + 1
    if data.unknown_step:
        out[("", "", "unknown step", -1, "")] = data.unknown_step
    return out


#: Where a run's place can come from (the ledger's ``steps`` causes), each counted in ``died_from``.
CAUSES = ("died_at", "hard violation", "failed call", "unknown step", "censored")


def _stratum_codes(shared: set) -> dict[tuple[str, str], int]:
    """Each shared ``(scenario, condition)`` numbered in the order of its joined key
    (scenario, :data:`_SEP`, condition): the order the stratified statistics sum strata in."""
    return {k: i for i, k in enumerate(sorted(shared, key=lambda k: f"{k[0]}{_SEP}{k[1]}"))}


def _arm_places(places: Mapping[tuple, int], codes: Mapping[tuple[str, str], int]):
    """``(time, died, strata, labels, weights)`` of an arm's places in the shared strata (``codes``
    numbers them), and its failed runs with no known step, and where each time came from.

    Column by column over the places (no per-place tuple is sorted or joined; the ledger's
    :class:`fluke.ledger.Places` hands its columns over as read): a million runs come as a
    hundred thousand places or more."""
    size = len(places)
    columns = getattr(places, "columns", None)     # fluke.ledger.Places: the columns as read
    if columns is not None:
        scenario, condition, cause, step, event, runs = columns
        weights = np.fromiter(runs, dtype=np.int64, count=size)
    else:
        weights = np.fromiter(places.values(), dtype=np.int64, count=size)
        scenario, condition, cause, step, event = zip(*places, strict=True) if size else ((),) * 5
    stratum = np.fromiter(map(codes.get, zip(scenario, condition, strict=True), itertools.repeat(-1)),
                          dtype=np.int64, count=size)
    cause = np.array(cause, dtype=object)
    died_from = {c: int(weights[cause == c].sum()) for c in CAUSES}
    keep = (cause != "unknown step") & (weights > 0) & (stratum >= 0)
    time = np.fromiter(step, dtype=np.int64, count=size)[keep]
    died = (cause != "censored")[keep]
    labels = np.array(event, dtype=object)[keep]
    return (time, died, stratum[keep], labels, weights[keep]), died_from["unknown step"], died_from


def compare_counted(counts_a: Mapping, counts_b: Mapping, places_a: Mapping, places_b: Mapping, *,
                    unknown: tuple[int, int] = (0, 0), unknown_policy: str = "failure", alpha: float = 0.05,
                    power: float = 0.8, ceiling: float = 5.0, hazard_ceiling: float = 1.3,
                    rng: np.random.Generator | None = None, **options) -> VersionComparison:
    """:func:`compare_versions` from counts: ``counts_*`` map ``(scenario, condition)`` to
    ``(passes, trials)`` (the unknown-outcome policy applied; ``unknown`` how many there were),
    ``places_*`` map ``(scenario, condition, cause, step, event)`` to runs (the ledger's
    ``steps`` table, or :func:`places_of`). The answer is exactly that of the runs one by one.

    >>> from fluke.simulate import support_desk
    >>> desk = support_desk(scenarios=6, trials=8, planted_factor=4, seed=3)
    >>> a, b = desk.version(1), desk.version(2)
    >>> counted = compare_counted(pass_counts(a)[0], pass_counts(b)[0], places_of(survival_data(a)),
    ...                           places_of(survival_data(b)))
    >>> counted.to_dict() == compare_versions(a, b).to_dict()
    True
    """
    rates = compare_pass_counts(counts_a, counts_b, unknown=unknown, unknown_policy=unknown_policy,
                                alpha=alpha, power=power, ceiling=ceiling, rng=rng, **options)
    shared = set(counts_a) & set(counts_b)
    excluded = {"a": sum(n for k, (_, n) in counts_a.items() if k not in shared),
                "b": sum(n for k, (_, n) in counts_b.items() if k not in shared),
                "unknown_a": int(unknown[0]), "unknown_b": int(unknown[1])}
    codes = _stratum_codes(shared)
    (ta, da, sa, la, wa), hidden_a, from_a = _arm_places(places_a, codes)
    (tb, db, sb, lb, wb), hidden_b, from_b = _arm_places(places_b, codes)
    # the strata as dense codes in the order of their names (what np.unique of the names gives)
    strata = np.unique(np.r_[sa, sb], return_inverse=True)[1].reshape(-1)
    where = compare_where(np.r_[ta, tb], np.r_[da, db], np.r_[np.zeros(ta.size, bool), np.ones(tb.size, bool)],
                          strata=strata, labels=np.r_[la, lb], weights=np.r_[wa, wb],
                          unknown_step=(hidden_a, hidden_b), alpha=alpha, power=power, ceiling=hazard_ceiling)
    fails = lambda counts: {k: (n - p, n) for k, (p, n) in counts.items()}
    cells = per_cell(fails(counts_a), fails(counts_b))
    died_from = {k: from_a[k] + from_b[k] for k in from_a}
    return VersionComparison(rates, where, cells, excluded, died_from)


def compare_versions(runs_a: Iterable[Run], runs_b: Iterable[Run], *, hard_index: Mapping[str, int] | None = None,
                     unknown_policy: str = "failure", alpha: float = 0.05, power: float = 0.8,
                     ceiling: float = 5.0, hazard_ceiling: float = 1.3,
                     rng: np.random.Generator | None = None, **options) -> VersionComparison:
    """Compare B's runs with A's: pass rates first, where they die when that is known, per cell.

    ``ceiling`` is in points (the pass-rate verdict); ``hazard_ceiling`` is the hazard ratio
    the survival analysis's limit is held to. ``hard_index`` (run hash → event index of the
    first hard violation, from grading) gives failure steps where the harness recorded none.
    ``options`` go to :func:`compare_pass_rates`. The runs are reduced to counts and places
    and compared by :func:`compare_counted`.
    """
    runs_a, runs_b = list(runs_a), list(runs_b)
    counts_a, unknown_a = pass_counts(runs_a, unknown_policy=unknown_policy)
    counts_b, unknown_b = pass_counts(runs_b, unknown_policy=unknown_policy)
    places_a = places_of(survival_data(runs_a, hard_index=hard_index))
    places_b = places_of(survival_data(runs_b, hard_index=hard_index))
    return compare_counted(counts_a, counts_b, places_a, places_b, unknown=(unknown_a, unknown_b),
                           unknown_policy=unknown_policy, alpha=alpha, power=power, ceiling=ceiling,
                           hazard_ceiling=hazard_ceiling, rng=rng, **options)
