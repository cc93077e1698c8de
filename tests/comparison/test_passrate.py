"""Pass rates first: the stratified test, the difference, P(B < A) and the limit in points.

Oracles: statsmodels' StratifiedTable (CMH), scipy's fisher_exact and binomtest, enumeration
of every table set (exact conditional), statsmodels' cluster-robust OLS (the interval),
numerical integration (P(B < A)), the τ²-bench files read directly, and simulation.
"""

import itertools
import json
import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import integrate, stats
from statsmodels.stats.contingency_tables import StratifiedTable

from fluke.comparison import (
    DIFFERENT,
    TOO_SMALL,
    compare_pass_counts,
    compare_pass_rates,
    compare_runs,
    compare_versions,
    design_limits,
    pass_counts,
    stratified_pvalues,
    stratified_test,
)
from fluke.errors import UsageError
from fluke.record import AgentMessage, Outcome, Run, UserMessage

from ._oracles import mcnemar_power_by_loop
from ._realdata import FINE_TUNED, TAU2_FILES, TAU2_RESULTS, need, tau2_runs

DOMAINS = ("airline", "retail", "telecom")


def _tables(seed, strata, top):
    rng = np.random.default_rng(seed)
    na, nb = rng.integers(1, top, strata), rng.integers(1, top, strata)
    fa, fb = rng.binomial(na, rng.uniform(0.1, 0.9, strata)), rng.binomial(nb, rng.uniform(0.1, 0.9, strata))
    return fa, na, fb, nb


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("correction", [False, True])
def test_cmh_equals_statsmodels_stratified_table(seed, correction):
    fa, na, fb, nb = _tables(seed, int(np.random.default_rng(seed).integers(2, 40)), 60)
    table = np.stack([np.stack([fa, na - fa]), np.stack([fb, nb - fb])])    # 2 × 2 × K
    oracle = StratifiedTable(table).test_null_odds(correction=correction)
    ours = stratified_test(fa, na, fb, nb, method="cmh", correction=correction)
    assert ours.statistic == pytest.approx(oracle.statistic, abs=1e-9, rel=1e-9)
    assert ours.pvalue == pytest.approx(oracle.pvalue, abs=1e-9, rel=1e-9)
    if not correction:                      # the batch form has no continuity correction
        batch = stratified_pvalues(fa[None], na[None], fb[None], nb[None], method="cmh")
        assert batch[0] == pytest.approx(oracle.pvalue, abs=1e-9, rel=1e-9)


def _enumerate_exact(fa, na, fb, nb):
    """Exact conditional p by listing every combination of tables with the same margins."""
    supports = []
    for a, n1, b, n2 in zip(fa, na, fb, nb, strict=True):
        m = a + b
        xs = range(max(0, m - n2), min(n1, m) + 1)
        supports.append([(x, stats.hypergeom.pmf(x, n1 + n2, n1, m)) for x in xs])
    law = {}
    for combo in itertools.product(*supports):
        total = sum(x for x, _ in combo)
        law[total] = law.get(total, 0.0) + math.prod(p for _, p in combo)
    seen = law[int(sum(fa))]
    return sum(p for p in law.values() if p <= seen * (1 + 1e-7))


@pytest.mark.parametrize("seed", range(6))
def test_exact_conditional_equals_enumeration_and_fisher(seed):
    fa, na, fb, nb = _tables(100 + seed, 3, 7)
    ours = stratified_test(fa, na, fb, nb, method="exact")
    assert ours.pvalue == pytest.approx(min(1.0, _enumerate_exact(fa, na, fb, nb)), abs=1e-12)
    one = stratified_test(fa[:1], na[:1], fb[:1], nb[:1], method="exact")
    fisher = stats.fisher_exact([[fa[0], na[0] - fa[0]], [fb[0], nb[0] - fb[0]]]).pvalue
    assert one.pvalue == pytest.approx(fisher, abs=1e-12)


def test_small_counts_go_exact_and_large_ones_cmh():
    assert stratified_test([1, 0], [3, 3], [3, 2], [3, 3]).method == "exact conditional"
    assert stratified_test(*_tables(1, 30, 60)).method == "Cochran–Mantel–Haenszel"


