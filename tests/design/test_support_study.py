"""The simulated support agent: a planted memory effect recovered; shared tapes tighten contrasts."""

import numpy as np
import pytest

from fluke.design import factorial_contrasts
from fluke.simulate import simulate_support


def _contrasts(study):
    runs = study.runs
    return factorial_contrasts([r.outcome.reward for r in runs], [r.unit for r in runs],
                               {"memory": [r.condition["memory"] for r in runs],
                                "retry": [r.condition["retry"] for r in runs]})


def test_planted_memory_effect_recovered_and_no_interaction():
    study = simulate_support(200, seed=11, memory_effect=0.15)
    fc = _contrasts(study)
    mem, inter = fc["memory"], fc["memory x retry"]
    assert mem.low <= 0.15 <= mem.high
    assert mem.low > 0                                  # the effect is detected
    assert inter.low <= 0.0 <= inter.high
    assert abs(inter.statistic) < 2.5 * inter.standard_error
    assert fc.environments == 200 and mem.df == 199


def test_shared_tapes_give_a_narrower_contrast_than_independent_streams():
    shared = _contrasts(simulate_support(200, seed=12, tapes="shared"))["memory"]
    indep = _contrasts(simulate_support(200, seed=12, tapes="independent"))["memory"]
    assert (shared.high - shared.low) < 0.85 * (indep.high - indep.low)
    # both are honest about the same planted effect
    assert shared.low <= 0.15 <= shared.high and indep.low <= 0.15 <= indep.high


def test_runs_carry_the_policy_the_unit_and_the_recorded_order():
    study = simulate_support(5, seed=3, trials=2)
    assert len(study.runs) == 5 * 4 * 2
    r = study.runs[0]
    assert r.unit == r.scenario and set(r.condition) == {"memory", "retry"}
    order = study.plan.order[r.unit]
    assert study.plan.policies[order[0]] == r.condition and r.seed == 0
    # retries: a retry-3 run makes at most three lookups and stops at the first success
    for run in study.runs:
        lookups = [e for e in run.events if getattr(e, "tool", None) == "lookup_account"]
        assert 1 <= len(lookups) <= run.condition["retry"]
        assert all(not e.ok for e in lookups[:-1])
    assert study.retry_effect == pytest.approx(0.10 * (0.3 - 0.3**3))


def test_the_planted_effect_has_the_right_expectation():
    # shared tapes: each of an environment's two memory differences is 0/1 with P = 0.2, so
    # their average has variance at most 0.2 · 0.8 (perfect correlation): a conservative SE
    study = simulate_support(400, seed=13, memory_effect=0.2)
    mem = _contrasts(study)["memory"]
    assert abs(mem.statistic - 0.2) < 4 * np.sqrt(0.2 * 0.8 / 400)
    assert mem.standard_error <= np.sqrt(0.2 * 0.8 / 400) * 1.1
