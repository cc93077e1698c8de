"""The PPI++-corrected interval covers the true pass rate whatever the judge's bias, and is narrower
than the human-only one when the judge is informative; the judge-only interval does not cover
under bias (printed beside it, with ``-s``)."""

import math

import numpy as np
import pytest

from fluke.judging import human_only, judge_only, ppi_mean

POPULATION = 2000
TRUE_RATE = 0.6
REPS = 400
#: Monte Carlo allowance on a coverage of 0.95 estimated from REPS runs: two standard errors.
ALLOWANCE = 2 * math.sqrt(0.95 * 0.05 / REPS)


def _judge_for_bias(bias: float) -> tuple[float, float]:
    """Sensitivity and specificity of a judge whose pass rate is TRUE_RATE + bias."""
    if bias >= 0:   # it passes failures: specificity drops
        sensitivity = 0.95
        specificity = 1 - (TRUE_RATE + bias - TRUE_RATE * sensitivity) / (1 - TRUE_RATE)
    else:           # it fails passes: sensitivity drops
        specificity = 0.95
        sensitivity = (TRUE_RATE + bias - (1 - TRUE_RATE) * (1 - specificity)) / TRUE_RATE
    assert 0 <= sensitivity <= 1 and 0 <= specificity <= 1
    return sensitivity, specificity


def _simulate(labels: int, bias: float, seed: int):
    rng = np.random.default_rng(seed)
    sensitivity, specificity = _judge_for_bias(bias)
    covered = {"ppi": 0, "human": 0, "judge": 0}
    widths = {"ppi": [], "human": []}
    for _ in range(REPS):
        truth = rng.random(POPULATION) < TRUE_RATE
        judge = np.where(truth, rng.random(POPULATION) < sensitivity, rng.random(POPULATION) >= specificity)
        rate = truth.mean()                       # the estimand: this population's pass rate
        sample = rng.choice(POPULATION, labels, replace=False)
        rest = np.setdiff1d(np.arange(POPULATION), sample)
        est = {"ppi": ppi_mean(truth[sample], judge[sample], judge[rest]),
               "human": human_only(truth[sample]), "judge": judge_only(judge)}
        for name, e in est.items():
            covered[name] += e.low <= rate <= e.high
        widths["ppi"].append(est["ppi"].width)
        widths["human"].append(est["human"].width)
    return ({k: v / REPS for k, v in covered.items()}, {k: float(np.mean(v)) for k, v in widths.items()},
            (sensitivity, specificity))


@pytest.mark.slow
@pytest.mark.parametrize("labels", [30, 100, 300])
@pytest.mark.parametrize("bias", [-0.20, -0.10, 0.0, 0.10, 0.20])
def test_ppi_interval_covers_under_judge_bias(labels, bias):
    coverage, widths, (se, sp) = _simulate(labels, bias, seed=int(1000 * labels + 100 * bias))
    print(f"\nlabels {labels:3d} bias {100 * bias:+.0f} pts (sens {se:.2f}, spec {sp:.2f}): coverage PPI++ "
          f"{coverage['ppi']:.3f}, human-only {coverage['human']:.3f}, judge-only {coverage['judge']:.3f}; "
          f"mean width PPI++ {widths['ppi']:.3f} vs human-only {widths['human']:.3f}")
    assert coverage["ppi"] >= 0.94 - ALLOWANCE
    if abs(bias) >= 0.10:
        assert coverage["judge"] < 0.5       # the judge alone is confidently wrong under bias
    if abs(bias) <= 0.10:                   # an informative judge (κ well above 0.5) narrows the interval
        assert widths["ppi"] < widths["human"]
