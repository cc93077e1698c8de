"""Issue 35's must-show, held against independent oracles (reproducers in ../shared/repro/stats/limits/).

* the CMH variance at 10^6 runs per arm is statsmodels' (``StratifiedTable``): its own
  denominator, read back from its statistic;
* ``fluke compare --sequential`` on a real SQLite ledger, the baseline ingested once and the
  candidate in 20 batches (b14): it decides, prints its power beside the fixed test's, and its
  e-values are the Fisher noncentral hypergeometric mixture computed here with scipy on tables
  built by hand from the runs ingested (the same e-values whose false alarms the 1,000-pair
  simulation in test_sequential_ingests.py counts);
* the B − A interval ``compare`` prints covers the runs' mean true difference on b04's designs
  near 0, near 1 and with one run per arm.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from fluke.cli import group
from fluke.comparison import DIFFERENT, compare_pass_rates, stratified_test, verdict_interval
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

sm = pytest.importorskip("statsmodels.stats.contingency_tables")


def _statsmodels_variance(fa, na, fb, nb):
    """statsmodels' CMH denominator: (Σ (a − E[a]))² over its uncorrected statistic."""
    tables = [np.array([[a, n1 - a], [b, n2 - b]], float) for a, n1, b, n2 in zip(fa, na, fb, nb, strict=True)]
    st = sm.StratifiedTable(tables)
    res = st.test_null_odds(correction=False)
    expected = sum((a + b) * n1 / (n1 + n2) for a, n1, b, n2 in zip(fa, na, fb, nb, strict=True))
    return (sum(fa) - expected) ** 2 / res.statistic, res.pvalue


@pytest.mark.parametrize("fa,na,fb,nb", [
    ([400_000], [1_000_000], [401_500], [1_000_000]),                       # b11's last row
    ([400_000, 30_000, 999_000], [1_000_000] * 3, [401_500, 31_000, 998_700], [1_000_000] * 3),
    ([10_000, 600_000], [1_000_000, 2_000_000], [10_400, 290_500], [1_000_000, 700_000]),
])
def test_the_cmh_variance_at_a_million_runs_per_arm_is_statsmodels(fa, na, fb, nb):
    t = stratified_test(fa, na, fb, nb)
    variance, pvalue = _statsmodels_variance(fa, na, fb, nb)
    assert t.variance == pytest.approx(variance, rel=1e-9)
    assert t.pvalue == pytest.approx(pvalue, rel=1e-6)
    assert t.variance > 0


RATES = np.array([0.9, 0.7, 0.5, 0.95, 0.6])
BASELINE_RUNS, BATCHES, PER_BATCH = 40, 20, 2


def _sequential_ledger(path, rng, drop):
    """A ingested once (40 runs per scenario), B in 20 ingests of 2 runs per scenario; the outcomes."""
    ledger = open_ledger(str(path))
    a = rng.random((5, BASELINE_RUNS)) < RATES[:, None]
    b = rng.random((5, BATCHES * PER_BATCH)) < (RATES - drop)[:, None]
    ledger.ingest([Run(scenario=f"s{s}", trial=t, identity=Identity(model="A"), outcome=Outcome(passed=bool(a[s, t])))
                   for s in range(5) for t in range(BASELINE_RUNS)])
    for batch in range(BATCHES):
        trials = range(batch * PER_BATCH, (batch + 1) * PER_BATCH)
        ledger.ingest([Run(scenario=f"s{s}", trial=t, identity=Identity(model="B"),
                           outcome=Outcome(passed=bool(b[s, t]))) for s in range(5) for t in trials])
    return a, b


