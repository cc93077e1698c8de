"""Perturbation suites: which contrasts survive, the worst case, and no probability without a law."""

import numpy as np
import pytest

from fluke.design import perturbation_suite


def _suite_data(rng, g=40):
    variants = ["nominal", "rephrased", "slow tool", "degraded retrieval"]
    shift = {"nominal": 0.3, "rephrased": 0.25, "slow tool": 0.0, "degraded retrieval": 0.15}
    rows = []
    for v in variants:
        base = rng.normal(0, 1, g)
        for p in ("base", "new"):
            y = base + (shift[v] if p == "new" else 0.0) + rng.normal(0, 0.1, g)
            rows += [(yy, e, p, v) for e, yy in enumerate(y)]
    y, env, pol, var = map(np.array, zip(*rows, strict=True))
    return y.astype(float), env, pol, var


def test_survival_worst_case_and_contrast_values():
    rng = np.random.default_rng(41)
    y, env, pol, var = _suite_data(rng)
    suite = perturbation_suite(y, env, pol, var, baseline="base")
    surv = {r.variant: r.survives for r in suite.rows}
    assert surv == {"nominal": True, "rephrased": True, "slow tool": False,
                    "degraded retrieval": True}
    assert suite.worst["new"].variant == "slow tool"
    # the contrast is the mean paired difference, computed here by hand
    m = var == "rephrased"
    d = y[m & (pol == "new")] - y[m & (pol == "base")]
    row = next(r for r in suite.rows if r.variant == "rephrased")
    assert row.contrast.statistic == pytest.approx(d.mean(), abs=1e-12)
    assert suite.share_not_significant is None and "not a failure probability" in suite.reason


def test_share_not_significant_only_under_declared_weights():
    rng = np.random.default_rng(42)
    y, env, pol, var = _suite_data(rng)
    w = {"nominal": 0.5, "rephrased": 0.2, "slow tool": 0.2, "degraded retrieval": 0.1}
    suite = perturbation_suite(y, env, pol, var, baseline="base", weights=w)
    assert suite.share_not_significant == {"new": pytest.approx(0.2)}
    assert "declared weights" in suite.conditional_on


def test_every_variant_must_reach_every_policy():
    rng = np.random.default_rng(43)
    y, env, pol, var = _suite_data(rng)
    keep = ~((var == "slow tool") & (pol == "new"))
    with pytest.raises(ValueError, match="variant 'slow tool' was not applied to policy 'new'"):
        perturbation_suite(y[keep], env[keep], pol[keep], var[keep], baseline="base")
    with pytest.raises(ValueError, match="baseline='old'"):
        perturbation_suite(y, env, pol, var, baseline="old")


def test_suite_on_the_simulated_support_agent():
    """Tool outages of rising severity, applied to every policy: retry's gain over a single
    attempt grows with the fault rate, memory's stays; no probability without a law."""
    from fluke.simulate import simulate_support

    rows = []
    for variant, fault in (("nominal", 0.3), ("outage", 0.7)):
        for r in simulate_support(150, seed=51, fault_rate=fault).runs:
            policy = f"memory={r.condition['memory']},retry={r.condition['retry']}"
            rows.append((r.outcome.reward, r.unit, policy, variant))
    y, env, pol, var = map(np.array, zip(*rows, strict=True))
    suite = perturbation_suite(y.astype(float), env, pol, var, baseline="memory=False,retry=1")
    by = {(r.variant, r.policy): r for r in suite.rows}
    retry = [by[(v, "memory=False,retry=3")].contrast.statistic for v in ("nominal", "outage")]
    # planted: retry's effect is tool_effect · (f − f³): 0.0273 at f = 0.3, 0.0357 at f = 0.7
    assert by[("outage", "memory=True,retry=1")].survives
    assert (
        by[("nominal", "memory=True,retry=1")].contrast.low
        <= 0.15
        <= by[("nominal", "memory=True,retry=1")].contrast.high
    )
    assert all(abs(x - t) < 0.05 for x, t in zip(retry, (0.0273, 0.0357), strict=True))
    assert suite.share_not_significant is None


def test_words_say_what_was_measured():
    # a13: the same true effect 0.1 under every variant; ten environments.
    from scipy import stats

    rng = np.random.default_rng(13)
    E = np.repeat(np.arange(10), 6)
    pol = np.tile(np.repeat(["base", "new"], 3), 10)
    var = np.tile(["nominal", "v1", "v2"], 20)
    y = np.where(pol == "new", 0.1, 0.0) + rng.normal(0, 0.15, E.size)
    y = np.where((var == "v2") & (pol == "new"), y - 0.5, y)          # v2 reverses the effect
    suite = perturbation_suite(y, E, pol, var, baseline="base", weights={"nominal": 1, "v1": 1, "v2": 1})
    assert not hasattr(suite, "failure_probability")
    for r in suite.rows:
        m = var == r.variant
        d = y[m & (pol == "new")] - y[m & (pol == "base")]              # one pair per environment
        half = stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)
        lo, hi = d.mean() - half, d.mean() + half
        want = "survives" if lo > 0 else ("reversed" if hi < 0 else "not significant")
        if r.variant != "nominal" and suite.rows[0].contrast.statistic < 0:
            want = "survives" if hi < 0 else ("reversed" if lo > 0 else "not significant")
        assert r.status == want and r.survives == (want == "survives")
    assert [r.status for r in suite.rows if r.variant == "v2"] == ["reversed"]
    share = suite.share_not_significant["new"]
    assert share == pytest.approx(sum(r.status == "not significant" for r in suite.rows) / 3)
