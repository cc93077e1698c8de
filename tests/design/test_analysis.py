"""fluke.analysis interval, passk, contrast, seal and unseal: the answers the CLI prints, as results.

Each result's ``to_dict()`` is checked against the JSON the CLI printed before the move, rebuilt
here independently from the raw τ-bench file (or the simulated study's runs) and the statistics
library; its Markdown must parse with a table in it.
"""

import json
import math
from collections import defaultdict
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt
from scipy import stats

from fluke import analysis
from fluke.cli import group
from fluke.design import factorial_contrasts, unseal_rule as design_unseal
from fluke.errors import InputError, UsageError
from fluke.inference import (cluster_bootstrap_interval, clustered_interval, pass_at_k_plugin,
                             t_test_pvalue, variance_components)
from fluke.ledger import open_ledger
from fluke.simulate import simulate_support

from ..conftest import TAU_AIRLINE, need


def same(a, b, path="$"):
    """Equal as JSON documents, floats to 1e-12 relative (sums in another order), NaN equal to NaN."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{path}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool) and isinstance(b, (int, float)):
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-15), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def markdown_tables(result) -> int:
    tokens = MarkdownIt("commonmark").enable("table").parse(result.render("markdown"))
    return sum(t.type == "table_open" for t in tokens)


def json_roundtrip(doc):
    return json.loads(json.dumps(doc, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)))


@pytest.fixture(scope="module")
def tau(tmp_path_factory):
    """A real ledger of τ-bench gpt-4o airline (50 tasks × 4 trials), and the raw records."""
    raw = json.loads(need(TAU_AIRLINE).read_text())
    url = str(tmp_path_factory.mktemp("tau") / "tau.db")
    result = CliRunner().invoke(group, ["--ledger", url, "ingest", str(TAU_AIRLINE), "--identity", "model=gpt-4o"])
    assert result.exit_code == 0, result.output
    with open_ledger(url) as ledger:
        yield ledger, raw


def _old_interval_version(version, label, y, units, level, boot=None):
    """What cli/_design.py's _interval_json printed for one version."""
    ci = clustered_interval(y, units, confidence_level=level, unit="unit")
    vc = variance_components(y, units, units)
    out = {"version": version, "label": label, "runs": len(y), "without_outcome": 0,
           "clustered": {"statistic": ci.statistic, "standard_error": ci.standard_error, "low": ci.low,
                         "high": ci.high, "df": ci.df, "clusters": ci.clusters, "rows": ci.rows,
                         "method": ci.method, "reason": ci.reason, "conditional_on": ci.conditional_on},
           "naive": vars(ci.naive), "design_effect": ci.design_effect, "warning": ci.warning,
           "variance_components": {"unit": vc.unit, "scenario": vc.scenario, "generation": vc.generation,
                                   "raw": list(vc.raw), "units": vc.units, "scenarios_per_unit": vc.scenarios,
                                   "generations_per_scenario": vc.generations, "reasons": list(vc.reasons)},
           "what_more_buys": [vars(p) for p in vc.what_more_buys(2)]}
    if boot:
        out["bootstrap"] = vars(cluster_bootstrap_interval(y, units, rng=np.random.default_rng(boot[1]),
                                                           resamples=boot[0], confidence_level=level))
    return out


def test_interval_result_is_the_old_json_on_tau_bench(tau):
    ledger, raw = tau
    version = ledger.versions()[0].version
    result = analysis.interval(ledger, confidence_level=0.9, bootstrap=200, seed=7)
    # the raw file, not the ledger: the task is the independent unit of a τ-bench run
    y = [float(r["reward"] == 1.0) for r in raw]
    units = [f"airline/{r['task_id']}" for r in raw]
    expected = {"format_version": 1, "kind": "interval", "outcome": "passed", "unit": "unit", "weighting": "rows",
                "confidence_level": 0.9,
                "versions": [_old_interval_version(version, "gpt-4o", y, units, 0.9, boot=(200, 7))],
                "unknowns": 0, "unknown_policy": "fail"}   # added by issue 14: no outcome here is unknown
    expected["versions"][0]["unknowns"] = 0
    same(json_roundtrip(result.to_dict()), json_roundtrip(expected))
    assert result.versions[0].interval.clusters == 50 and result.versions[0].interval.rows == 200
    assert markdown_tables(result) == 3
    text = result.render()
    assert text.startswith(f"version {version[:12]} (gpt-4o): mean passed 0.420, 90% CI")
    assert "cluster bootstrap" in text and "Conditional on:" in text


