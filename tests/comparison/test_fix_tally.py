"""The fix check's per-input tally (:func:`fluke.comparison.fix_tally`): equal to the re-run rule
worked episode by episode in plain Python, the same whether the inputs are tallied all at once or
in parts joined afterwards, and :func:`clustered_mean_sums` giving :func:`clustered_mean`'s answer
from per-cluster sums.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from fluke.comparison import FixTally, check_tally, clustered_mean, clustered_mean_sums, fix_check, fix_tally


def arms(rng: random.Random, inputs: int, control: bool):
    """Runs of three arms over ``inputs`` inputs, uneven (0 to 8 runs an input), orders with ties."""
    out = []
    for arm in range(3 if control else 2):
        labels, failed, order = [], [], []
        for i in range(inputs):
            p = rng.random()
            for _ in range(rng.randrange(0 if arm else 1, 9)):
                labels.append(f"in{i:02d}")
                failed.append(rng.random() < p)
                order.append(float(rng.randrange(6)))
        perm = list(range(len(labels)))
        rng.shuffle(perm)
        out.append(([labels[j] for j in perm], [failed[j] for j in perm], [order[j] for j in perm]))
    return out + [None] * (3 - len(out))


def by_input(arm):
    """Each input's failures in rank order (order, ties as given): what the rule reads."""
    runs: dict[str, list] = {}
    for label, failed, order in zip(*arm, strict=True):
        runs.setdefault(label, []).append((order, failed))
    return {k: [f for _, f in sorted(v, key=lambda x: x[0])] for k, v in runs.items()}


def by_hand(first, cand, ctrl, within, names):
    """The re-run rule, episode by episode."""
    f, c = by_input(first), by_input(cand)
    k = by_input(ctrl) if ctrl is not None else None
    out = {name: [0] * 7 for name in names}      # tries_c, once_c, fixed_c, tries_k, once_k, fixed_k, once²
    for name in names:
        ac, ak = len(c.get(name, [])), len(k.get(name, [])) if k is not None else None
        tries = min(within, ac) if k is None else min(within, ac, ak)
        for r, failed in enumerate(f.get(name, [])):
            if not failed or tries == 0:
                continue
            row = out[name]
            sides = [(c[name], 0)] + ([(k[name], 3)] if k is not None else [])
            once = {}
            for runs, at in sides:
                a = len(runs)
                row[at] = tries
                once[at] = not runs[r % a]
                row[at + 1] += once[at]
                row[at + 2] += any(not runs[(r + j) % a] for j in range(tries))
            if k is not None:
                row[6] += (once[0] - once[3]) ** 2
    return out


@pytest.mark.parametrize("seed", range(40))
def test_the_tally_is_the_rule_worked_episode_by_episode(seed):
    rng = random.Random(seed)
    first, cand, ctrl = arms(rng, rng.randrange(1, 12), control=seed % 2 == 0)
    within = rng.randrange(1, 5)
    t = fix_tally(first, cand, ctrl, within=within)
    names = sorted(set(first[0]) | set(cand[0]) | (set(ctrl[0]) if ctrl else set()))
    hand = by_hand(first, cand, ctrl, within, names)
    for i, name in enumerate(names):
        want = hand[name]
        assert [t.candidate_tries[i], t.candidate_once[i], t.candidate_fixed[i]] == want[:3], name
        if ctrl is not None:
            assert [t.control_tries[i], t.control_once[i], t.control_fixed[i], t.once_squares[i]] == want[3:], name
        assert t.first_failures[i] == sum(f for lab, f in zip(first[0], first[1], strict=True) if lab == name)
        assert t.candidate_runs[i] == cand[0].count(name)


@pytest.mark.parametrize("seed", range(20))
def test_tallies_of_parts_joined_are_the_tally_of_the_whole(seed):
    rng = random.Random(100 + seed)
    first, cand, ctrl = arms(rng, 14, control=seed % 2 == 1)
    whole = fix_tally(first, cand, ctrl, within=3)
    names = np.unique(np.concatenate([np.asarray(a[0]) for a in (first, cand, ctrl) if a is not None]))
    groups = np.array_split(rng.sample(list(names), len(names)), 4)
    parts, labels = [], []
    for group in groups:
        keep = set(group.tolist())

        def pick(arm):
            if arm is None:
                return None
            idx = [j for j, lab in enumerate(arm[0]) if lab in keep]
            return tuple([arm[x][j] for j in idx] for x in range(3))

        # labels: the part's names are its own labels sorted
        parts.append(fix_tally(pick(first), pick(cand), pick(ctrl), within=3))
        labels.append(np.asarray(sorted(keep)))
    order = np.argsort(np.concatenate(labels), kind="stable")
    joined = FixTally.joined(parts).take(order)
    for field, value in whole._arrays().items():
        got = getattr(joined, field)
        assert (value is None) == (got is None), field
        if value is not None:
            assert np.array_equal(value, got), field
    assert check_tally(joined, names).candidate == check_tally(whole, names).candidate
    assert same(fix_check(first, cand, ctrl).by_input, check_tally(joined, names).by_input)


def same(a, b) -> bool:
    return all((math.isnan(x) and math.isnan(y)) or x == y if isinstance(x, float) else x == y
               for x, y in zip(a.__dict__.values(), b.__dict__.values(), strict=True))


@pytest.mark.parametrize("seed", range(30))
def test_clustered_mean_from_sums_is_clustered_mean_of_the_rows(seed):
    rng = np.random.default_rng(seed)
    g = int(rng.integers(1, 25))
    sizes = rng.integers(1, 9, g)
    labels = np.repeat(np.arange(g), sizes)
    p = 0.9995 if seed % 5 == 0 else rng.random()        # a share so near 1 that the rows are centred
    values = (rng.random(labels.size) < p).astype(float) - (rng.random(labels.size) < 0.2) * (seed % 3 == 0)
    sums = np.bincount(labels, weights=values, minlength=g)
    squares = np.bincount(labels, weights=values ** 2, minlength=g)
    want = clustered_mean(values, labels)
    got = clustered_mean_sums(sizes, sums, squares)
    spread, mean = values.var(), values.mean()
    if spread >= 1e-3 * (spread + mean * mean):
        assert same(got, want)                      # whole-number sums: the same arithmetic exactly
    else:
        assert got.rows == want.rows and got.clusters == want.clusters and got.reason == want.reason
        for x, y in ((got.estimate, want.estimate), (got.se, want.se), (got.low, want.low), (got.high, want.high)):
            assert x == pytest.approx(y, rel=1e-9, nan_ok=True)


def test_clustered_mean_from_sums_says_what_the_row_version_says_when_undefined():
    assert clustered_mean_sums([0, 0], [0, 0], [0, 0]).reason == "no rows"
    assert clustered_mean_sums([3], [2], [2]).reason == clustered_mean([1, 1, 0], [0, 0, 0]).reason
