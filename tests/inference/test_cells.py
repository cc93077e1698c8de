"""The cell form (rows, Σy, Σy² per unit × scenario) against the row-level code it replaced.

The oracle below is the row-level arithmetic of clustered_interval, cluster_bootstrap_interval
and variance_components as they were before they delegated to the cell form (kept here, not
imported, so that the comparison cannot follow a change of the library).
"""

import math
import warnings
from dataclasses import fields, is_dataclass

import numpy as np
import pytest
from scipy import special

from fluke.inference import (Cells, apply_unknown_policy, cluster_bootstrap_cells, cluster_bootstrap_interval,
                             cluster_codes, clustered_interval, clustered_interval_cells, variance_components,
                             variance_components_cells)


# -- the oracle: the row-level code before the cell form ------------------------------------------
def old_clustered(y, clusters, level=0.95, weighting="rows", unit="unit"):
    y = np.asarray(y, dtype=float)
    codes, sizes = cluster_codes(clusters, y.size)
    g, n = sizes.size, y.size
    sums = np.bincount(codes, weights=y, minlength=g)
    mean = float(y.mean())
    nse = float(y.std(ddof=1) / np.sqrt(y.size)) if y.size > 1 else float("nan")
    z = float(special.ndtri(0.5 + level / 2))
    naive = (mean, nse, mean - z * nse, mean + z * nse)
    if weighting == "units" or bool(sizes.min() == sizes.max()):
        means = sums / sizes
        stat = float(means.mean())
        se = float(means.std(ddof=1) / np.sqrt(g)) if g > 1 else float("nan")
        method = "cluster means"
    else:
        stat = float(sums.sum() / n)
        scores = sums - sizes * stat
        se = float(np.sqrt(g / (g - 1) * np.dot(scores, scores) / n**2))
        method = "CR1 sandwich"
    reason, warning = None, None
    if g < 2:
        reason = f"only {g} {unit}: an interval needs at least two independent units"
        low = high = float("nan")
    else:
        t = float(special.stdtrit(g - 1, 0.5 + level / 2))
        low, high = stat - t * se, stat + t * se
    if reason is None and nse > 0 and se > 0:
        ratio = se / nse
        if ratio > 1.25 or ratio < 1 / 1.25:
            width = "narrower" if ratio > 1 else "wider"
            warning = (f"the naive row-level interval is {ratio:.2f}x {width} than the one "
                       f"clustered by {unit} ({n} rows but {g} independent {unit}s); "
                       f"report the clustered interval")
    return dict(statistic=stat, standard_error=se, low=float(low), high=float(high), df=g - 1, clusters=g,
                rows=n, method=method, naive=naive, warning=warning, reason=reason)


def old_bootstrap(y, clusters, rng, resamples, level=0.95):
    y = np.asarray(y, dtype=float)
    codes, sizes = cluster_codes(clusters, y.size)
    g = sizes.size
    sums = np.bincount(codes, weights=y, minlength=g)
    if g < 2:
        return dict(statistic=float(sums.sum() / y.size), clusters=g)
    draws = np.empty(resamples)
    chunk = max(1, 2_000_000 // g)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        pick = rng.integers(0, g, size=(stop - start, g))
        draws[start:stop] = sums[pick].sum(axis=1) / sizes[pick].sum(axis=1)
    low, high = np.quantile(draws, [(1 - level) / 2, 1 - (1 - level) / 2])
    return dict(statistic=float(sums.sum() / y.size), standard_error=float(draws.std(ddof=1)), low=float(low),
                high=float(high), clusters=g)


def old_variance(y, units, scenarios):
    y = np.asarray(y, dtype=float)
    n_rows = y.size
    ucode, usize = cluster_codes(units, n_rows)
    scode, _ = cluster_codes(scenarios, n_rows)
    width = int(scode.max()) + 1
    cells, ccode = np.unique(ucode * width + scode, return_inverse=True)
    ccode = ccode.reshape(-1)
    csize = np.bincount(ccode).astype(float)
    cell_unit = cells // width
    g, c, big_n = usize.size, csize.size, float(n_rows)
    usize = usize.astype(float)
    yc = y - y.mean()
    csum = np.bincount(ccode, weights=yc, minlength=c)
    usum = np.bincount(cell_unit, weights=csum, minlength=g)
    between_cells = float(np.dot(csum, csum / csize))
    between_units = float(np.dot(usum, usum / usize))
    ss_e = max(0.0, float(np.dot(yc, yc)) - between_cells)
    ss_v = max(0.0, between_cells - between_units)
    df_e, df_v, df_u = big_n - c, c - g, g - 1
    sq_within = float(np.sum(csize**2 / usize[cell_unit]))
    s2_e = ss_e / df_e if df_e > 0 else 0.0
    s2_v = (ss_v - df_v * s2_e) / (big_n - sq_within) if df_v > 0 else 0.0
    s2_u = ((between_units - df_u * s2_e - (sq_within - float(np.sum(csize**2)) / big_n) * s2_v)
            / (big_n - float(np.sum(usize**2)) / big_n)) if df_u > 0 else float("nan")
    raw = (float(s2_u), float(s2_v), float(s2_e))
    return dict(raw=raw, unit=max(0.0, raw[0]) if np.isfinite(raw[0]) else raw[0], scenario=max(0.0, raw[1]),
                generation=max(0.0, raw[2]), units=g, scenarios=c / g, generations=big_n / c, rows=n_rows,
                reasons=(df_e <= 0, df_v <= 0, df_u <= 0))


# -- comparison ----------------------------------------------------------------------------------
def close(a, b, what):
    if isinstance(a, float) or isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return
        assert abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b)), (what, a, b)
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), what
        for i, (x, z) in enumerate(zip(a, b, strict=True)):
            close(x, z, f"{what}[{i}]")
    else:
        assert a == b, (what, a, b)