def test_interval_refuses_too_few_resamples_and_a_bad_level(tau):
    ledger, _ = tau
    with pytest.raises(UsageError, match=r"bootstrap=5: a cluster bootstrap needs at least 10"):
        analysis.interval(ledger, bootstrap=5)
    with pytest.raises(UsageError, match=r"level=1.2 must lie strictly between 0 and 1"):
        analysis.interval(ledger, confidence_level=1.2)
    with pytest.raises(UsageError, match="unit='user'"):
        analysis.interval(ledger, unit="user")
    assert analysis.interval(ledger, bootstrap=10).versions[0].bootstrap.resamples == 10


def test_fluke_interval_bootstrap_5_is_one_line_and_exit_2(tau):
    """The reproducer of issue 11: ``fluke interval --bootstrap 5`` ended in an internal error."""
    result = CliRunner().invoke(group, ["--ledger", tau[0].url, "interval", "--bootstrap", "5"])
    assert result.exit_code == 2
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert lines == ["fluke: error: bootstrap=5: a cluster bootstrap needs at least 10 resamples (or 0 for none)"]


def test_passk_result_is_the_old_json_on_tau_bench(tau):
    ledger, raw = tau
    version = ledger.versions()[0].version
    per = defaultdict(lambda: [0, 0])
    for r in raw:
        per[f"airline/{r['task_id']}"][0] += r["reward"] == 1.0
        per[f"airline/{r['task_id']}"][1] += 1
    result = analysis.passk(ledger, ks=[1, 2, 3, 5], plugin=True)
    doc = result.to_dict()
    assert doc["kind"] == "passk" and doc["format_version"] == 1
    (v,) = doc["versions"]
    assert v["per_scenario"] == {k: list(c) for k, c in per.items()}
    assert (v["scenarios"], v["trials"], v["passes"], v["trials_per_scenario"], v["weights"]) == (
        50, 200, sum(c for c, _ in per.values()), [4, 4], "equal")
    c, n = np.array([x[0] for x in per.values()]), np.array([x[1] for x in per.values()])
    for row, k in zip(v["rows"], [1, 2, 3, 5], strict=True):
        assert set(row) == {"k", "pass_at_k", "pass_hat_k", "reason", "plugin_pass_at_k", "warning", "confidence_level",
                            "pass_at_k_interval", "pass_hat_k_interval", "interval_reason"}
        if k > 4:
            assert math.isnan(row["pass_at_k"]) and "k=5 exceeds" in row["reason"]
            continue
        at = sum(1 - Fraction(comb(nn - cc, k), comb(nn, k)) for cc, nn in per.values()) / 50
        hat = sum(Fraction(comb(cc, k), comb(nn, k)) for cc, nn in per.values()) / 50
        assert (row["k"], row["reason"]) == (k, None)
        assert row["pass_at_k"] == pytest.approx(float(at), abs=1e-12)
        assert row["pass_hat_k"] == pytest.approx(float(hat), abs=1e-12)
        assert row["plugin_pass_at_k"] == pytest.approx(np.mean(1 - (1 - c / n) ** k), abs=1e-12)
        with pytest.warns(Warning):
            assert row["warning"] == pass_at_k_plugin(c, n, k).warning
    assert markdown_tables(result) == 1
    text = result.render()
    assert "k=5 undefined" in text and "biased" in text and v["version"] == version


def test_passk_weights_from_a_file_and_refusals(tau, tmp_path):
    ledger, raw = tau
    weights = tmp_path / "w.yaml"
    weights.write_text("".join(f"airline/{i}: {1.0 + (i == 0) * 49}\n" for i in range(50)))
    v = analysis.passk(ledger, ks="1", weights=weights).versions[0]
    share0 = np.mean([r["reward"] == 1.0 for r in raw if r["task_id"] == 0])
    others = np.mean([r["reward"] == 1.0 for r in raw if r["task_id"] != 0])
    assert v.rows[0]["pass_at_k"] == pytest.approx((50 * share0 + 49 * others) / 99, abs=1e-12)
    assert v.weights == f"declared in {weights}"
    weights.write_text("airline/0: 1\n")
    with pytest.raises(InputError, match="airline/1.*no weight declared"):
        analysis.passk(ledger, weights=weights)
    for bad in ("0", "2..x", ""):
        with pytest.raises(UsageError, match="k="):
            analysis.passk(ledger, ks=bad)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    url = str(tmp_path_factory.mktemp("sim") / "sim.db")
    runs = simulate_support(120, seed=31).runs
    with open_ledger(url) as ledger:
        ledger.ingest(runs)
        yield ledger, runs


