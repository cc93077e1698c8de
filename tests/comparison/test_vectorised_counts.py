"""The vectorised forms ``compare`` and ``leaderboard`` take at a million runs, held to the forms they
replaced and to independent loops.

* Efron's tied-death sums: term by term for small ties (:data:`fluke.comparison._cox.DIRECT_TIES`),
  the log-gamma/digamma/trigamma closed forms for large ones (a numpy trigamma, against scipy's);
  both against ``math.fsum`` over the deaths, and the whole Cox fit (and a ``compare`` document)
  with every cell on the closed forms against the default, on generated counted runs and on τ²-bench.
* The ledger's places (``Ledger.places``: the steps table summed over an arm's versions by SQL)
  against the ``steps`` rows summed in Python.
* The rank bootstrap's sums (einsum) against a replicate-by-replicate loop on the same draws.
* Fisher's exact test summed over a window around the mode against every support point (the
  same log-factorials, to 1e-12) and against scipy's hypergeometric (to 1e-9: its own digits).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.special import gammaln

from fluke.analysis import compare, dumps
from fluke.comparison import _cox, rank_bootstrap, stratified_cox
from fluke.ledger import open_ledger

from .._close import assert_same_doc


def _loop_sums(x: float, d: int) -> tuple[float, float, float]:
    terms = [x - j for j in range(d)]
    return (math.fsum(1 / t for t in terms), math.fsum(1 / t**2 for t in terms),
            math.fsum(math.log(t) for t in terms))


def test_tie_sums_term_by_term_and_closed_form_equal_a_loop_over_the_deaths():
    rng = np.random.default_rng(5)
    d = np.r_[rng.integers(1, _cox.DIRECT_TIES + 1, 300), rng.integers(_cox.DIRECT_TIES + 1, 400, 60)].astype(float)
    x = d - 1 + rng.uniform(1.0, 5_000.0, d.size) * rng.choice([0.001, 1.0], d.size)   # x − (D − 1) ≥ 1
    direct = _cox._tie_sums(x, d, _cox._ties(d))
    closed = _cox._tie_sums(x, d, _cox._ties(d, direct=0))
    assert _cox._ties(d).small.size == 300 and _cox._ties(d).large.size == 60
    loop = np.array([_loop_sums(float(xi), int(di)) for xi, di in zip(x, d, strict=True)]).T
    # term by term: within a few ulp of fsum over the deaths
    small = d <= _cox.DIRECT_TIES
    for a, b in zip(direct, loop, strict=True):
        np.testing.assert_allclose(a[small], b[small], rtol=1e-14)
        np.testing.assert_allclose(a[~small], b[~small], rtol=1e-9)
    # the closed forms (what every cell used before) lose digits to cancellation where x is large
    # against D (a difference of two log-gammas of about 5,000), so they are held to 1e-9 only
    for a, b in zip(closed, loop, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9)


def test_tie_sums_in_chunks_of_whole_cells_are_bit_for_bit_the_sums_in_one_pass():
    """The term-by-term sums are taken a chunk of whole cells at a time (the memory of ten million
    runs' deaths): each cell's terms are added in the same order, so the chunks change no bit."""
    rng = np.random.default_rng(11)
    d = rng.integers(1, _cox.DIRECT_TIES + 1, 2_000).astype(float)
    x = d - 1 + rng.uniform(1.0, 900.0, d.size)
    whole = _cox._tie_sums(x, d, _cox._ties(d, at_once=10**9))
    assert len(_cox._ties(d, at_once=10**9).chunks) == 1
    for at_once in (1, 7, 33, 1_000):
        ties = _cox._ties(d, at_once=at_once)
        # the chunks tile the cells, and none holds more than at_once terms past its last whole cell
        assert [lo for lo, _ in ties.chunks[1:]] == [hi for _, hi in ties.chunks[:-1]]
        assert ties.chunks[0][0] == 0 and ties.chunks[-1][1] == d.size
        assert max(int(d[lo:hi].sum()) for lo, hi in ties.chunks) < at_once + _cox.DIRECT_TIES
        for a, b in zip(_cox._tie_sums(x, d, ties), whole, strict=True):
            assert np.array_equal(a, b)
        # and each cell still equals the loop over its deaths
    loop = np.array([_loop_sums(float(xi), int(di)) for xi, di in zip(x[:50], d[:50], strict=True)]).T
    for a, b in zip(whole, loop, strict=True):
        np.testing.assert_allclose(a[:50], b, rtol=1e-14)


def test_the_cox_fit_is_bit_for_bit_the_same_in_small_chunks(monkeypatch):
    time, died, group, stratum, weight = _counted(4, strata=60)
    whole = stratified_cox(time, died, group, strata=stratum, weights=weight)
    monkeypatch.setattr(_cox, "TERMS_AT_ONCE", 5)
    chunked = stratified_cox(time, died, group, strata=stratum, weights=weight)
    assert whole.reason is None and whole == chunked


def _counted(seed, strata=30, steps=8):
    """Counted runs with both small and large tied deaths: per (stratum, arm, step) a death count."""
    rng = np.random.default_rng(seed)
    time, died, group, stratum, weight = [], [], [], [], []
    for s in range(strata):
        for arm in (False, True):
            left = int(rng.choice([12, 60, 3_000]))
            hazard = rng.uniform(0.05, 0.25) * (1.25 if arm else 1.0)
            for t in range(1, steps + 1):
                dead = int(rng.binomial(left, hazard))
                time.append(t), died.append(True), group.append(arm), stratum.append(s), weight.append(dead)
                left -= dead
            time.append(steps), died.append(False), group.append(arm), stratum.append(s), weight.append(left)
    return np.array(time, float), np.array(died), np.array(group), np.array(stratum), np.array(weight, float)


@pytest.mark.parametrize("seed", range(3))
def test_the_cox_fit_is_the_same_with_every_cell_on_the_closed_forms(seed, monkeypatch):
    time, died, group, stratum, weight = _counted(seed)
    fast = stratified_cox(time, died, group, strata=stratum, weights=weight)
    monkeypatch.setattr(_cox, "DIRECT_TIES", 0)
    closed = stratified_cox(time, died, group, strata=stratum, weights=weight)
    assert fast.reason is None and fast.iterations == closed.iterations
    for name in ("estimate", "low", "high", "log_hr", "se"):
        assert getattr(fast, name) == pytest.approx(getattr(closed, name), rel=1e-12), name


def test_tau2_bench_cox_fit_is_the_same_with_every_cell_on_the_closed_forms(monkeypatch):
    """τ²-bench has one trial per task, so within a task no death meets another run at risk; by
    domain (and each failed run at its last event) the fit has real tied deaths to sum."""
    from fluke.comparison import survival_data

    from ._realdata import FINE_TUNED, tau2_runs

    parts = [(survival_data([r for d in ("airline", "retail", "telecom") for r in tau2_runs(model, d)],
                            unknown_step="last event"), arm) for arm, model in enumerate(("gpt-4.1", FINE_TUNED))]
    time = np.concatenate([p.time for p, _ in parts])
    died = np.concatenate([p.died for p, _ in parts])
    group = np.concatenate([np.full(p.time.size, bool(arm)) for p, arm in parts])
    domain = np.array([s.split("/")[0] for p, _ in parts for s in p.scenario.tolist()])
    assert died.sum() > 50 and np.unique(domain).size == 3
    fast = stratified_cox(time, died, group, strata=domain)
    monkeypatch.setattr(_cox, "DIRECT_TIES", 0)
    closed = stratified_cox(time, died, group, strata=domain)
    assert fast.reason is None
    for name in ("estimate", "low", "high", "log_hr", "se"):
        assert getattr(fast, name) == pytest.approx(getattr(closed, name), rel=1e-12), name


def test_generated_compare_document_is_the_same_with_every_cell_on_the_closed_forms(tmp_path, monkeypatch):
    from fluke.record import Identity, Outcome, Run

    rng = np.random.default_rng(8)
    runs = [Run(scenario=f"s{s}", trial=t, identity=Identity(model=m),
                outcome=Outcome(passed=bool(ok), died_at=None if ok else int(rng.integers(0, 6))))
            for m, bad in (("a", 0.4), ("b", 0.5)) for s in range(8) for t in range(60)
            for ok in [rng.random() > bad]]
    with open_ledger(str(tmp_path / "g.db")) as ledger:
        ledger.ingest(runs)
        fast = compare(ledger, "model=a", "model=b", record=False)
        assert fast.found.where.hazard_ratio.reason is None
        monkeypatch.setattr(_cox, "DIRECT_TIES", 0)
        closed = compare(ledger, "model=a", "model=b", record=False)
    assert_same_doc(json.loads(dumps(fast.payload())), json.loads(dumps(closed.payload())))


@pytest.mark.parametrize("batch", [3, 4096])
def test_places_are_the_steps_rows_summed_over_the_versions(ledger_url, batch, monkeypatch):
    """Also read a few rows at a time (``Places.BATCH``: the places are streamed, each text kept once)."""
    from fluke.ledger import Places
    from fluke.record import Identity, Outcome, Run, ToolCall

    monkeypatch.setattr(Places, "BATCH", batch)

    rng = np.random.default_rng(2)
    runs = []
    for i in range(600):
        passed = [True, False, None][int(rng.integers(3))]
        n = int(rng.integers(1, 5))
        events = [ToolCall(tool=f"t{j % 3}", ok=bool(rng.random() < 0.7)) for j in range(n)]
        died = int(rng.integers(0, n + 1)) if passed is False and rng.random() < 0.5 else None
        runs.append(Run(scenario=f"s{int(rng.integers(15))}", trial=i, identity=Identity(model=f"m{i % 3}"),
                        condition={"c": "x"} if i % 4 == 0 else {}, events=events,
                        outcome=Outcome(passed=passed, died_at=died)))
    with open_ledger(ledger_url) as ledger:
        ledger.ingest(runs)
        versions = [v.version for v in ledger.versions()]
        for chosen in (versions[:1], versions[:2], versions, None):
            summed: dict = {}
            for r in ledger.steps(version=chosen):
                key = (r.scenario, r.condition, r.cause, r.step, r.event)
                summed[key] = summed.get(key, 0) + r.runs
            got = ledger.places(version=chosen)
            assert got == summed and all(type(k[3]) is int and type(n) is int for k, n in got.items())
            assert len(got) > 20
        assert ledger.places(version=versions, condition="c=x") == {
            k: n for k, n in ledger.places(version=versions).items() if k[1] == "c=x"}
        # each scenario's text is one object however many places name it
        columns = ledger.places().columns
        assert len({id(s) for s in columns[0]}) == len(set(columns[0])) == 15


def test_the_rank_bootstrap_equals_a_replicate_by_replicate_loop_on_the_same_draws():
    rng = np.random.default_rng(11)
    g, replicates = 150, 300
    trials = rng.integers(1, 6, (4, g))
    passes = rng.binomial(trials, rng.uniform(0.3, 0.7, (4, 1)))
    passes[3] = passes[1]           # a version tied with another in every replicate
    trials[3] = trials[1]
    scenarios = np.array([f"s{c // 2}" for c in range(g)])    # two strata per scenario
    rank, low, high, p_first = rank_bootstrap(passes, trials, scenarios, replicates=replicates, seed=3)
    # the oracle: the same generator's draws, each replicate's means summed by math.fsum
    names, codes = np.unique(scenarios, return_inverse=True)
    rates = passes / trials
    draw = np.random.default_rng(3)
    block = max(1, 500_000 // names.size)
    boot = []
    for start in range(0, replicates, block):
        m = min(block, replicates - start)
        for row in draw.integers(0, names.size, size=(m, names.size)):
            w = np.bincount(row, minlength=names.size)[codes]
            boot.append([math.fsum(w * r) / math.fsum(w) for r in rates])
    boot = np.array(boot)
    ranks = 1 + (boot[:, None, :] > boot[:, :, None] + 1e-12).sum(axis=2)
    assert ranks[:, 1].tolist() == ranks[:, 3].tolist()
    assert np.quantile(ranks, 0.025, axis=0, method="inverted_cdf").astype(int).tolist() == low.tolist()
    assert np.quantile(ranks, 0.975, axis=0, method="inverted_cdf").astype(int).tolist() == high.tolist()
    assert (ranks == 1).mean(axis=0).tolist() == p_first.tolist()
    point = rates.mean(axis=1)
    assert rank.tolist() == (1 + (point[None, :] > point[:, None] + 1e-12).sum(axis=1)).tolist()


def _fisher_whole_support(a, b, c, d):
    """Two-sided Fisher p by scipy's hypergeometric over every table with the margins (scipy's rule)."""
    from scipy.stats import hypergeom

    total, row1, col1 = a + b + c + d, a + b, a + c
    x = np.arange(max(0, row1 + col1 - total), min(row1, col1) + 1)
    logpmf = hypergeom.logpmf(x, total, col1, row1)
    observed = hypergeom.logpmf(a, total, col1, row1)
    return min(1.0, float(np.exp(logpmf[logpmf <= observed + np.log1p(1e-7)]).sum()))


def test_fisher_over_a_window_of_the_support_equals_the_whole_support():
    from fluke.comparison import fisher_exact_many

    rng = np.random.default_rng(4)
    tables = []
    for n in (1, 4, 40, 400, 4_000, 25_000):
        na, nb = rng.integers(1, n + 1, 30), rng.integers(1, n + 1, 30)
        pa = rng.uniform(0, 1, 30)
        fa, fb = rng.binomial(na, pa), rng.binomial(nb, np.clip(pa + rng.normal(0, 0.05, 30), 0, 1))
        tables += list(zip(fa, na - fa, fb, nb - fb, strict=True))
        tables += [(0, n, n, 0), (n, 0, 0, n), (0, 0, 0, n), (1, n - 1, n - 1, 1), (0, n, 1, n - 1)]
    a, b, c, d = (np.array(x, dtype=np.int64) for x in zip(*tables, strict=True))
    got = fisher_exact_many(a, b, c, d)
    # the sum over every support point from the same log-factorials (the form the window replaced)
    log_fact = gammaln(np.arange(int((a + b + c + d).max()) + 2) + 1.0)
    choose = lambda n, k: log_fact[n] - log_fact[k] - log_fact[n - k]     # noqa: E731
    whole = []
    for x_obs, y, z, u in tables:
        total, row1, col1 = x_obs + y + z + u, x_obs + y, x_obs + z
        x = np.arange(max(0, row1 + col1 - total), min(row1, col1) + 1)
        point = choose(col1, x) + choose(total - col1, row1 - x) - choose(total, row1)
        observed = choose(col1, x_obs) + choose(total - col1, row1 - x_obs) - choose(total, row1)
        whole.append(min(1.0, math.fsum(np.exp(point[point <= observed + np.log1p(1e-7)]))))
    np.testing.assert_allclose(got, whole, rtol=1e-12, atol=1e-300)
    # and scipy's hypergeometric, whose log-pmf differs from log-factorials in its own last digits
    want = np.array([_fisher_whole_support(*map(int, t)) for t in tables])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)
    assert (got < 1e-20).any() and (got == 1.0).any()


def test_trigamma_equals_scipys_polygamma_from_tiny_to_huge_arguments():
    from scipy.special import polygamma

    rng = np.random.default_rng(9)
    z = np.r_[rng.uniform(1e-3, 1, 500), rng.uniform(1, 40, 2000), rng.uniform(40, 1e7, 2000), np.arange(1.0, 60.0)]
    np.testing.assert_allclose(_cox.trigamma(z), polygamma(1, z), rtol=4e-15, atol=0)
    # ψ1(1) = π²/6 and the recurrence ψ1(z) = ψ1(z + 1) + 1/z²
    assert _cox.trigamma(np.array([1.0]))[0] == pytest.approx(math.pi**2 / 6, rel=1e-15)
    np.testing.assert_allclose(_cox.trigamma(z), _cox.trigamma(z + 1) + 1 / z**2, rtol=1e-14)