def _tau2_pass(model, domain):
    """task id → passed, read straight off the τ²-bench file (reward 1 is a pass)."""
    doc = json.loads(need(TAU2_RESULTS / TAU2_FILES[(model, domain)]).read_text())
    return {s["task_id"]: s["reward_info"]["reward"] >= 1 for s in doc["simulations"]}


def _fixed_broken(domains):
    fixed = broken = 0
    for d in domains:
        a, b = _tau2_pass("gpt-4.1", d), _tau2_pass(FINE_TUNED, d)
        fixed += sum(1 for t in a if not a[t] and b[t])
        broken += sum(1 for t in a if a[t] and not b[t])
    return fixed, broken


def _tau2_compare(domains):
    runs_a = [r for d in domains for r in tau2_runs("gpt-4.1", d)]
    runs_b = [r for d in domains for r in tau2_runs(FINE_TUNED, d)]
    return compare_versions(runs_a, runs_b, rng=np.random.default_rng(0))


def test_exact_mcnemar_on_tau2_telecom_equals_binomtest():
    fixed, broken = _fixed_broken(["telecom"])
    assert (fixed, broken) == (12, 0)
    found = _tau2_compare(["telecom"]).pass_rates
    assert found.test.method == "exact McNemar" and (found.test.fixed, found.test.broken) == (12, 0)
    assert found.pvalue == pytest.approx(stats.binomtest(12, 12, 0.5).pvalue, abs=1e-15)
    assert found.verdict == DIFFERENT and found.direction == "higher"
    assert found.difference == pytest.approx(100 * 12 / 40)       # 18/40 → 30/40
    assert found.paired and found.strata == 40


def test_tau2_airline_is_too_small_to_tell_with_its_limit_and_informative_scenarios():
    fixed, broken = _fixed_broken(["airline"])
    found = _tau2_compare(["airline"])
    rates = found.pass_rates
    assert rates.verdict == TOO_SMALL
    assert rates.pvalue == pytest.approx(stats.binomtest(fixed, fixed + broken, 0.5).pvalue)
    # one run per arm: no shift within the room to fall at its 95% low end (Clopper–Pearson of the
    # pooled passes) reaches 80% exact McNemar power, so the limit is refused (issue 35)
    d = fixed + broken
    assert rates.strata - rates.uninformative == d
    passes = rates.passes_a + rates.passes_b
    room = float(stats.beta.ppf(0.05, passes, 2 * rates.strata - passes + 1))
    assert mcnemar_power_by_loop(rates.strata, d, 2 * rates.strata - passes, room) < 0.8
    assert rates.detection_limit == float("inf")
    assert "carry no information" in rates.summary() and "leave room for" in rates.summary()
    # τ²-bench records no failure step: the survival analysis is skipped and says why
    assert found.where.skipped and "no failed run has a known failure step" in found.where.reason


def test_all_100_tau2_tasks_paired_verdict_with_its_p():
    fixed, broken = _fixed_broken(DOMAINS)
    rates = _tau2_compare(DOMAINS).pass_rates
    assert rates.strata == 100 and rates.test.method == "exact McNemar"
    assert (rates.test.fixed, rates.test.broken) == (fixed, broken)
    p = stats.binomtest(fixed, fixed + broken, 0.5).pvalue
    assert rates.pvalue == pytest.approx(p, abs=1e-15)
    assert rates.verdict == (DIFFERENT if p < 0.05 else rates.verdict)
    assert rates.scenarios == 100 and rates.runs_a == rates.runs_b == 100


def _runs(n, failures, fail_len, pass_len, scenario="s"):
    runs = []
    for i in range(n):
        failed = i < failures
        events = [UserMessage(text="go")] + [
            AgentMessage(text=f"step {j}") for j in range((fail_len if failed else pass_len) - 1)
        ]
        runs.append(Run(scenario=scenario, trial=i, events=events, outcome=Outcome(passed=not failed)))
    return runs


