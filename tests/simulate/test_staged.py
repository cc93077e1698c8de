"""The staged workload reproduces seed 002's synthetic study (fixed salts, Monte Carlo tolerances)."""

import numpy as np
import pytest

import fluke.simulate._staged as staged
from fluke.comparison import (
    DIFFERENT,
    NO_DIFFERENCE,
    TOO_SMALL,
    compare_survival,
    per_step,
    rerun_rule,
    survival_data,
)
from fluke.record import ToolCall
from fluke.simulate import (
    BASELINE_RATES,
    STAGES,
    PlantedChange,
    calibrate_null,
    draw_arm,
    draw_failures,
    plant_change,
    verify_seal,
)

LABELS = np.array(("start",) + STAGES + ("reply",))


def _compare(a, b):
    time = np.r_[a.time, b.time]
    died = np.r_[a.died, b.died]
    group = np.r_[np.zeros(a.died.size, bool), np.ones(b.died.size, bool)]
    strata = np.r_[a.task, b.task]
    return compare_survival(time, died, group, strata=strata), per_step(time, died, group, labels=LABELS[time])


def test_baseline_fails_27_1_percent():
    arm = draw_arm(BASELINE_RATES, tasks=50, runs_per_task=400, salt="baseline")
    # 1 - 0.9^3 = 0.271; sd of the share over 20,000 episodes is 0.0031, allow 3 sd
    assert abs(arm.died.mean() - (1 - 0.9**3)) < 0.0095
    # and each stage's conditional failure rate is its own 0.10
    for j, stage in enumerate(STAGES):
        reached = (arm.failed_stage < 0) | (arm.failed_stage >= j)
        assert abs((arm.failed_stage[reached] == j).mean() - 0.10) < 0.0075, stage


def test_runs_carry_died_at_and_tool_calls():
    arm = draw_arm(BASELINE_RATES, tasks=5, runs_per_task=20, salt="runs")
    runs = arm.runs()
    data = survival_data(runs)
    assert data.time.tolist() == arm.time.tolist()
    assert data.died.tolist() == arm.died.tolist()
    assert data.died_from["died_at"] == int(arm.died.sum())
    dead = next(r for r in runs if not r.outcome.passed)
    call = dead.events[dead.outcome.died_at]
    assert isinstance(call, ToolCall) and call.ok is False and call is dead.events[-1]
    alive = next(r for r in runs if r.outcome.passed)
    assert [e.kind for e in alive.events] == ["user", "tool", "tool", "tool", "agent"]
    assert len({r.hash for r in runs}) == len(runs)


def test_rerun_rule_on_unchanged_pair_fixes_73_and_98_percent():
    a = draw_arm(BASELINE_RATES, runs_per_task=40, salt="rerun-A")
    a2 = draw_arm(BASELINE_RATES, runs_per_task=40, salt="rerun-A-prime", name="A'")
    rule = rerun_rule(a.task, a.died, a.trial, a2.task, a2.died, a2.trial)
    # 1 - p = 0.729 and 1 - p^3 = 0.980; Monte Carlo sd over salts is 0.016 and 0.006: allow 4 sd
    assert abs(rule.fixed_once.estimate - 0.729) < 0.064
    assert abs(rule.fixed_within.estimate - 0.980) < 0.024
    assert rule.tries == 3 and rule.inputs == 50


@pytest.mark.parametrize("stage", STAGES)
def test_large_planted_change_is_found_on_its_step(stage):
    change = PlantedChange(stage=stage, factor=2.0, nonce="test")
    a = draw_arm(BASELINE_RATES, runs_per_task=40, salt=f"large-A-{stage}")
    b = draw_arm(change.rates(), runs_per_task=40, salt=f"large-B-{stage}", name="B")
    result, steps = _compare(a, b)
    assert result.verdict == DIFFERENT and result.direction == "B"
    assert [s.label for s in steps.significant(0.05)] == [stage]