def check_interval(new, old):
    if old["standard_error"] == 0 and old["clusters"] > 1:
        # every unit gave the same mean: the old code printed a zero-width interval; now there is
        # none, with the reason (a zero-width interval from finite data claims certainty)
        assert math.isnan(new.low) and math.isnan(new.high) and "same mean" in new.reason
        old = {k: v for k, v in old.items() if k not in ("low", "high", "reason")}
    for key, want in old.items():
        got = getattr(new, key)
        if key == "warning" and got != want and got and want:
            # the ratio is printed to 2 decimals: an exact x.xx5 may round either way at 1e-16
            ratio = old["standard_error"] / old["naive"][1]
            assert abs((ratio * 100) % 1 - 0.5) < 1e-9, (got, want)
            got, want = got.split("x ", 1)[1], want.split("x ", 1)[1]
        close(tuple(vars(got).values()) if key == "naive" else got, want, key)


def check_variance(new, old):
    for key, want in old.items():
        if key == "reasons":
            got = tuple(any(w in r for r in new.reasons) for w in ("one run per", "one scenario per", "one unit"))
        else:
            got = getattr(new, key)
        close(got, want, key)


def data_sets(seed=20261201, count=300):
    """(values, units, scenarios) of every shape the cell form must not change."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        kind = i % 10
        g = int(rng.integers(1, 4)) if kind == 0 else int(rng.integers(2, 40))
        sizes = np.full(g, int(rng.integers(1, 8))) if kind == 1 else rng.integers(1, 15, g)
        units = np.repeat(np.arange(g), sizes)
        n = units.size
        scen = rng.integers(0, int(rng.integers(1, 6)), n)          # shared across units by label
        if kind in (2, 5):
            scen = units * 10 + scen                                 # nested: every unit its own names
        if kind == 3:
            y = np.full(n, [0.0, 1.0, 0.25][i % 3])                 # all equal (representable)
        elif kind == 4:
            y = rng.random(n)                                        # rewards in [0, 1]
        elif kind == 6:
            y = 1e3 + rng.normal(0, 1, g)[units] + rng.normal(0, 0.5, n)   # far from zero
        else:
            y = (rng.random(n) < rng.beta(2, 2, g)[units]).astype(float)   # pass/fail
        labels = units
        if kind in (5, 7):
            labels = np.array([f"user-{u:03d}" for u in units])      # strings: factorised with a sort
        elif kind == 8:
            labels = units * 1_000_003 + 7                           # sparse ints: the unique path
        elif kind == 9:
            labels = rng.permutation(np.arange(g) * 3)[units]        # ints with gaps, out of order
        order = rng.permutation(n)                                   # rows in no particular order
        yield y[order], labels[order], scen[order]


def test_clustered_interval_equals_the_old_row_code_on_300_data_sets():
    seen, exact, plain = set(), 0, 0
    for y, units, scen in data_sets():
        for weighting in ("rows", "units"):
            new = clustered_interval(y, units, weighting=weighting, unit="user", confidence_level=0.9,
                                     sandwich="CR1", scale="t")
            old = old_clustered(y, units, 0.9, weighting, "user")
            check_interval(new, old)
            spread = not (old.get("standard_error") == 0 and old["clusters"] > 1)   # else no interval now
            if Cells.from_rows(y, units).shift == 0 and spread:      # sums are plain sums: the same floats
                plain += 1
                exact += np.array_equal([new.statistic, new.standard_error, new.low, new.high],
                                        [old["statistic"], old["standard_error"], old["low"], old["high"]],
                                        equal_nan=True)
            seen.add((new.method, new.reason is None, new.warning is None))
    assert len(seen) >= 5         # both methods, one cluster, warnings given and not
    assert exact == plain > 450     # all but those far from zero, constant or without spread: bit for bit


def test_variance_components_equal_the_old_row_code_on_300_data_sets():
    reasons = set()
    for y, units, scen in data_sets(seed=7):
        new = variance_components(y, units, scen)
        check_variance(new, old_variance(y, units, scen))
        check_variance(variance_components(y, units, units), old_variance(y, units, units))
        reasons.add(new.reasons)
    assert len(reasons) >= 3


def test_bootstrap_draws_the_same_clusters_as_the_old_row_code():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, (y, units, scen) in enumerate(data_sets(seed=11, count=120)):
            new = cluster_bootstrap_interval(y, units, rng=np.random.default_rng(i), resamples=200)
            old = old_bootstrap(y, units, np.random.default_rng(i), 200)
            for key, want in old.items():
                close(getattr(new, key), want, key)
                if i % 10 != 6:                            # shift 0: the very same draws
                    assert getattr(new, key) == want or math.isnan(want)


def test_unknown_policy_on_rows_equals_the_old_expand_then_interval():
    rng = np.random.default_rng(5)
    for _ in range(60):
        g = int(rng.integers(2, 20))
        units = np.repeat(np.arange(g), rng.integers(1, 9, g))
        y = (rng.random(units.size) < 0.6).astype(float)
        y[rng.random(units.size) < 0.2] = np.nan
        if np.isnan(y).all():
            continue
        for policy in ("fail", "exclude"):
            applied = apply_unknown_policy(y, policy)
            new = clustered_interval(y, units, unknown=policy, sandwich="CR1", scale="t")
            check_interval(new, old_clustered(applied.passed, units[applied.keep]))
            assert (new.unknowns, new.unknown_policy) == (int(np.isnan(y).sum()), policy)


def ledger_entries(rng, y, units, scen, *, pieces=3):
    """The rows as a ledger keeps them: per (unit, scenario) entries, each split over up to
    ``pieces`` conditions, shuffled; with rows n, passes, unknowns (NaN values), Σy, Σy²."""
    key = [(u, s, int(rng.integers(0, pieces))) for u, s in zip(units.tolist(), scen.tolist(), strict=True)]
    entries: dict = {}
    for (u, s, c), v in zip(key, y.tolist(), strict=True):
        e = entries.setdefault((u, s, c), [0, 0, 0, 0, 0.0, 0.0])
        e[0] += 1
        if math.isnan(v):
            e[2] += 1
        else:
            e[1] += v == 1.0
            e[3] += 1
            e[4] += v
            e[5] += v * v
    rows = [(*k, *e) for k, e in entries.items()]
    rng.shuffle(rows)
    return [np.array(col) for col in zip(*rows, strict=True)]


def test_cells_from_ledger_counts_give_the_row_answers():
    rng = np.random.default_rng(9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, (y, units, scen) in enumerate(data_sets(seed=13, count=100)):
            if y.min() < 0 or y.max() > 1:                                           # rewards in [0, 1]
                y = (y - y.min()) / max(np.ptp(y), 1e-9)
            y = np.where(y == 1.0, 1.0, np.where(y == 0.0, 0.0, np.round(y, 2)))     # passes or rewards
            if i % 2:
                y[rng.random(y.size) < 0.15] = np.nan                                 # unknown outcomes
            known = ~np.isnan(y)
            u, s, _, trials, passes, unknowns, rewarded, total, squares = ledger_entries(rng, y, units, scen)
            if set(np.unique(y[known])) <= {0.0, 1.0}:
                for policy in ("fail", "exclude"):
                    cells = Cells.from_passes(u, s, trials, passes, unknowns, policy=policy)
                    applied = apply_unknown_policy(y, policy)
                    ku, ks = units[applied.keep], scen[applied.keep]
                    check_interval(clustered_interval_cells(cells, sandwich="CR1", scale="t"),
                                   old_clustered(applied.passed, ku))
                    check_variance(variance_components_cells(cells), old_variance(applied.passed, ku, ks))
                    b = cluster_bootstrap_cells(Cells.from_passes(u, None, trials, passes, unknowns, policy=policy),
                                                rng=np.random.default_rng(i), resamples=100)
                    for key, want in old_bootstrap(applied.passed, ku, np.random.default_rng(i), 100).items():
                        close(getattr(b, key), want, key)
                    assert cells.unknowns == int((~known).sum())
            if known.any():
                cells = Cells.from_sums(u, s, rewarded, total, squares)
                check_interval(clustered_interval_cells(cells, weighting="units", scale="t"),
                               old_clustered(y[known], units[known], weighting="units"))
                check_variance(variance_components_cells(cells), old_variance(y[known], units[known], scen[known]))


def test_cell_form_equals_statsmodels_cr1_on_the_expanded_rows():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(17)
    g = 50
    trials = rng.integers(1, 30, g)
    passes = rng.binomial(trials, rng.beta(3, 2, g))
    cells = Cells.from_passes(np.arange(g), None, trials, passes)
    ours = clustered_interval_cells(cells, sandwich="CR1", scale="t")
    groups = np.repeat(np.arange(g), trials)
    y = np.concatenate([np.r_[np.ones(k), np.zeros(t - k)] for t, k in zip(trials, passes, strict=True)])
    fit = sm.OLS(y, np.ones((y.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    assert ours.method == "CR1 sandwich"
    assert ours.statistic == pytest.approx(fit.params[0], abs=1e-12)
    assert ours.standard_error == pytest.approx(fit.bse[0], abs=1e-12)
    assert ours.naive.standard_error == pytest.approx(y.std(ddof=1) / np.sqrt(y.size), abs=1e-12)


def test_shift_keeps_the_variance_of_values_far_from_zero():
    rng = np.random.default_rng(3)
    units = np.repeat(np.arange(30), 20)
    y = 1e9 + rng.normal(0, 1, 30)[units] + rng.normal(0, 1, 600)
    r = clustered_interval(y, units, sandwich="CR1", scale="t")
    exact = (y - 1e9).reshape(30, 20).mean(axis=1).std(ddof=1) / np.sqrt(30)
    assert r.standard_error == pytest.approx(exact, rel=1e-6)
    vc = variance_components(y, units, units)
    assert vc.generation == pytest.approx(((y - 1e9).reshape(30, 20).var(axis=1, ddof=1)).mean(), rel=1e-6)
    d = (y - 1e9).reshape(30, 20)                    # sums kept about a centre: shift says which
    kept = Cells.from_sums(np.arange(30), None, np.full(30, 20), d.sum(axis=1), (d * d).sum(axis=1), shift=1e9)
    assert clustered_interval_cells(kept, sandwich="CR1").standard_error == pytest.approx(exact, rel=1e-9)
    assert clustered_interval_cells(kept).statistic == pytest.approx(y.mean(), rel=1e-15)


def test_all_equal_values_that_do_not_sum_exactly_give_no_spread():
    y = np.full(70, 0.7)
    r = clustered_interval(y, np.arange(70) // 7, sandwich="CR1", scale="t")
    assert r.statistic == pytest.approx(0.7, abs=1e-15)
    assert r.standard_error < 1e-15 and r.naive.standard_error < 1e-15


def test_cells_refuse_what_cannot_be_counts():
    with pytest.raises(ValueError, match="n has -1"):
        Cells.from_sums(["a", "b"], None, [-1, 2], [0.0, 1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="every cell has n = 0"):
        Cells.from_sums(["a"], ["s"], [0], [0.0], [0.0])
    with pytest.raises(ValueError, match="sums has 1 entries"):
        Cells.from_sums(["a", "b"], None, [1, 1], [0.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="passes ≤ trials − unknowns"):
        Cells.from_passes(["a"], None, [3], [3], [1])
    with pytest.raises(ValueError, match="unknown='drop'"):
        Cells.from_passes(["a"], None, [3], [3], policy="drop")
    with pytest.raises(TypeError, match="cells must be"):
        clustered_interval_cells([1.0, 2.0])


def test_cells_carry_labels_in_code_order():
    c = Cells.from_sums(["v", "u", "v", "w"], ["x", "x", "y", "x"], [1, 2, 3, 0], [1.0, 1.0, 2.0, 0.0],
                        [1.0, 1.0, 2.0, 0.0])
    assert c.unit_labels.tolist() == ["u", "v"]                  # w had no rows
    assert [(c.unit_labels[u], c.scenario_labels[s]) for u, s in zip(c.unit, c.scenario, strict=True)] == [
        ("u", "x"), ("v", "x"), ("v", "y")]
    assert c.n.tolist() == [2, 1, 3] and c.rows == 6 and c.clusters == 2
    assert is_dataclass(c) and {f.name for f in fields(c)} >= {"n", "sum", "sumsq", "shift"}
