"""The comparison verbs end to end on a real ledger (SQLite file, and PostgreSQL when available)."""

import json

import numpy as np
import pytest
from scipy.stats import binomtest
from click.testing import CliRunner
from statsmodels.duration.survfunc import survdiff

from fluke.cli import VERBS, group, main
from fluke.ledger import open_ledger
from fluke.simulate import STAGES

from ._oracles import logrank_by_loop
from ._realdata import (
    FINE_TUNED,
    TAU1_AIRLINE,
    need,
    tau2_runs,
)

VERBS_HERE = ("compare", "fixcheck", "consistency", "simulate", "calibrate")


def fluke(url, *args, code=0):
    result = CliRunner().invoke(group, ["--ledger", url, *map(str, args)])
    if code is not None and result.exit_code != code:
        raise AssertionError(f"exit {result.exit_code}: {result.output}\n{result.exception!r}")
    return result


def as_json(url, *args, code=0):
    return json.loads(fluke(url, *args, "--json", code=code).stdout)


@pytest.mark.parametrize("verb", VERBS_HERE)
def test_every_verb_is_registered_and_documented_with_an_example(verb):
    assert VERBS[verb].startswith("fluke.cli._compare:")
    result = CliRunner().invoke(group, [verb, "--help"])
    assert result.exit_code == 0 and "Example:" in result.output and "fluke " + verb in result.output


def _survdiff_of(runs_a, runs_b):
    rows = [(r.scenario, len(r.events) - 1, not r.outcome.passed, g)
            for g, runs in enumerate((runs_a, runs_b)) for r in runs]
    scen, time, died, group_ = (np.array(x) for x in zip(*rows, strict=True))
    _, variance = logrank_by_loop(time, died, group_, scen)
    return survdiff(time, died.astype(int), group_, strata=scen), variance


def test_compare_gpt41_against_fine_tuned_is_the_exact_mcnemar_test(tau_ledger):
    doc = as_json(tau_ledger, "compare", "model=gpt-4.1", f"model={FINE_TUNED}")
    a = {
        r.scenario: r.outcome.passed is True for d in ("airline", "retail", "telecom") for r in tau2_runs("gpt-4.1", d)
    }
    b = {
        r.scenario: r.outcome.passed is True for d in ("airline", "retail", "telecom") for r in tau2_runs(FINE_TUNED, d)
    }
    fixed = sum(b[t] and not a[t] for t in a)
    broken = sum(a[t] and not b[t] for t in a)
    assert doc["test"].startswith("exact McNemar") and doc["strata"] == 100
    assert doc["pvalue"] == pytest.approx(binomtest(fixed, fixed + broken, 0.5).pvalue, rel=1e-12)
    assert doc["difference_points"] == pytest.approx(100 * (sum(b.values()) - sum(a.values())) / 100)
    assert doc["verdict"] == "different" and doc["detection_limit_unit"] == "points"
    assert len(doc["a"]["versions"]) == 3 and "difference between those runs" in doc["statement"]


def test_compare_one_domain_is_too_small_to_tell_with_runs_needed(tau_ledger):
    doc = as_json(tau_ledger, "compare", "model=gpt-4.1", f"model={FINE_TUNED}", "--scenario", "airline/*")
    assert doc["strata"] == 20 and doc["a"]["compared"] == 20
    assert doc["verdict"] == "too small to tell" and doc["runs_needed_per_arm"] > 20
    text = fluke(tau_ledger, "compare", "model=gpt-4.1", f"model={FINE_TUNED}", "--scenario", "airline/*").output
    # the paired limit (about 46 points) is beyond the room to fall at its 95% low end: refused (null)
    assert doc["detection_limit"] is None
    assert "runs per arm would be needed" in text and "leave room for" in text
    assert f"{doc['uninformative']} of 20 scenario cells carry no information" in text


