"""``fluke believe``, ``predict`` and ``calibration`` end to end on a real SQLite ledger file."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from fluke.cli import group
from fluke.inference import family_priors, posterior
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

from ..conftest import TAU2_RESULTS, TAU_AIRLINE, need

V1, V2 = Identity(model="agent-v1", harness="h1"), Identity(model="agent-v2", harness="h1")


def _runs(identity, plan, start=0):
    """plan: {scenario: (passes, trials, tags)} -> runs with those counts."""
    out = []
    for scenario, (k, n, tags) in plan.items():
        for t in range(n):
            out.append(Run(scenario=scenario, trial=start + t, identity=identity, tags=tags,
                           outcome=Outcome(passed=t < k)))
    return out


PLAN_V1 = {"crm/update": (50, 50, ["tool:crm"]), "crm/lookup": (9, 10, ["tool:crm"]),
           "crm/merge": (7, 10, ["tool:crm"]), "search/find": (10, 10, ["tool:search"]),
           "search/rank": (4, 10, ["tool:search"]), "pay/refund": (10, 10, [])}
PLAN_V2 = {"crm/update": (3, 5, ["tool:crm"]), "crm/lookup": (5, 5, ["tool:crm"]),
           "crm/merge": (4, 5, ["tool:crm"]), "search/find": (5, 5, ["tool:search"]),
           "search/rank": (2, 5, ["tool:search"]), "pay/refund": (5, 5, [])}


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "fluke.db")
    with open_ledger(path) as ledger:
        ledger.ingest(_runs(V1, PLAN_V1))
        ledger.ingest(_runs(V2, PLAN_V2))
    return path


def fluke(db, *args, code=0):
    result = CliRunner().invoke(group, ["--ledger", db, *map(str, args)])
    assert result.exit_code == code, result.output
    return result


def doc(db, *args):
    return json.loads(fluke(db, "--json", *args).output)


def test_believe_json_matches_independent_posteriors(db):
    out = doc(db, "believe", "--version", "model=agent-v1", "--bar", "0.9")
    rows = {r["scenario"]: r for r in out["scenarios"]}
    assert len(rows) == 6 and out["format_version"] == 1
    for name, (k, n, _) in PLAN_V1.items():
        r = rows[name]
        assert (r["passes"], r["trials"]) == (k, n)
        assert r["mean"] == pytest.approx((k + 1) / (n + 2))
        assert r["p_above"] == pytest.approx(stats.beta.sf(0.9, k + 1, n - k + 1))
        assert r["interval"][0] == pytest.approx(stats.beta.ppf(0.05, k + 1, n - k + 1))
        assert r["statement"]["conditional_on"].startswith("version ")
        assert "agent-v1" in r["statement"]["conditional_on"]
    assert out["suite"]["expected_below"] == pytest.approx(
        sum(stats.beta.cdf(0.9, k + 1, n - k + 1) for k, n, _ in PLAN_V1.values()))


def _mixture_mean(batches, *, odds, prior=(1, 1)):
    """The posterior mean of the last batch's θ, enumerating every configuration of changes between batches.

    Each carry is unchanged with prior probability odds / (1 + odds); a change restarts the evidence
    at the declared prior. A configuration's weight is its prior times the Beta-binomial likelihood
    of each segment of batches that share one θ.
    """
    import itertools

    from scipy.special import betaln

    a0, b0 = prior
    p_change = 1 / (1 + odds)
    total = mean = 0.0
    for changes in itertools.product((0, 1), repeat=len(batches) - 1):
        segments = [[batches[0]]]
        for changed, batch in zip(changes, batches[1:], strict=True):
            segments.append([batch]) if changed else segments[-1].append(batch)
        log_w = sum(np.log(p_change if c else 1 - p_change) for c in changes)
        for seg in segments:
            k, n = sum(x for x, _ in seg), sum(y for _, y in seg)
            log_w += betaln(a0 + k, b0 + n - k) - betaln(a0, b0)
        k, n = sum(x for x, _ in segments[-1]), sum(y for _, y in segments[-1])
        total += np.exp(log_w)
        mean += np.exp(log_w) * (a0 + k) / (a0 + b0 + n)
    return mean / total


def test_believe_carries_and_detects_the_change(db):
    out = doc(db, "believe", "--version", "model=agent-v2", "--carry-from", "model=agent-v1",
              "--discount", "1", "--odds", "4")
    r = {x["scenario"]: x for x in out["scenarios"]}["crm/update"]
    assert round(r["p_changed"], 3) == 0.872 and round(r["surprise"], 4) == 0.0065
    # one posterior: both branches mixed, nothing collapsed (issue 14: the same number on every line)
    assert "P(changed) = 0.872" in r["statement"]["carried"] and "agent-v1" in r["statement"]["carried"]
    assert r["mean"] == pytest.approx(_mixture_mean([(50, 50), (3, 5)], odds=4))
    calm = {x["scenario"]: x for x in out["scenarios"]}["pay/refund"]
    assert calm["p_changed"] < 0.2


def test_believe_discount_and_footprint(db):
    plain = doc(db, "believe", "--version", "model=agent-v2", "--carry-from", "model=agent-v1", "--discount", "1")
    r = {x["scenario"]: x for x in plain["scenarios"]}["search/find"]
    assert round(r["p_above"], 3) == 0.815                   # 10/10 then 5/5 at δ = 1: Beta(16, 1)
    foot = doc(db, "believe", "--version", "model=agent-v2", "--carry-from", "model=agent-v1",
               "--discount", "0", "--touched", "tool:search")
    rows = {x["scenario"]: x for x in foot["scenarios"]}
    assert round(rows["search/find"]["p_above"], 3) == 0.469   # touched: start over, Beta(6, 1)
    assert round(rows["pay/refund"]["p_above"], 3) == 0.815    # untouched: carried whole
    assert rows["search/find"]["delta"] == 0 and rows["pay/refund"]["delta"] == 1


def test_believe_family_prior_pools_by_tag(db):
    out = doc(db, "believe", "--version", "model=agent-v1", "--prior", "family", "--family-prefix", "tool:")
    rows = {x["scenario"]: x for x in out["scenarios"]}
    # The family's (μ, α+β) integrated over the hyperprior (see test_family for its oracles).
    fp = family_priors([50, 9, 7], [50, 10, 10], ["tool:crm"] * 3)
    want = posterior([50, 9, 7], [50, 10, 10], prior=fp.prior).mean[2]
    assert rows["crm/merge"]["mean"] == pytest.approx(float(want), rel=1e-6)
    assert "family tool:crm" in rows["crm/merge"]["prior"]
    assert "no mechanism tag" in rows["pay/refund"]["prior"]
    assert rows["pay/refund"]["mean"] == pytest.approx(11 / 12)


def test_believe_against_flags_regressions(db, tmp_path):
    with open_ledger(db) as ledger:
        ledger.ingest(_runs(Identity(model="agent-v3", harness="h1"),
                            {"search/find": (2, 10, ["tool:search"]), "search/rank": (10, 10, ["tool:search"])}))
    out = doc(db, "believe", "--version", "model=agent-v3", "--against", "model=agent-v1", "--clean-batch", "10")
    rows = {x["scenario"]: x for x in out["review"]["scenarios"]}
    assert rows["search/find"]["regressed"] and rows["search/find"]["role"] == "regression"
    assert rows["search/rank"]["progressed"] and rows["search/rank"]["graduated"]
    assert rows["search/find"]["fisher_worse"] == pytest.approx(
        stats.fisher_exact([[10, 0], [2, 8]], alternative="greater")[1])
    text = fluke(db, "believe", "--version", "model=agent-v3", "--against", "model=agent-v1").output
    assert "regressed" in text and "graduates" in text


def test_believe_prints_tables_and_the_statement(db):
    text = fluke(db, "believe", "--version", "model=agent-v1").output
    assert "100% (50/50)" in text and "suite questions at bar 0.9" in text
    assert "What happened: 6 scenarios, 90 passes in 100 runs" in text
    assert "Conditional on: version" in text and "Carried from before: nothing" in text


def test_predict_then_calibration_scores_later_runs_only(db):
    fluke(db, "predict", "--version", "model=agent-v2")
    out = doc(db, "calibration")
    assert out["scored_runs"] == 0 and out["predictions"] == 6     # nothing recorded after the predictions
    later = {"crm/update": (1, 4, ["tool:crm"]), "search/rank": (3, 4, ["tool:search"])}
    with open_ledger(db) as ledger:
        ledger.ingest(_runs(V2, later, start=100))
        preds = {d.body["scenario"]: d.body for d in ledger.documents("prediction")}
    out = doc(db, "calibration")
    p = [preds["crm/update"]["probability"]] * 4 + [preds["search/rank"]["probability"]] * 4
    y = [1, 0, 0, 0, 1, 1, 1, 0]
    assert out["scored_runs"] == 8
    assert out["overall"]["brier"] == pytest.approx(np.mean((np.array(p) - y) ** 2))
    assert out["overall"]["baseline_brier"] == pytest.approx(0.5 * 0.5)
    assert set(out["by_family"]) == {"tool:crm", "tool:search"}
    assert preds["crm/update"]["probability"] == pytest.approx(4 / 7)     # uniform + 3 of 5
    text = fluke(db, "calibration").output
    assert "Brier" in text and "always predicting the average" in text and "50.0% (2/4)" not in text


def test_bad_input_exits_2_with_one_line(db):
    r = fluke(db, "believe", "--version", "model=nobody", code=2)
    assert "no version matches" in r.output
    r = fluke(db, "believe", "--prior", "jeffreys", code=2)
    assert "--prior" in r.output and "uniform, beta:a,b or family" in r.output
    r = fluke(db, "believe", "--odds", "4", code=2)
    assert "--carry-from" in r.output
    fluke(db, "believe", "--discount", "1.5", code=2)


def test_every_verb_has_a_runnable_example_in_help(db):
    for verb in ("believe", "predict", "calibration"):
        assert "Example:" in fluke(db, verb, "--help").output


def test_real_tau_bench_gpt4o_airline(tmp_path):
    path = need(TAU_AIRLINE)
    raw = json.loads(path.read_text())
    per_task = {}
    for x in raw:
        k, n = per_task.get(x["task_id"], (0, 0))
        per_task[x["task_id"]] = (k + int(x["reward"] == 1), n + 1)
    db = str(tmp_path / "tau.db")
    fluke(db, "ingest", path, "--identity", "model=gpt-4o")
    out = doc(db, "believe")
    assert len(out["scenarios"]) == 50 and {r["trials"] for r in out["scenarios"]} == {4}
    assert sum(r["passes"] for r in out["scenarios"]) == sum(k for k, _ in per_task.values()) == 84
    first = {r["scenario"]: r for r in out["scenarios"]}["airline/0"]
    k0 = per_task[0][0]
    assert first["passes"] == k0 and first["mean"] == pytest.approx((k0 + 1) / 6)
    assert out["suite"]["average_mean"] == pytest.approx(np.mean([(k + 1) / 6 for k, _ in per_task.values()]))
    text = fluke(db, "believe", "--all").output
    assert "airline/49" in text and "suite questions" in text
    # Without --all the table keeps its 25 least certain rows and says how many it left out.
    short = fluke(db, "believe").output
    assert "… and 25 more scenarios (--all)" in short
    worst = min(out["scenarios"], key=lambda r: (r["p_above"], r["mean"]))["scenario"]
    assert short.index(worst) < short.index("… and 25 more")


def test_real_tau2_gpt41_pair_says_how_little_one_run_supports(tmp_path):
    results = need(TAU2_RESULTS)
    db = str(tmp_path / "tau2.db")
    files = sorted(results.glob("*airline*"))
    assert len(files) == 2
    fluke(db, "ingest", *files)
    for model in ("gpt-4.1", "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm"):
        out = doc(db, "believe", "--version", f"model={model}")
        assert {r["trials"] for r in out["scenarios"]} == {1} and len(out["scenarios"]) == 20
        assert "With one run per scenario" in out["statement"]["inferred"]
        assert "takes 28 clean runs" in out["statement"]["inferred"]


def test_believe_running_account_through_every_version(db):
    with open_ledger(db) as ledger:
        ledger.ingest(_runs(Identity(model="agent-v3", harness="h1"),
                            {"crm/update": (5, 5, ["tool:crm"]), "pay/refund": (5, 5, [])}))
    out = doc(db, "believe", "--version", "model=agent-v3", "--account", "--discount", "1", "--odds", "4")
    rows = {x["scenario"]: x for x in out["scenarios"]}
    assert len(out["account"]) == 3
    upd, calm = rows["crm/update"], rows["pay/refund"]
    # crm/update: 50/50, then 3/5 makes a change at v2 likely (P(changed) 0.872), then 5/5; the mean mixes
    # every configuration of changes, enumerated here
    assert upd["resets"] == 1 and "agent-v2" in upd["since"]
    assert upd["mean"] == pytest.approx(_mixture_mean([(50, 50), (3, 5), (5, 5)], odds=4))
    # pay/refund: 10/10, 5/5, 5/5, no change likely anywhere
    assert calm["resets"] == 0 and "agent-v1" in calm["since"]
    assert calm["mean"] == pytest.approx(_mixture_mean([(10, 10), (5, 5), (5, 5)], odds=4))
    assert "agent-v1" in calm["statement"]["carried"] and "agent-v2" in calm["statement"]["carried"]
    text = fluke(db, "believe", "--version", "model=agent-v3", "--account", "--odds", "4").output
    assert "since" in text and "P(changed)" in text
    fluke(db, "believe", "--account", "--carry-from", "model=agent-v1", code=2)


def test_family_prior_with_a_carry_still_runs(db):
    # The family prior is now a mixture; the old carry path matches it by mean and variance.
    out = doc(db, "believe", "--version", "model=agent-v2", "--carry-from", "model=agent-v1", "--prior", "family",
              "--family-prefix", "tool:", "--odds", "4")
    assert all(0 < s["mean"] < 1 for s in out["scenarios"])
    out = doc(
        db, "believe", "--version", "model=agent-v2", "--account", "--prior", "family", "--family-prefix", "tool:"
    )
    assert all(0 < s["mean"] < 1 for s in out["scenarios"])