def test_large_unchanged_pair_is_no_significant_difference_near_1_19():
    a = draw_arm(BASELINE_RATES, runs_per_task=40, salt="large-A")
    a2 = draw_arm(BASELINE_RATES, runs_per_task=40, salt="large-A-prime", name="A'")
    result, _ = _compare(a, a2)
    assert result.verdict == NO_DIFFERENCE
    # the limit is exp(z/√V): about 1,084 deaths give V ≈ 263 (a little under D/4 within
    # tasks), so 1.19 to 1.21 where D alone said 1.186
    assert result.detection_limit == pytest.approx(np.exp(2.8016 / np.sqrt(result.logrank.variance)), rel=1e-4)
    assert 1.185 < result.detection_limit < 1.21


def test_small_unchanged_pair_is_too_small_to_tell_near_2_2():
    a = draw_arm(BASELINE_RATES, runs_per_task=2, salt="small-A")
    a2 = draw_arm(BASELINE_RATES, runs_per_task=2, salt="small-A-prime", name="A'")
    result, _ = _compare(a, a2)
    assert result.verdict == TOO_SMALL
    # about 54 deaths (sd 6.3): the limit lies within 2.0 to 2.5
    assert 2.0 < result.detection_limit < 2.5
    assert "runs per arm would be needed" in result.summary()


def test_200_null_pairs_false_alarms_and_uniform_pvalues():
    run = calibrate_null(200, tasks=50, runs_per_task=40, rng=np.random.default_rng(2026))
    cal = run.calibration
    assert cal.pairs == 200 and sum(cal.histogram) == 200
    assert cal.contains_nominal
    assert cal.ks_pvalue > 0.01 and cal.chi2_pvalue > 0.01
    assert run.verdicts[TOO_SMALL] == 0 and run.test == "pass rate" and run.ceiling == 5.0
    # the limit compare prints (design_limits, power under a regression): near 2.8·√V / W with
    # W = 50·20 and V ≈ 50·20·0.271·0.729·80/79 ≈ 200, a little above it (3.93 to 4.10 here)
    assert 3.7 < run.limit_min <= run.limit_max < 4.3


def test_null_calibration_flags_a_biased_comparison():
    # the same machinery must fail when the pairs are not null: B's review rate 0.13 instead of 0.10
    from fluke.comparison import logrank_batch, null_calibration
    from fluke.simulate import null_pairs
    rng = np.random.default_rng(1)
    pairs = null_pairs(100, tasks=50, runs_per_task=40, rng=rng)
    stage = draw_failures({"review": 0.13, "sample": 0.1, "measure": 0.1}, (100, 2000), rng=rng)
    time, died = pairs.time.copy(), pairs.died.copy()
    died[:, 2000:] = stage >= 0
    time[:, 2000:] = np.where(stage >= 0, stage + 1, 4)
    _, p, _ = logrank_batch(time, died, pairs.group, pairs.strata)
    assert not null_calibration(p).contains_nominal


def test_seal_uses_the_os_random_source_and_verifies(monkeypatch):
    monkeypatch.setattr(staged.secrets, "randbelow", lambda n: 2)
    change = plant_change()
    assert change.stage == "measure"
    assert verify_seal(change.digest, change.body())
    tampered = dict(change.body(), stage="review")
    assert not verify_seal(change.digest, tampered)
    b = draw_arm(change.rates(), tasks=2, runs_per_task=2, salt="s", name="B")
    assert "measure" not in b.identity().model_dump_json() and "0.2" not in b.identity().model_dump_json()
    assert change.rates()["measure"] == pytest.approx(0.2)


def test_bad_rates_are_refused():
    with pytest.raises(ValueError, match="unknown stage"):
        draw_arm({"reveiw": 0.1}, salt="x")
    with pytest.raises(ValueError, match="tasks=0 must be at least 1"):
        draw_arm(BASELINE_RATES, tasks=0, salt="x")


def test_os_drawn_sealed_stage_is_the_one_step_found_and_unseals_after():
    # the stage comes from the OS random source; the salts depend only on it, so the outcome is
    # the same as in the parametrised test above for whichever stage was drawn
    change = plant_change()
    sealed, kept = change.digest, change.body()      # the digest is published, the body kept aside
    a = draw_arm(BASELINE_RATES, runs_per_task=40, salt=f"large-A-{change.stage}")
    b = draw_arm(change.rates(), runs_per_task=40, salt=f"large-B-{change.stage}", name="B")
    del change
    result, steps = _compare(a, b)
    found = [s.label for s in steps.significant(0.05)]
    assert result.verdict == DIFFERENT and len(found) == 1
    # without the nonce a guess cannot be confirmed from the digest
    assert not any(verify_seal(sealed, dict(kept, stage=s, nonce="")) for s in STAGES)
    # opened only now: the kept body matches the digest, and names the step the comparison found
    assert verify_seal(sealed, kept) and kept["stage"] == found[0]


