"""compare, leaderboard and gate on PPI-corrected rates: a simulated lenient judge of known bias
(it passes half of every version's failures) shrinks the gap between a good and a weak version;
the corrected comparison recovers it, equals ppi-python's estimates combined by hand, and says
what it rests on (the judge's digest, the labels, the correction)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from fluke.analysis import compare_corrected, leaderboard_corrected
from fluke.analysis._judge import judge
from fluke.cli import group
from fluke.judging import JudgeConfig
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

ppi = pytest.importorskip("ppi_py", reason="ppi-python is the PPI++ oracle")
norm = pytest.importorskip("scipy.stats").norm

RUNS, LABELS = 600, 150
TRUE = {"good": 0.7, "weak": 0.5}
SENSITIVITY, SPECIFICITY = 0.97, 0.5      # lenient: passes 97% of passes and half of the failures


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("corrected")
    rng = np.random.default_rng(11)
    runs = [Run(scenario=f"s{i}", identity=Identity(model=m), outcome=Outcome(passed=bool(rng.random() < p)))
            for m, p in TRUE.items() for i in range(RUNS)]
    db = str(root / "c.db")
    config = JudgeConfig(model="lenient", prompt="PASS or FAIL?", endpoint="fake",
                         target={"sensitivity": SENSITIVITY, "specificity": SPECIFICITY, "seed": 4})
    with open_ledger(db) as led:
        led.ingest(runs)
        judge(led, config)
        verdicts = {h: b["label"] for h, b in led.grades(config.digest).items()}
    labelled = {m: set(rng.choice([r.hash for r in runs if r.identity.model == m], LABELS, replace=False))
                for m in TRUE}
    labels = root / "labels.csv"
    labels.write_text("run,label\n" + "".join(f"{r.hash},{'pass' if r.outcome.passed else 'fail'}\n" for r in runs
                                              if r.hash in labelled[r.identity.model]))
    return {"db": db, "runs": runs, "digest": config.digest, "verdicts": verdicts, "labelled": labelled,
            "labels": str(labels), "root": root}


def _oracle(world, model):
    """ppi-python's PPI++ estimate and normal interval for one version, and its standard error."""
    runs = [r for r in world["runs"] if r.identity.model == model]
    lab = [r for r in runs if r.hash in world["labelled"][model]]
    rest = [r for r in runs if r.hash not in world["labelled"][model]]
    y = np.array([float(r.outcome.passed) for r in lab])
    f = np.array([float(world["verdicts"][r.hash]) for r in lab])
    fu = np.array([float(world["verdicts"][r.hash]) for r in rest])
    value = float(np.squeeze(ppi.ppi_mean_pointestimate(y, f, fu)))
    low, high = (float(np.squeeze(x)) for x in ppi.ppi_mean_ci(y, f, fu, alpha=0.05))
    return value, (high - low) / (2 * norm.ppf(0.975))


def _truth(world, model):
    return np.mean([r.outcome.passed for r in world["runs"] if r.identity.model == model])


def test_the_corrected_difference_equals_ppi_python_combined_by_hand(world):
    with open_ledger(world["db"]) as led:
        result = compare_corrected(led, "model=weak", "model=good", judge=world["digest"][:12], labels=world["labels"],
                                   guard=False)
    (va, sa), (vb, sb) = _oracle(world, "weak"), _oracle(world, "good")
    se = math.sqrt(sa ** 2 + sb ** 2)
    d = result.difference
    assert result.a.corrected.value == pytest.approx(va, abs=1e-9)
    assert result.b.corrected.value == pytest.approx(vb, abs=1e-9)
    assert d.value == pytest.approx(vb - va, abs=1e-9) and d.se == pytest.approx(se, abs=1e-9)
    assert (d.low, d.high) == pytest.approx((vb - va - 1.959963984540054 * se, vb - va + 1.959963984540054 * se),
                                            abs=1e-9)
    assert d.pvalue == pytest.approx(2 * norm.sf(abs(vb - va) / se), rel=1e-9, abs=1e-300)
    assert d.limit == pytest.approx(100 * (norm.ppf(0.975) + norm.ppf(0.8)) * se, abs=1e-9)
    assert result.verdict == ("different" if d.pvalue < 0.05 else "too small to tell")