def test_fixcheck_and_consistency_on_tau_bench_trials(tau_ledger):
    raw = json.loads(need(TAU1_AIRLINE).read_text())
    fail = {(r["task_id"], r["trial"]): r["reward"] < 1 for r in raw}
    once = [not fail[(t, k + 2)] for (t, k) in fail if k < 2 and fail[(t, k)]]
    doc = as_json(tau_ledger, "fixcheck", "model=gpt-4o@0-1", "model=gpt-4o@2-3")
    rule = doc["candidate_rule"]
    assert rule["rows"] == len(once) == 57
    assert rule["fixed_once"]["estimate"] == pytest.approx(np.mean(once))
    # no control: no test against the failures that picked the inputs, so nothing "improved"
    assert doc["control_rule"] is None and doc["flags_against"] == "first run"
    assert doc["by_input"] is None and doc["bar"]["clears"] is False
    cons = as_json(tau_ledger, "consistency", "model=gpt-4o")["agents"][0]
    f = np.array([sum(fail[(t, k)] for k in range(4)) for t in range(50)])
    assert cons["p"] == pytest.approx(116 / 200)
    assert cons["c"] == pytest.approx((f * (f - 1)).sum() / (f * 3).sum())
    assert cons["fixed_once_if_pure_chance"] == pytest.approx(1 - 116 / 200)


def test_fixcheck_with_a_control(tau_ledger):
    doc = as_json(tau_ledger, "fixcheck", "model=gpt-4o@0", "model=gpt-4o@1-2", "--control", "model=gpt-4o@3")
    assert doc["difference_once"]["clusters"] == doc["candidate_rule"]["inputs"]
    assert doc["flags_against"] == "control"


def test_simulate_seal_compare_reveal(ledger_url, tmp_path):
    seal = tmp_path / "seal.json"
    sim = as_json(ledger_url, "simulate", "--tasks", "10", "--runs-per-task", "2", "--runs-per-task", "8",
                  "--seal-file", seal)
    versions = {k: v["version"] for k, v in sim["arms"].items()}
    assert sorted(versions) == ["A'/2", "A'/8", "A/2", "A/8", "B/2", "B/8"]
    assert sim["arms"]["A/8"]["runs"] == 80 and len(set(versions.values())) == 6
    with open_ledger(ledger_url) as ledger:
        docs = ledger.documents("planted-change-seal")
        assert [d.body["digest"] for d in docs] == [sim["seal_digest"]]
        first_run = min(v.first_recorded for v in ledger.versions())
        assert docs[0].recorded_at <= first_run
    # the seal stays shut until every B arm has been compared
    early = as_json(ledger_url, "simulate", "--reveal", seal, code=1)
    assert early["stage"] is None and early["checks"]["compared_before_reveal"] is False
    fluke(ledger_url, "compare", versions["A/8"][:12], versions["B/8"][:12])
    assert as_json(ledger_url, "simulate", "--reveal", seal, code=1)["stage"] is None
    fluke(ledger_url, "compare", versions["A/2"][:12], versions["B/2"][:12])
    opened = as_json(ledger_url, "simulate", "--reveal", seal)
    assert all(opened["checks"].values()) and opened["stage"] in STAGES
    # a tampered seal file is caught by its digest
    body = json.loads(seal.read_text())
    body["sealed"]["stage"] = next(s for s in STAGES if s != opened["stage"])
    seal.write_text(json.dumps(body))
    assert as_json(ledger_url, "simulate", "--reveal", seal, code=1)["checks"]["digest_matches"] is False


def test_calibrate_prints_the_false_alarm_interval(tmp_path):
    doc = as_json(str(tmp_path / "unused.db"), "calibrate", "--pairs", "60", "--seed", "3")
    assert doc["pairs"] == 60 and sum(doc["histogram"]) == 60
    assert doc["interval"][0] <= doc["false_alarms"] / 60 <= doc["interval"][1]
    assert sum(doc["verdicts"].values()) == 60


def test_bad_input_is_one_clear_error(tau_ledger, capsys):
    same = fluke(tau_ledger, "compare", "model=gpt-4o", "model=gpt-4o", code=2)
    assert "select the same runs" in same.output and "@0-1" in same.output
    nothing = fluke(tau_ledger, "compare", "model=nobody", "model=gpt-4o", code=2)
    assert "model=nobody" in nothing.output
    disjoint = fluke(tau_ledger, "compare", "model=gpt-4.1", "model=gpt-4o", "--scenario", "retail/*", code=2)
    assert "no runs" in disjoint.output
    from fluke.comparison import compare_runs
    from fluke.errors import UsageError
    with pytest.raises(UsageError, match="share no scenario"):
        compare_runs(tau2_runs("gpt-4.1", "retail"), tau2_runs(FINE_TUNED, "telecom"))
    with pytest.raises(SystemExit) as exit_info:
        main(["--ledger", tau_ledger, "fixcheck", "model=gpt-4o@zero", "model=gpt-4o@2-3"])
    assert exit_info.value.code == 2
    assert "cannot read trials 'zero'" in capsys.readouterr().err