def test_ten_against_fifty_percent_with_longer_failing_runs_reads_different():
    a, b = _runs(100, 10, 7, 4), _runs(100, 50, 7, 4)
    old = compare_runs(a, b).result
    assert old.verdict != DIFFERENT          # the last-event log-rank was blind to it
    found = compare_versions(a, b)
    rates = found.pass_rates
    assert rates.verdict == DIFFERENT and rates.direction == "lower"
    # one stratum: CMH = (N − 1)/N · Pearson's chi-square
    chi2 = stats.chi2_contingency([[10, 90], [50, 50]], correction=False).statistic
    assert rates.test.statistic == pytest.approx(chi2 * 199 / 200)
    assert rates.difference == pytest.approx(-40.0)
    assert found.where.skipped


def test_difference_interval_is_clustered_by_scenario():
    rng = np.random.default_rng(3)
    scen = np.repeat(np.arange(12), 2)              # two conditions per scenario
    na, nb = rng.integers(3, 9, 24), rng.integers(3, 9, 24)
    pa, pb = rng.binomial(na, 0.6), rng.binomial(nb, 0.5)
    found = compare_pass_rates(pa, na, pb, nb, scenarios=scen)
    d = 100 * (pb / nb - pa / na)
    assert found.difference == pytest.approx(d.mean())

    # two conditions in each of 12 scenarios: equal clusters, so CR2 is the cluster means' t (statsmodels CR1);
    # the new-tasks interval is the Newcombe hybrid (MOVER) of each arm's Wilson interval on its effective size
    def se(y):
        return float(sm.OLS(y, np.ones((24, 1))).fit(cov_type="cluster", cov_kwds={"groups": scen}).bse[0])

    ra, rb = pa / na, pb / nb
    sa, sb, sd = se(ra), se(rb), se(rb - ra)
    t = stats.t.ppf(0.975, 11)

    def wilson(p, s, n):
        n = min(p * (1 - p) / s**2, n)
        c = (p + t * t / (2 * n)) / (1 + t * t / n)
        h = t / (1 + t * t / n) * math.sqrt(p * (1 - p) / n + t**2 / (4 * n * n))
        return c - h, c + h

    (la, ua), (lb, ub) = wilson(ra.mean(), sa, na.sum()), wilson(rb.mean(), sb, nb.sum())
    rho = (sa**2 + sb**2 - sd**2) / (2 * sa * sb)
    a, b = ra.mean(), rb.mean()
    low = b - a - math.sqrt((b - lb) ** 2 + (ua - a) ** 2 - 2 * rho * (b - lb) * (ua - a))
    high = b - a + math.sqrt((ub - b) ** 2 + (a - la) ** 2 - 2 * rho * (ub - b) * (a - la))
    assert found.new_tasks_interval == pytest.approx((100 * low, 100 * high), rel=1e-9)
    # the verdict's interval inverts its test: 0 outside exactly when p < α
    lo, hi = found.interval
    assert (lo > 0 or hi < 0) == (found.pvalue < 0.05) and hi - lo > 0
    assert found.scenarios == 12 and found.strata == 24


def test_p_b_below_a_matches_numerical_integration():
    pa, na, pb, nb = 14, 20, 9, 20
    found = compare_pass_rates([pa], [na], [pb], [nb], draws=200_000, rng=np.random.default_rng(5))
    post_a, post_b = stats.beta(1 + pa, 1 + na - pa), stats.beta(1 + pb, 1 + nb - pb)
    exact = integrate.quad(lambda x: post_a.pdf(x) * post_b.cdf(x), 0, 1)[0]
    assert abs(found.p_b_below_a - exact) < 4 * found.mc_error
    assert found.prior == "Beta(1, 1) per stratum and arm"


def test_no_information_is_too_small_to_tell_never_no_difference():
    found = compare_pass_rates([5, 0], [5, 5], [5, 0], [5, 5])
    assert math.isnan(found.pvalue) and math.isinf(found.detection_limit)
    assert found.verdict == TOO_SMALL and found.uninformative == 2


