"""``fluke decide``: expected loss per task by hand, the choice, P(wrong), the seal, bad tables, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.simulate import TRADEOFF_SPEC, tradeoff_suite

TABLE = "name: desk\nfailure: 1\nask: 0.5\nseverity: {hard: 20}\nspend: 10\n"


@pytest.fixture()
def suite_ledger(ledger):
    """The suite in a real SQLite file and, where its binaries exist, a real PostgreSQL server."""
    runs = tradeoff_suite(scenarios=12, trials=3, severe=(0.0, 0.05), seed=8).runs()
    ledger.ingest(runs)
    return ledger, runs


def _by_hand(runs, version):
    """Mean over scenarios of the mean run loss, from the runs and the spec, without fluke.decisions."""
    from fluke.grading import grade_run

    per: dict[str, list[float]] = {}
    for r in runs:
        if r.identity.version != version:
            continue
        loss = (0 if r.outcome.passed else 1.0) + (0.5 if r.outcome.label == "should_ask" else 0.0)
        loss += 20.0 * grade_run(r, TRADEOFF_SPEC).hard + 10.0 * r.cost["usd"]
        per.setdefault(r.scenario, []).append(loss)
    return float(np.mean([np.mean(v) for v in per.values()]))


def test_expected_loss_and_the_choice_match_a_computation_by_hand(suite_ledger):
    from fluke.analysis import decide

    ledger, runs = suite_ledger
    result = decide(ledger, TABLE, spec=TRADEOFF_SPEC)
    losses = {v.version: v for v in result.decision.losses}
    expected = {v: _by_hand(runs, v) for v in losses}
    for v, loss in losses.items():
        assert loss.expected == pytest.approx(expected[v], rel=1e-9)
        assert loss.interval[0] < loss.expected < loss.interval[1]
    assert result.decision.choice == min(expected, key=expected.get)
    p_best = sum(loss.p_best for loss in losses.values())
    chosen = losses[result.decision.choice]
    assert p_best == pytest.approx(1.0) and result.decision.p_wrong == pytest.approx(1 - chosen.p_best)


def test_p_wrong_is_calibrated_on_a_clear_and_a_close_call():
    from fluke.decisions import decide_losses

    rng = np.random.default_rng(1)
    base = rng.gamma(2.0, 1.0, 40)
    clear = decide_losses({"A": (range(40), base), "B": (range(40), base + 1.0)})
    close = decide_losses({"A": (range(40), base), "B": (range(40), base + rng.normal(0, 0.5, 40))})
    assert clear.choice == "A" and clear.p_wrong < 0.01
    assert 0.02 < close.p_wrong < 0.98


def test_a_severe_bound_makes_a_version_ineligible(suite_ledger):
    from fluke.analysis import decide

    ledger, _ = suite_ledger
    result = decide(ledger, TABLE + "eligible: {hard: 0.03}\n", spec=TRADEOFF_SPEC)
    out = [v for v in result.decision.losses if not v.eligible]
    hard_b = {s.severity: s for s in result.versions[1].severe}["hard"]
    assert (hard_b.upper > 0.03) == bool(out)
    if out:
        assert result.decision.choice == result.versions[0].version and "hard ≤" in out[0].why_not


def test_the_seal_must_come_before_the_runs(tmp_path):
    from fluke.ledger import open_ledger

    path, table = tmp_path / "d.db", tmp_path / "loss.yaml"
    table.write_text(TABLE, encoding="utf-8")
    runner = CliRunner()
    sealed = runner.invoke(group, ["--ledger", str(path), "decide", str(table), "--seal"])
    assert sealed.exit_code == 0, sealed.output
    ledger = open_ledger(str(path))
    ledger.ingest(tradeoff_suite(scenarios=5, trials=2, seed=1).runs())
    ok = runner.invoke(group, ["--ledger", str(path), "decide", str(table), "--sealed", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["sealed"]["status"] == "holds"
    table.write_text(TABLE + "# edited after the runs\n", encoding="utf-8")
    edited = runner.invoke(group, ["--ledger", str(path), "decide", str(table), "--sealed"])
    assert edited.exit_code == 1 and "no seal of this exact rule file" in edited.output


@pytest.mark.parametrize("text,message", [("falure: 1\n", "did you mean 'failure'"),
                                          ("failure: -1\n", "failure: -1 must be a number of at least 0"),
                                          ("severity: {hardd: 3}\n", "did you mean 'hard'"),
                                          ("ask: 0\n", "prices nothing"),
                                          ("failure: [1\n", "not valid YAML")])
def test_a_bad_table_is_one_line_naming_the_file_and_exit_2(tmp_path, text, message):
    from fluke.ledger import open_ledger

    path, table = tmp_path / "d.db", tmp_path / "loss.yaml"
    open_ledger(str(path)).ingest(tradeoff_suite(scenarios=2, trials=1).runs())
    table.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(group, ["--ledger", str(path), "decide", str(table)])
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert message in lines[0] and "loss.yaml" in lines[0] and "Traceback" not in result.output


def test_cli_decide_json_carries_costs_severities_and_the_decision(tmp_path):
    import yaml

    from fluke.ledger import open_ledger

    path, table, spec = tmp_path / "d.db", tmp_path / "loss.yaml", tmp_path / "spec.yaml"
    open_ledger(str(path)).ingest(tradeoff_suite(scenarios=6, trials=2, seed=3).runs())
    table.write_text(TABLE, encoding="utf-8")
    spec.write_text(yaml.safe_dump(TRADEOFF_SPEC), encoding="utf-8")
    result = CliRunner().invoke(group, ["--ledger", str(path), "decide", str(table), "model=tradeoff-a",
                                        "model=tradeoff-b", "--spec", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["kind"] == "decision" and doc["decision"]["choice"] in {v["version"] for v in doc["versions"]}
    first = doc["versions"][0]
    assert first["cost_per_success"]["unknown_cost"] == 0 and first["latency"]["runs"] == first["runs"]
    assert [s["severity"] for s in first["severe"]] == ["hard", "soft", "warn"]