def _oracle_evalues(a, b, prior_sd=1.0, nodes=120):
    """The mixture e-value after each look, by hand: look 0 holds A alone (no matched pair, E = 1);
    look t pairs A's runs 2(t − 1), 2t − 1 with B's batch t. Each 2×2 table's A failures follow
    Fisher's noncentral hypergeometric law given its margins; log ψ ~ N(0, prior_sd²) by
    Gauss–Hermite quadrature."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    psi = np.exp(prior_sd * x)
    w = w / w.sum()
    log_ratio = np.zeros(nodes)
    out = [1.0]
    for t in range(BATCHES):
        cols = slice(t * PER_BATCH, (t + 1) * PER_BATCH)
        for s in range(5):
            fa, fb = int((~a[s, cols]).sum()), int((~b[s, cols]).sum())
            m = fa + fb
            if m in (0, 2 * PER_BATCH):
                continue
            law = stats.nchypergeom_fisher(2 * PER_BATCH, m, PER_BATCH, psi)
            log_ratio += np.log(law.pmf(fa)) - stats.hypergeom(2 * PER_BATCH, m, PER_BATCH).logpmf(fa)
        out.append(float(np.sum(w * np.exp(log_ratio))))
    return np.array(out)


def test_cli_sequential_baseline_once_candidate_in_twenty_batches(tmp_path):
    a, b = _sequential_ledger(tmp_path / "seq.db", np.random.default_rng(35), drop=0.35)
    out = CliRunner().invoke(group, ["--ledger", str(tmp_path / "seq.db"), "--json", "compare", "model=A", "model=B",
                                     "--sequential", "--no-record"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    seq = doc["sequential"]
    assert len(seq["evalues"]) == 1 + BATCHES                  # every ingest is a look, and each decides
    oracle = _oracle_evalues(a, b)
    assert np.allclose(seq["evalues"], oracle, rtol=2e-3), (seq["evalues"][-3:], oracle[-3:])
    crossed = np.flatnonzero(oracle >= 20)
    assert seq["verdict"] == DIFFERENT and seq["stopped_at"] == int(crossed[0]) + 1    # looks count from 1
    power = seq["power"]
    assert 0 <= power["batch_by_batch"] <= power["fixed_sample"] <= 1
    text = CliRunner().invoke(group, ["--ledger", str(tmp_path / "seq.db"), "compare", "model=A", "model=B",
                                      "--sequential", "--no-record"]).output
    assert "batch by batch: different" in text
    assert f"the fixed-sample test has power {power['fixed_sample']:.2f}" in text
    assert f"the batch-by-batch test {power['batch_by_batch']:.2f}" in text


def test_cli_sequential_on_an_unchanged_pair_reads_the_same_evalues(tmp_path):
    # the 1,000-pair false-alarm simulation reads e-values off matched tables; this pins the CLI's
    # e-values on an unchanged pair to the hand-built ones, so that simulation is the CLI's test
    a, b = _sequential_ledger(tmp_path / "null.db", np.random.default_rng(7), drop=0.0)
    out = CliRunner().invoke(group, ["--ledger", str(tmp_path / "null.db"), "--json", "compare", "model=A",
                                     "model=B", "--sequential", "--no-record"])
    assert out.exit_code == 0, out.output
    seq = json.loads(out.output)["sequential"]
    assert np.allclose(seq["evalues"], _oracle_evalues(a, b), rtol=2e-3)


@pytest.mark.parametrize("g,n,draw,shift", [
    (5, 2, "uniform", 0.0),                 # b04: 5 scenarios at 0.3–0.9, 2 runs
    (10, 5, "0.97", -0.05),                 # near 1, a 5-point regression
    (20, 1, "beta91", -0.10),               # one run per arm (McNemar), rates Beta(9, 1)
    (8, 10, "0.02", 0.03),                  # near 0, an improvement
])
def test_b04_the_printed_interval_covers_the_runs_mean_difference(g, n, draw, shift):
    rng = np.random.default_rng(404 + g + n)
    reps, hit = 300, 0
    trials = np.full(g, n)
    for i in range(reps):
        pa = {"uniform": lambda: rng.uniform(0.3, 0.9, g), "beta91": lambda: rng.beta(9, 1, g)}.get(
            draw, lambda: np.full(g, float(draw)))()
        pb = np.clip(pa + shift, 0, 1)
        ka, kb = rng.binomial(n, pa), rng.binomial(n, pb)
        # the interval compare prints is the inversion of its own test (the limit and P(B < A),
        # the slow parts of compare, play no part in it): checked equal on the first draw
        test = stratified_test(n - ka, trials, n - kb, trials)
        _, lo, hi = verdict_interval(ka, trials, kb, trials, pvalue=test.pvalue)
        if i == 0:
            assert compare_pass_rates(ka, trials, kb, trials, draws=100).interval == pytest.approx((lo, hi))
        hit += lo <= 100 * float(np.mean(pb - pa)) <= hi
    assert hit / reps >= 0.93 - 2 * math.sqrt(0.95 * 0.05 / reps), hit / reps


def test_b18_one_scenario_at_100k_runs_per_arm_against_the_chi_square_test():
    # b18: A 60,146 and C 59,604 passes of 100,000; the CLI printed p = 0.013 and a 0.6-point limit.
    # Oracles: scipy's uncorrected χ² on the 2 × 2 table (the CMH test of one stratum is it, times
    # (N − 1)/N), and the limit z·√V/w with V the hypergeometric variance: at a 60% pass rate the
    # variance under a regression of 0.6 points is V's to 0.3%, so the limit under the alternative is it
    n = 100_000
    r = compare_pass_rates([60_146], [n], [59_604], [n], draws=200)
    table = np.array([[n - 60_146, 60_146], [n - 59_604, 59_604]])
    chi2 = stats.chi2_contingency(table, correction=False)[0]
    assert r.pvalue == pytest.approx(stats.chi2.sf(chi2 * (2 * n - 1) / (2 * n), 1), rel=1e-6)
    m = float(table[:, 0].sum())
    v = n * n * m * (2 * n - m) / ((2 * n) ** 2 * (2 * n - 1))
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert r.detection_limit == pytest.approx(100 * z * math.sqrt(v) / (n / 2), rel=0.01)
    assert r.verdict == DIFFERENT and r.direction == "lower"