def test_unknown_outcomes_are_carried_with_their_policy():
    runs = [Run(scenario="s", trial=i, outcome=Outcome(passed=[True, False, None][i % 3])) for i in range(9)]
    counts, unknown = pass_counts(runs, unknown_policy="exclude")
    assert counts == {("s", ""): (3, 6)} and unknown == 3
    found = compare_pass_counts(counts, {("s", ""): (5, 6)}, unknown=(unknown, 0), unknown_policy="exclude")
    assert found.unknown == (3, 0) and found.unknown_policy == "exclude"
    assert "3 unknown outcomes left out (unknown: exclude)" in found.conditional_on()
    assert found.to_dict()["unknown"] == [3, 0]
    with pytest.raises(UsageError, match="unknown_policy"):
        pass_counts(runs, unknown_policy="drop")


def test_bad_counts_are_fluke_errors_naming_the_argument():
    with pytest.raises(UsageError, match="trials_b"):
        compare_pass_rates([1], [2], [1], [0])
    with pytest.raises(UsageError, match="passes_a"):
        compare_pass_rates([3], [2], [1], [2])
    with pytest.raises(UsageError, match="share no scenario"):
        compare_pass_counts({("a", ""): (1, 2)}, {("b", ""): (1, 2)})


def test_limit_in_points_has_its_nominal_power_by_simulation():
    # 30 scenarios with pass rates spread over 0.35–0.85, 20 runs per arm each
    rng = np.random.default_rng(12)
    g, n, reps = 30, 20, 4000
    base = rng.uniform(0.35, 0.85, g)
    trials = np.full((reps, g), n)
    fa, fb = rng.binomial(n, 1 - base, (200, g)), rng.binomial(n, 1 - base, (200, g))
    limits = np.array([design_limits(n - fa[i], trials[i], n - fb[i], trials[i])[0] for i in range(200)])
    one = compare_pass_rates(n - fa[0], trials[0], n - fb[0], trials[0], draws=200)
    assert one.detection_limit == pytest.approx(limits[0])
    # plant a regression of the (average) printed limit: B's rate lower by δ in every scenario
    delta = limits.mean() / 100
    fa = rng.binomial(n, 1 - base, (reps, g))
    fb = rng.binomial(n, np.clip(1 - (base - delta), 0, 1), (reps, g))
    power = float((stratified_pvalues(fa, trials, fb, trials) < 0.05).mean())
    assert abs(power - 0.8) < 3 * math.sqrt(0.8 * 0.2 / reps)      # within Monte Carlo error (3 sd)


@pytest.mark.parametrize("low, high, runs, shift", [(0.3, 0.9, 10, 0.03), (0.97, 1.0, 3, 0.03),
                                                   (0.0, 0.1, 2, -0.02), (0.6, 0.9, 5, 0.06)])
def test_p_b_below_a_edgeworth_matches_the_monte_carlo(low, high, runs, shift):
    # issue 37: from 100 strata on P(B < A) is an Edgeworth expansion, not a Monte Carlo whose cost
    # grows with the strata; the Monte Carlo (independent Beta draws, numpy's own) is its oracle,
    # on skewed posteriors (rates near 0 and 1) and in a tail (the last case, P near 0.99)
    from fluke.comparison import p_below_edgeworth

    g = 100
    rng = np.random.default_rng(int(100 * high) + runs)
    p = rng.uniform(low, high, g)
    n = np.full(g, runs)
    pa, pb = rng.binomial(n, p), rng.binomial(n, np.clip(p - shift, 0, 1))
    draws = 100_000
    ta = rng.beta(1 + pa, 1 + n - pa, size=(draws, g)).mean(axis=1)
    tb = rng.beta(1 + pb, 1 + n - pb, size=(draws, g)).mean(axis=1)
    mc = float(np.mean(tb < ta))
    error = math.sqrt(max(mc * (1 - mc), 1e-4) / draws)
    assert abs(p_below_edgeworth(pa, n, pb, n) - mc) < 4 * error
    found = compare_pass_rates(pa, n, pb, n)
    assert found.p_method == "Edgeworth" and found.mc_error == 0 and found.draws == 0
    assert found.p_b_below_a == pytest.approx(p_below_edgeworth(pa, n, pb, n), abs=1e-12)


def test_p_b_below_a_stays_monte_carlo_below_100_strata():
    found = compare_pass_rates([5] * 99, [10] * 99, [4] * 99, [10] * 99, draws=1000)
    assert found.p_method == "Monte Carlo" and found.draws == 1000 and found.mc_error > 0