# -- pass rates first (issue 12): the same arms through the new primary comparison --------------
def _pass_rates(a, b):
    from fluke.comparison import compare_pass_rates

    fa = np.bincount(a.task, weights=a.died, minlength=a.tasks)
    fb = np.bincount(b.task, weights=b.died, minlength=b.tasks)
    na, nb = np.bincount(a.task), np.bincount(b.task)
    return compare_pass_rates(na - fa, na, nb - fb, nb, rng=np.random.default_rng(0))


def _where(a, b):
    from fluke.comparison import compare_where

    return compare_where(np.r_[a.time, b.time], np.r_[a.died, b.died],
                         np.r_[np.zeros(a.died.size, bool), np.ones(b.died.size, bool)],
                         strata=np.r_[a.task, b.task], labels=LABELS[np.r_[a.time, b.time]])


@pytest.mark.parametrize("stage", STAGES)
def test_large_planted_change_is_found_on_pass_rates_and_put_on_its_step(stage):
    change = PlantedChange(stage=stage, factor=2.0, nonce="test")
    a = draw_arm(BASELINE_RATES, runs_per_task=40, salt=f"large-A-{stage}")
    b = draw_arm(change.rates(), runs_per_task=40, salt=f"large-B-{stage}", name="B")
    rates = _pass_rates(a, b)
    # failure 27.1% → 35.2%: about 8 points against a limit near 4
    assert rates.verdict == DIFFERENT and rates.direction == "lower"
    assert rates.detection_limit < 5 and -12 < rates.difference < -4
    where = _where(a, b)
    assert not where.skipped and where.survival.verdict == DIFFERENT
    assert [s.label for s in where.steps.significant(0.05)] == [stage]
    assert where.hazard_ratio.low > 1 and where.steps.stratified


def test_large_unchanged_pair_is_cleared_on_pass_rates():
    a = draw_arm(BASELINE_RATES, runs_per_task=40, salt="large-A")
    a2 = draw_arm(BASELINE_RATES, runs_per_task=40, salt="large-A-prime", name="A'")
    rates = _pass_rates(a, a2)
    assert rates.verdict == NO_DIFFERENCE and 3.5 < rates.detection_limit < 4.5
    assert rates.uninformative == 0 and rates.strata == 50
    assert _where(a, a2).steps.significant(0.05) == ()


def test_small_unchanged_pair_is_too_small_to_tell_on_pass_rates():
    a = draw_arm(BASELINE_RATES, runs_per_task=2, salt="small-A")
    a2 = draw_arm(BASELINE_RATES, runs_per_task=2, salt="small-A-prime", name="A'")
    rates = _pass_rates(a, a2)
    assert rates.verdict == TOO_SMALL and rates.detection_limit > 5
    assert rates.runs_needed_per_arm > 100


def test_planted_change_through_stored_runs_and_compare_versions():
    from fluke.comparison import compare_versions

    change = PlantedChange(stage="sample", factor=2.0, nonce="test")
    a = draw_arm(BASELINE_RATES, runs_per_task=40, salt="large-A-sample")
    b = draw_arm(change.rates(), runs_per_task=40, salt="large-B-sample", name="B")
    found = compare_versions(a.runs(), b.runs(), rng=np.random.default_rng(1))
    assert found.verdict == DIFFERENT and found.where.unknown_step == (0, 0)
    assert found.died_from["died_at"] == int(a.died.sum() + b.died.sum())
    assert [s.label for s in found.where.steps.significant(0.05)] == ["sample"]


def test_log_rank_null_calibration_keeps_its_limit_from_the_information():
    run = calibrate_null(60, tasks=50, runs_per_task=40, test="log-rank", step_tests=False,
                         rng=np.random.default_rng(7))
    assert run.test == "log-rank" and run.ceiling == 1.3
    assert 1.18 < run.limit_min <= run.limit_max < 1.22
