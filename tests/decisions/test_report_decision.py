"""The report's summary shows cost, severe failures and the decision beside the pass rate, as decide computed them."""

from __future__ import annotations

import pytest

from fluke.simulate import TRADEOFF_SPEC, tradeoff_suite


@pytest.fixture()
def reported(tmp_path):
    from fluke.analysis import decide, report
    from fluke.ledger import open_ledger

    ledger = open_ledger(str(tmp_path / "r.db"))
    ledger.ingest(tradeoff_suite(scenarios=10, trials=3, severe=(0.0, 0.1), seed=6).runs())
    decided = decide(ledger, {"name": "desk table", "failure": 1, "severity": {"hard": 20}, "spend": 10},
                     spec=TRADEOFF_SPEC)
    result = report(ledger, out=tmp_path / "r.html", extras={"decision": decided})
    return decided, result, (tmp_path / "r.html").read_text(encoding="utf-8")


def test_the_section_holds_what_decide_computed(reported):
    decided, result, _ = reported
    section = result.data.decision
    assert section.choice == decided.decision.choice
    by_version = {r.version: r for r in section.rows}
    for v in decided.versions:
        row = by_version[v.version]
        hard = {s.severity: s for s in v.severe}["hard"]
        assert (row.passes, row.runs) == (v.passes, v.runs)
        assert row.cost_per_success == pytest.approx(v.cost_per_success.estimate)
        assert (row.hard, row.hard_upper) == (hard.failures, pytest.approx(hard.upper))
    assert section.rows[0].version == decided.decision.choice   # the chosen version first


def test_the_headline_and_the_terminal_summary_show_cost_severe_and_decision(reported):
    decided, result, html = reported
    claim = next(c for c in result.data.headline if c.section == "decision")
    for v in decided.versions:
        hard = {s.severity: s for s in v.severe}["hard"]
        said = (f"{v.label}: {v.passes / v.runs:.1%} ({v.passes}/{v.runs}) passed, "
                f"{v.cost_per_success.estimate:.4f} per success, {hard.failures} hard failures")
        assert said in claim.happened
    chosen = next(v.label for v in decided.versions if v.version == decided.decision.choice)
    assert "least expected loss under desk table" in claim.answer
    text = result.render()
    assert f"decision: {chosen} has the least expected loss under desk table" in text
    assert "Decision: cost, severe failures, expected loss" in html and "P(wrong choice)" in html


def test_without_a_loss_table_the_section_says_how_to_get_one(tmp_path):
    from fluke.analysis import report
    from fluke.ledger import open_ledger

    ledger = open_ledger(str(tmp_path / "r.db"))
    ledger.ingest(tradeoff_suite(scenarios=3, trials=2).runs())
    result = report(ledger, out=tmp_path / "r.html")
    assert result.data.decision is None and "--loss TABLE" in result.data.missing["decision"]


def test_cli_report_loss(tmp_path):
    import yaml
    from click.testing import CliRunner

    from fluke.cli import group
    from fluke.ledger import open_ledger

    path = tmp_path / "r.db"
    open_ledger(str(path)).ingest(tradeoff_suite(scenarios=4, trials=2, seed=2).runs())
    (tmp_path / "loss.yaml").write_text("failure: 1\nspend: 5\n", encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(TRADEOFF_SPEC), encoding="utf-8")
    result = CliRunner().invoke(group, ["--ledger", str(path), "report", "--out", str(tmp_path / "r.html"),
                                        "--loss", str(tmp_path / "loss.yaml"), "--spec", str(tmp_path / "spec.yaml")])
    assert result.exit_code == 0, result.output
    assert "decision: " in result.output and "per success" in result.output