def test_contrast_result_is_the_old_json_and_its_p_values_are_paired_t_tests(study):
    ledger, runs = study
    result = analysis.contrast(ledger, factors="memory,retry", confidence_level=0.9)
    y = [float(r.outcome.passed) for r in runs]
    fc = factorial_contrasts(y, [r.sampling_unit for r in runs],
                             {f: [r.condition[f] for r in runs] for f in ("memory", "retry")}, confidence_level=0.9)
    expected = {"format_version": 1, "kind": "contrast", "factors": ["memory", "retry"], "outcome": "passed",
                "levels": fc.levels, "environments": 120, "dropped": fc.dropped, "confidence_level": 0.9,
                "cell_means": fc.cell_means, "contrasts": [vars(c) for c in fc.contrasts],
                "conditional_on": fc.conditional_on,
                "unknowns": sum(r.outcome.passed is None for r in runs), "unknown_policy": "fail"}
    same(json_roundtrip(result.to_dict()), json_roundtrip(expected))
    # the p-value of the main effect of memory is scipy's one-sample t test of the per-environment effects
    cell = {(r.sampling_unit, str(r.condition["memory"]), str(r.condition["retry"])): y[i] for i, r in enumerate(runs)}
    envs = sorted({r.sampling_unit for r in runs})
    d = [(cell[e, "True", "1"] + cell[e, "True", "3"] - cell[e, "False", "1"] - cell[e, "False", "3"]) / 2
         for e in envs]
    names = [c.name for c in result.contrasts]
    assert result.pvalues[names.index("memory")] == pytest.approx(stats.ttest_1samp(d, 0).pvalue, rel=1e-9)
    assert markdown_tables(result) == 2
    text = result.render()
    assert "memory at retry=3" in text and "Conditional on:" in text


def test_t_test_pvalue_matches_scipy():
    rng = np.random.default_rng(11)
    for n in (2, 5, 40):
        d = rng.normal(0.1, 1.0, n)
        se = d.std(ddof=1) / math.sqrt(n)
        assert t_test_pvalue(d.mean(), se, n - 1) == pytest.approx(stats.ttest_1samp(d, 0).pvalue, rel=1e-10)
    assert math.isnan(t_test_pvalue(0.2, 0.0, 5)) and math.isnan(t_test_pvalue(0.2, float("nan"), 5))


def test_contrast_refusals(study):
    ledger, _ = study
    with pytest.raises(UsageError, match="exactly two"):
        analysis.contrast(ledger, factors="memory")
    with pytest.raises(UsageError, match="level=0"):
        analysis.contrast(ledger, factors="memory,retry", confidence_level=0)
    with pytest.raises(InputError, match="condition.speed"):
        analysis.contrast(ledger, factors="memory,speed")


RULE = """name: memory helps
scope:
  identity: {model: sim-support}
decision:
  statistic: contrast
  factors: [memory, retry]
  effect: memory
  above: 0.025
"""


def test_seal_then_unseal_results_are_the_old_json(tmp_path):
    url = str(tmp_path / "fluke.db")
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE)
    with open_ledger(url) as ledger:
        sealed = analysis.seal(ledger, rule)
        doc = next(d for d in ledger.documents("seal") if d.digest == sealed.digest)
        assert sealed.to_dict() == {"format_version": 1, "kind": "seal", "digest": doc.digest,
                                    "recorded_at": doc.recorded_at, "file": str(rule),
                                    "text_sha256": doc.body["text_sha256"], "rule": doc.body["rule"]}
        ledger.ingest(simulate_support(60, seed=32).runs)
        result = analysis.unseal(ledger, sealed.digest[:12], rule=rule)
        report = design_unseal(ledger, sealed.digest, text=rule.read_bytes())
    dec = report.decision
    expected = {"format_version": 1, "kind": "unseal", "digest": report.digest, "sealed_at": report.sealed_at,
                "intact": True, "problems": [], "runs": 240, "early_runs": [], "decision": vars(dec),
                "decision_text": dec.text(), "holds": report.holds, "rule": report.rule,
                # issue 14: every unseal is recorded, so the second look (design_unseal above) is look 2
                "edited": [], "timing": dict(report.basis), "timing_text": report.timing(), "look": 1,
                "recorded_as": result.report.record}
    assert report.look == 2 and result.report.record is not None
    same(json_roundtrip(result.to_dict()), json_roundtrip(expected))
    assert result.holds is report.holds is True
    assert result.render().startswith(f"seal {sealed.digest[:12]} — memory helps, sealed ")
    assert "pre-registration HOLDS" in result.render().splitlines()[0]
    first = result.render("markdown").splitlines()[0]  # the verdict line is the comment's heading
    assert first.startswith("## seal ") and "pre-registration HOLDS" in first


