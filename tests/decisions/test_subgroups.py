"""Subgroups: a planted harm (better on average, one condition 15 points worse) is flagged; no flag beyond α
when nothing changed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fluke.decisions import subgroup_contrasts
from fluke.simulate import subgroup_counts


def _report(counts, **kw):
    n = np.full(counts.groups.size, counts.trials)
    return subgroup_contrasts(counts.groups, counts.passes_a, n, counts.passes_b, n, **kw)


def test_a_planted_harm_is_flagged():
    reps, flagged, hidden = 200, 0, 0
    for seed in range(reps):
        r = _report(subgroup_counts(scenarios=60, trials=4, lift=15, harm=15, harmed="rushed", seed=seed))
        flagged += [g.group for g in r.harmed] == ["rushed"]
        hidden += r.average_better_group_worse
    assert flagged / reps >= 0.85, f"the harmed group flagged alone in {flagged} of {reps}"
    assert hidden / reps >= 0.8
    r = _report(subgroup_counts(scenarios=60, trials=4, lift=15, harm=15, seed=1))
    if r.average_better_group_worse:
        assert "better on average, worse in a group" in r.summary() and "rushed" in r.summary()


def test_an_unchanged_version_flags_no_group_beyond_alpha():
    reps, any_flag = 1000, 0
    for seed in range(reps):
        any_flag += bool(_report(subgroup_counts(scenarios=30, trials=4, seed=10_000 + seed)).harmed)
    assert any_flag / reps <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)


def test_the_harm_threshold_and_the_difference_by_hand():
    r = subgroup_contrasts(["x"] * 3 + ["y"] * 3, [9, 9, 9, 9, 8, 9], [10] * 6, [9, 9, 9, 1, 2, 1], [10] * 6,
                           harm=50)
    y = next(g for g in r.groups if g.group == "y")
    assert y.difference == pytest.approx(100 * np.mean([1 / 10 - 9 / 10, 2 / 10 - 8 / 10, 1 / 10 - 9 / 10]))
    assert y.harmed   # -73 points, beyond a 50-point threshold
    assert not subgroup_contrasts(["y"] * 3, [9, 8, 9], [10] * 3, [9, 7, 8], [10] * 3, harm=50).harmed