def test_compare_on_corrected_rates_recovers_the_gap_the_judge_shrinks_and_says_what_it_rests_on(world):
    out = CliRunner().invoke(group, ["--ledger", world["db"], "--json", "compare", "model=weak", "model=good",
                                     "--judge", world["digest"][:12], "--labels", world["labels"]])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    true_gap = _truth(world, "good") - _truth(world, "weak")
    judge_gap = doc["b"]["judge_only"]["value"] - doc["a"]["judge_only"]["value"]
    expected_judge_gap = (SENSITIVITY - (1 - SPECIFICITY)) * true_gap          # the bias the judge carries
    assert judge_gap == pytest.approx(expected_judge_gap, abs=0.06) and true_gap - judge_gap > 0.05
    diff = doc["difference"]
    assert diff["low"] <= true_gap <= diff["high"] and diff["low"] > 0 and doc["verdict"] == "different"
    assert doc["rate"] == "corrected"
    rests = doc["rests_on"]
    assert rests["judge"] == world["digest"] and rests["labelled"] == 2 * LABELS
    assert rests["labels"] == world["labels"] and rests["correction"].startswith("PPI++")
    assert doc["a"]["corrected"]["labelled"] == LABELS and doc["a"]["judged"] == RUNS
    text = CliRunner().invoke(group, ["--ledger", world["db"], "compare", "model=weak", "model=good",
                                      "--judge", world["digest"][:12], "--labels", world["labels"]]).output
    assert text.startswith("different: B − A = +") and "on PPI-corrected pass rates" in text
    assert f"judge {world['digest'][:12]} (lenient)" in text and "300 human labels" in text


def test_the_corrected_leaderboard_ranks_by_corrected_rate_and_tests_the_pair(world):
    with open_ledger(world["db"]) as led:
        board = leaderboard_corrected(led, [], judge="lenient", labels=world["labels"], guard=False)
    assert [a.label.split(" ")[1] for a in board.arms] == ["(good)", "(weak)"]
    [(a, b, d, q)] = board.pairs
    (vg, sg), (vw, sw) = _oracle(world, "good"), _oracle(world, "weak")
    assert (a, b) == (board.arms[0].label, board.arms[1].label) and d.value == pytest.approx(vw - vg, abs=1e-9)
    assert q == pytest.approx(2 * norm.sf(abs(vw - vg) / math.hypot(sg, sw)), rel=1e-9, abs=1e-300)
    out = CliRunner().invoke(group, ["--ledger", world["db"], "--json", "leaderboard", "--judge", "lenient",
                                     "--labels", world["labels"]])
    doc = json.loads(out.output)
    assert doc["kind"] == "corrected_leaderboard" and doc["rate"] == "corrected"
    assert doc["rests_on"]["judge"] == world["digest"] and [v["rank"] for v in doc["versions"]] == [1, 2]


def test_a_gate_compares_corrected_rates_when_the_rule_names_the_judge(world):
    root = world["root"]
    for version, baseline, status in (("model=good", "model=weak", "holds"), ("model=weak", "model=good", "fails")):
        rule = root / f"gate-{status}.yaml"
        rule.write_text(f"version: {version}\ncompare: {{baseline: {baseline}, margin: 0.05, judge: lenient, "
                        "labels: labels.csv}\n")
        out = CliRunner().invoke(group, ["--ledger", world["db"], "--json", "gate", str(rule)])
        doc = json.loads(out.output)
        [check] = doc["checks"]
        assert check["status"] == status, check
        assert "corrected rates" in check["asked"] and world["digest"][:12] in check["rests_on"]
        assert "300 human labels" in check["rests_on"] and "PPI++" in check["rests_on"]
    half = root / "half.yaml"
    half.write_text("version: model=good\ncompare: {baseline: model=weak, judge: lenient}\n")
    out = CliRunner().invoke(group, ["--ledger", world["db"], "gate", str(half)])
    assert out.exit_code == 2 and "need both judge" in out.output


def test_bad_usage_of_corrected_rates_is_one_line(world):
    for args, said in ((["compare", "model=weak", "model=good", "--judge", "lenient"], "both --judge"),
                       (["compare", "model=weak", "model=good", "--judge", "lenient", "--labels", world["labels"],
                         "--scenario", "s1"], "--scenario does not apply"),
                       (["leaderboard", "--judge", "nobody", "--labels", world["labels"]], "no judge 'nobody'")):
        out = CliRunner().invoke(group, ["--ledger", world["db"], *args])
        assert out.exit_code == 2 and said in out.output and "Traceback" not in out.output
