"""Subgroups: does a change that helps on average harm one group?

Each group (a recorded condition, a mechanism family, any declared grouping of runs) gets its
own contrast of B against A: the difference in pass-rate points as the mean over the group's
scenario cells (the scale of ``compare``), and the stratified test by scenario
(:func:`fluke.comparison.stratified_test`). Holm's step-down adjustment across the groups keeps
the chance of flagging any group, when B equals A everywhere, at most α. A group is *harmed*
when its adjusted p is below α and B falls short of A there by more than ``harm`` points; the
warning "better on average, worse in a group" is raised when the overall difference is positive
and some group is harmed.

>>> r = subgroup_contrasts(["x", "x", "y", "y"], [8, 9, 9, 8], [10] * 4, [10, 10, 1, 0], [10] * 4)
>>> [(g.group, round(g.difference, 1), g.harmed) for g in r.groups]
[('x', 15.0, False), ('y', -80.0, True)]
>>> r.average_better_group_worse, round(r.difference, 1)
(False, -32.5)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError


@dataclass(frozen=True)
class GroupContrast:
    """B against A within one group: points, the stratified test, Holm's adjusted p, the flag."""

    group: str
    cells: int
    runs_a: int
    runs_b: int
    passes_a: int
    passes_b: int
    difference: float
    pvalue: float
    adjusted: float
    harmed: bool

    def to_dict(self) -> dict:
        nan = self.pvalue != self.pvalue
        return {"group": self.group, "cells": self.cells, "runs_a": self.runs_a, "runs_b": self.runs_b,
                "passes_a": self.passes_a, "passes_b": self.passes_b, "difference_points": self.difference,
                "pvalue": None if nan else self.pvalue, "adjusted_pvalue": None if nan else self.adjusted,
                "harmed": self.harmed}


@dataclass(frozen=True)
class SubgroupReport:
    """Every group's contrast, the overall difference, and whether the average hides a harmed group."""

    groups: tuple[GroupContrast, ...]
    difference: float
    alpha: float
    harm: float
    correction: str = "Holm"

    @property
    def harmed(self) -> list[GroupContrast]:
        return [g for g in self.groups if g.harmed]

    @property
    def average_better_group_worse(self) -> bool:
        return self.difference > 0 and bool(self.harmed)

    def summary(self) -> str:
        from ..format import fmt_is, plural

        if not self.harmed:
            return (f"no group is worse in B beyond {self.harm:g} points at α = {self.alpha:g} "
                    f"({plural(len(self.groups), 'group')}, {self.correction} across them)")
        worst = min(self.harmed, key=lambda g: g.difference)
        head = "better on average, worse in a group" if self.average_better_group_worse else "a group is worse"
        return (f"{head}: B − A = {self.difference:+.1f} points overall but {worst.difference:+.1f} in "
                f"{worst.group} ({worst.cells} scenario cells, {worst.runs_b:,} runs of B; "
                f"{fmt_is(self.correction + '-adjusted p', worst.adjusted, kind='p')})"
                + (f"; {len(self.harmed)} groups harmed" if len(self.harmed) > 1 else ""))

    def to_dict(self) -> dict:
        return {"groups": [g.to_dict() for g in self.groups], "difference_points": self.difference,
                "alpha": self.alpha, "harm_points": self.harm, "correction": self.correction,
                "harmed": [g.group for g in self.harmed],
                "average_better_group_worse": self.average_better_group_worse, "summary": self.summary()}


def subgroup_contrasts(groups, passes_a, trials_a, passes_b, trials_b, *, alpha: float = 0.05,
                       harm: float = 0.0) -> SubgroupReport:
    """Contrast B with A in each group (see the module docstring); one entry per scenario cell.

    ``groups`` names the group of each cell; the counts are that cell's passes and trials in
    each arm (cells where either arm has no trial are left out). ``harm`` is the shortfall in
    points a group must exceed to be flagged.

    >>> subgroup_contrasts(["a"], [5], [10], [5], [10]).summary()
    'no group is worse in B beyond 0 points at α = 0.05 (1 group, Holm across them)'
    """
    from ..comparison import holm_adjust, stratified_test

    if not 0 < alpha < 1:
        raise UsageError(f"alpha={alpha!r} must lie strictly between 0 and 1")
    if not harm >= 0:
        raise UsageError(f"harm={harm!r} must be a shortfall in points of at least 0")
    labels = np.asarray(groups, dtype=object).reshape(-1)
    pa, na, pb, nb = (np.asarray(x, dtype=np.int64).reshape(-1) for x in (passes_a, trials_a, passes_b, trials_b))
    if not labels.size == pa.size == na.size == pb.size == nb.size:
        raise UsageError("groups and the four count arrays must have one entry per scenario cell")
    keep = (na > 0) & (nb > 0)
    labels, pa, na, pb, nb = labels[keep], pa[keep], na[keep], pb[keep], nb[keep]
    diff = 100 * (pb / np.maximum(nb, 1) - pa / np.maximum(na, 1))
    names = sorted({str(x) for x in labels})
    rows, pvalues = [], []
    for name in names:
        at = labels.astype(str) == name
        test = stratified_test(na[at] - pa[at], na[at], nb[at] - pb[at], nb[at])
        rows.append((name, int(at.sum()), int(na[at].sum()), int(nb[at].sum()), int(pa[at].sum()),
                     int(pb[at].sum()), float(diff[at].mean())))
        pvalues.append(test.pvalue)
    adjusted = holm_adjust(pvalues) if pvalues else np.array([])
    out = tuple(GroupContrast(*row, float(p), float(q), bool(q < alpha and row[-1] < -harm))
                for row, p, q in zip(rows, pvalues, adjusted, strict=True))
    return SubgroupReport(out, float(diff.mean()) if diff.size else float("nan"), float(alpha), float(harm))