def test_seal_refuses_a_bad_rule_naming_the_file(tmp_path):
    rule = tmp_path / "bad.yaml"
    rule.write_text("decision: {statistic: median, above: 1}\n")
    with open_ledger(str(tmp_path / "f.db")) as ledger, pytest.raises(InputError, match=r"bad\.yaml.*median"):
        analysis.seal(ledger, rule)


def test_seal_creates_the_ledger_it_seals_into(tmp_path):
    url, rule = tmp_path / "new.db", tmp_path / "rule.yaml"
    rule.write_text(RULE)
    result = CliRunner().invoke(group, ["--ledger", str(url), "--json", "seal", str(rule)])
    assert result.exit_code == 0 and url.exists() and json.loads(result.output)["kind"] == "seal"


HOSTILE = "[red]x[/red]\x1b[2J\x1b]8;;https://evil.example\x07link\x1b]8;;\x07\x1b]52;c;ZXZpbA==\x07"
SECRET = "AKIAIOSFODNN7EXAMPLE"  # a shape the redactor knows on main (Stripe keys come with the secrets branch)


def test_hostile_names_reach_no_output_as_markup_or_control_bytes(tmp_path):
    from fluke.record import Identity, Outcome, Run

    url = str(tmp_path / "h.db")
    runs = [
        Run(
            scenario=f"s{i} {SECRET}" if i == 0 else f"s{i}",
            trial=t,
            identity=Identity(model=HOSTILE + " " + SECRET),
            outcome=Outcome(passed=t <= i % 3, reward=0.5),
        )
        for i in range(4)
        for t in range(3)
    ]
    rule = tmp_path / "rule.yaml"
    rule.write_text(json.dumps({"name": HOSTILE + " " + SECRET, "decision": {"statistic": "mean", "above": 0.1}}))
    with open_ledger(url) as ledger:
        sealed = analysis.seal(ledger, rule)
        ledger.ingest(runs)
    for args in (["interval"], ["passk", "--k", "1,2"], ["unseal", sealed.digest[:12]], ["seal", str(rule)]):
        for fmt in ("text", "markdown", "json"):
            result = CliRunner().invoke(group, ["--ledger", url, "--format", fmt, *args])
            assert result.exit_code in (0, 1), result.output
            out = result.output
            assert not any(ch in out for ch in "\x1b\x07\r"), (args, fmt)
            assert SECRET not in out, (args, fmt)
            if fmt == "text" and args[0] != "seal":
                assert "[red]x[/red]\\x1b[2J" in out, (args, out)


def test_interval_on_a_version_with_one_unit_says_what_is_undefined(tmp_path):
    """One unit leaves the unit variance undefined; the projections were an internal error before."""
    from fluke.record import Identity, Outcome, Run

    with open_ledger(str(tmp_path / "one.db")) as ledger:
        ledger.ingest([Run(scenario="only", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t == 0))
                       for t in range(3)])
        result = analysis.interval(ledger)
    v = result.to_dict()["versions"][0]
    assert v["what_more_buys"] == [] and v["variance_components"]["units"] == 1
    assert math.isnan(result.versions[0].variance.unit)
    assert v["clustered"]["clusters"] == 1 and v["clustered"]["reason"]
    text = result.render()
    assert "what more evidence would buy: undefined" in text and "one unit" in text


def test_passk_with_five_trials_per_scenario_prints_pass_at_5_without_k(tmp_path):
    # Issue 14: the default budgets run to the fewest trials of any scenario, so five trials give pass@5.
    from math import comb

    from click.testing import CliRunner

    from fluke.cli import group
    from fluke.record import Identity, Outcome, Run

    passes = {"s0": 5, "s1": 3, "s2": 0, "s3": 1}
    path = str(tmp_path / "p.db")
    with open_ledger(path) as own:
        own.ingest([Run(scenario=s, trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t < c))
                    for s, c in passes.items() for t in range(5)])
    doc = json.loads(CliRunner().invoke(group, ["--ledger", path, "--json", "passk"]).stdout)
    rows = doc["versions"][0]["rows"]
    assert [r["k"] for r in rows] == [1, 2, 3, 4, 5]
    want = sum(1 - comb(5 - c, 5) / comb(5, 5) for c in passes.values()) / 4   # pass@5: any of the five
    assert rows[-1]["pass_at_k"] == pytest.approx(want) == 0.75
    lo, hi = rows[-1]["pass_at_k_interval"]
    assert lo < want < hi
    text = CliRunner().invoke(group, ["--ledger", path, "passk"]).output
    assert "\n5  0.7500" in text
