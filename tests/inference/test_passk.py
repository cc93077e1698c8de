"""pass@k and pass^k: the seed's worked figures, the bias of the plug-in, and τ-bench counts."""

import functools
import json
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from fluke.inference import (PlugInWarning, expected_pass_at_k, pass_at_k, pass_at_k_from_average,
                             pass_at_k_plugin, pass_hat_k)

TAU = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "tau-bench" / \
    "historical_trajectories" / "gpt-4o-airline.json"


def test_seed_pass3_of_ten_with_two_passing():
    assert pass_at_k([2], [10], k=3).statistic == pytest.approx(1 - Fraction(56, 120), abs=1e-12)
    assert round(pass_at_k([2], [10], k=3).statistic, 4) == 0.5333
    with pytest.warns(PlugInWarning, match="biased"):
        plug = pass_at_k_plugin([2], [10], k=3)
    assert round(plug.statistic, 4) == 0.4880
    assert plug.estimator == "plug-in" and plug.warning


def test_expectations_at_true_rate_point_two():
    # exact finite sums over Binomial(10, 0.2), computed here independently with scipy
    c = np.arange(11)
    pmf = stats.binom.pmf(c, 10, 0.2)
    unbiased = sum(p * (1 - comb(10 - ci, 3) / comb(10, 3)) for p, ci in zip(pmf, c, strict=True))
    plug = sum(p * (1 - (1 - ci / 10) ** 3) for p, ci in zip(pmf, c, strict=True))
    assert expected_pass_at_k(0.2, 10, 3) == pytest.approx(unbiased, abs=1e-12)
    assert expected_pass_at_k(0.2, 10, 3, estimator="plug-in") == pytest.approx(plug, abs=1e-12)
    assert round(expected_pass_at_k(0.2, 10, 3), 4) == 0.4880       # = 1 − 0.8³, unbiased
    assert round(expected_pass_at_k(0.2, 10, 3, estimator="plug-in"), 5) == 0.45056


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_impossible_and_certain_average_to_half_at_every_k(k):
    assert pass_at_k([0, 5], [5, 5], k=k).statistic == pytest.approx(0.5, abs=1e-15)
    assert pass_hat_k([0, 5], [5, 5], k=k).statistic == pytest.approx(0.5, abs=1e-15)


def test_transforming_the_average_pass1_warns_and_gives_the_wrong_target():
    with pytest.warns(PlugInWarning, match="same pass rate"):
        assert pass_at_k_from_average(0.5, 2) == pytest.approx(0.75)


def test_k_above_n_is_undefined_with_a_reason():
    r = pass_at_k([1, 2], [4, 2], k=3)
    assert np.isnan(r.statistic) and not r.defined
    assert "k=3 exceeds the trials recorded in 1 of 2 scenarios" in r.reason
    assert np.isnan(r.per_scenario[1]) and r.per_scenario[0] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="k=4 exceeds trials=3"):
        expected_pass_at_k(0.5, 3, 4)


def test_declared_weights_and_bad_input():
    r = pass_at_k([0, 4], [4, 4], k=1, weights=[3, 1])
    assert r.statistic == pytest.approx(0.25)
    with pytest.raises(ValueError, match="successes=5 must lie between 0 and trials=4"):
        pass_at_k([5], [4], k=1)
    with pytest.raises(ValueError, match="k=0 must be"):
        pass_at_k([1], [4], k=0)
    with pytest.raises(ValueError, match="weights has 1 entries"):
        pass_at_k([1, 2], [4, 4], k=1, weights=[1])


def test_unbiased_against_exact_fractions_on_many_pools():
    rng = np.random.default_rng(7)
    n = rng.integers(1, 30, 200)
    c = rng.integers(0, n + 1)
    for k in (1, 2, 5):
        ok = n >= k
        got = pass_at_k(c[ok], n[ok], k=k).per_scenario
        want = [1 - Fraction(comb(int(ni - ci), k), comb(int(ni), k)) for ci, ni in zip(c[ok], n[ok], strict=True)]
        np.testing.assert_allclose(got, [float(w) for w in want], rtol=0, atol=1e-12)
        got = pass_hat_k(c[ok], n[ok], k=k).per_scenario
        want = [Fraction(comb(int(ci), k), comb(int(ni), k)) for ci, ni in zip(c[ok], n[ok], strict=True)]
        np.testing.assert_allclose(got, [float(w) for w in want], rtol=0, atol=1e-12)


def _tau_counts():
    if not TAU.exists():
        pytest.skip(f"τ-bench data not found at {TAU} (../shared/data is absent)")
    raw = json.loads(TAU.read_text())
    counts: dict[int, list[int]] = {}
    for rec in raw:
        c = counts.setdefault(rec["task_id"], [0, 0])
        c[0] += int(rec["reward"] == 1.0)
        c[1] += 1
    return counts


@functools.lru_cache(maxsize=1)
def _adapter_runs():
    from fluke.adapters import read_file

    return list(read_file(TAU))


def _independent(counts, k):
    at = sum(1 - Fraction(comb(n - c, k), comb(n, k)) for c, n in counts.values()) / len(counts)
    hat = sum(Fraction(comb(c, k), comb(n, k)) for c, n in counts.values()) / len(counts)
    return float(at), float(hat)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_tau_bench_gpt4o_airline_from_counts(k):
    counts = _tau_counts()
    assert len(counts) == 50 and all(n == 4 for _, n in counts.values())
    c = np.array([v[0] for v in counts.values()])
    n = np.array([v[1] for v in counts.values()])
    at, hat = _independent(counts, k)
    assert pass_at_k(c, n, k=k).statistic == pytest.approx(at, abs=1e-12)
    assert pass_hat_k(c, n, k=k).statistic == pytest.approx(hat, abs=1e-12)
    if k == 1:
        assert at == pytest.approx(84 / 200)     # 84 of the 200 runs have reward 1


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_tau_bench_gpt4o_airline_through_the_adapter(k):
    counts = _tau_counts()
    runs = _adapter_runs()
    per: dict[str, list[int]] = {}
    for run in runs:
        row = per.setdefault(run.scenario, [0, 0])
        row[0] += int(bool(run.outcome.passed))
        row[1] += 1
    c = np.array([v[0] for v in per.values()])
    n = np.array([v[1] for v in per.values()])
    at, hat = _independent(counts, k)
    assert len(runs) == 200
    assert pass_at_k(c, n, k=k).statistic == pytest.approx(at, abs=1e-12)
    assert pass_hat_k(c, n, k=k).statistic == pytest.approx(hat, abs=1e-12)
