"""Seals that hold against edits (a15, a15b, a15c, a23, drills seal-time), on a real SQLite file.

Each test edits the ledger's file the way the reproducer does (plain sqlite3, outside fluke)
and checks what the unseal says.
"""

import json
import sqlite3

import pytest

from fluke.design import seal_rule, unseal_rule
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run, ToolCall, UserMessage

RULE = "name: r\ndecision: {statistic: mean, above: 0.5, bound: estimate}\n"


def _runs(n=20, seed=1, **identity):
    import random

    rng = random.Random(seed)
    return [Run(scenario=f"s{i % 5}", trial=i, identity=Identity(model="m", **identity),
                events=[UserMessage(text="a"), ToolCall(tool="x", ok=True)],
                outcome=Outcome(passed=rng.random() < 0.8)) for i in range(n)]


@pytest.fixture()
def path(tmp_path):
    return str(tmp_path / "l.db")


def _sql(path, statement, *args):
    con = sqlite3.connect(path)
    con.execute(statement, args)
    con.commit()
    con.close()


def test_honest_order_holds_and_the_unseal_is_recorded(path):
    with open_ledger(path) as led:
        d = seal_rule(led, RULE)
        runs = _runs()
        led.ingest(runs)
        report = unseal_rule(led, d[:12])
        assert report.holds and report.basis == {"event times": 0, "identity date": 0, "ingest": 20}
        [doc] = led.documents("unseal")
        assert doc.body["seal"] == d and doc.body["runs"] == sorted(r.hash for r in runs)
        assert doc.body["holds"] is True and doc.digest == report.record
        again = unseal_rule(led, d[:12])
        assert again.look == 2 and len(led.documents("unseal")) == 2      # append-only, every look


def test_back_dating_the_seal_column_does_not_make_early_runs_confirm(path):
    with open_ledger(path) as led:
        led.ingest(_runs(seed=2))
        d = seal_rule(led, RULE)
        assert len(unseal_rule(led, d[:12], record=False).early) == 20
    _sql(path, "UPDATE documents SET recorded_at='2000-01-01T00:00:00+00:00' WHERE kind='seal'")
    with open_ledger(path) as led:
        report = unseal_rule(led, d[:12])
    # a15: today this turns "DOES NOT HOLD" into "HOLDS".
    assert len(report.early) == 20 and not report.holds and not report.intact
    assert any("record of it was moved" in p for p in report.problems())


def test_forward_dating_the_ingests_is_seen(path):
    with open_ledger(path) as led:
        led.ingest(_runs(seed=3))
        d = seal_rule(led, RULE)
    _sql(path, "UPDATE ingests SET recorded_at='2999-01-01T00:00:00+00:00'")
    with open_ledger(path) as led:
        report = unseal_rule(led, d[:12])
    assert not report.holds and any("in the future" in p for p in report.problems())


@pytest.mark.parametrize("edit", ["flip", "reorder"])
def test_an_edited_stored_body_is_refused(path, edit):
    with open_ledger(path) as led:
        d = seal_rule(led, RULE.replace("0.5", "0.7"))
        led.ingest([Run(scenario=f"s{t % 4}", trial=t, identity=Identity(model="m"),
                        events=[UserMessage(text="a"), ToolCall(tool="x", ok=True)],
                        outcome=Outcome(passed=t % 2 == 0)) for t in range(8)])
        before = unseal_rule(led, d[:12], record=False)
        assert before.decision.estimate == pytest.approx(0.5) and not before.holds
    con = sqlite3.connect(path)
    for rid, body in con.execute("SELECT rowid, body FROM runs").fetchall():
        j = json.loads(body)
        if j["outcome"]["passed"] is False:
            if edit == "flip":
                j["outcome"]["passed"] = True
            j["events"] = j["events"][::-1]
            con.execute("UPDATE runs SET body=? WHERE rowid=?", (json.dumps(j, separators=(",", ":"),
                                                                             sort_keys=True), rid))
    con.commit()
    con.close()
    with open_ledger(path) as led:
        report = unseal_rule(led, d[:12])
        stored = list(led.stored_runs())
    # a15b/a15c: today the edited runs are read, the estimate becomes 1.0 and the seal HOLDS.
    assert len(report.edited) == 4 and report.runs == 4 and not report.holds
    assert report.decision.estimate == pytest.approx(1.0)      # only the untouched passing runs remain
    assert any("edited after ingest, refused" in p for p in report.problems())
    assert sum(not s.intact for s in stored) == 4


def test_runs_executed_before_the_seal_do_not_confirm_it(path):
    # a23: executed in 2020 (event times and identity date), ingested after a 2026 seal.
    runs = [Run(scenario=f"s{t % 4}", trial=t, identity=Identity(model="m", date="2020-01-01"),
                events=[UserMessage(text="hi", t=1577836800.0)], outcome=Outcome(passed=True)) for t in range(8)]
    dated = [Run(scenario=f"d{t}", trial=t, identity=Identity(model="m", date="2020-01-01"),
                 outcome=Outcome(passed=True)) for t in range(3)]
    fresh = [Run(scenario=f"f{t}", trial=t, identity=Identity(model="m", date="2999-01-01"),
                 events=[UserMessage(text="hi", t=0.5)], outcome=Outcome(passed=True)) for t in range(2)]
    with open_ledger(path) as led:
        d = seal_rule(led, RULE)
        led.ingest(runs + dated + fresh)
        report = unseal_rule(led, d[:12])
    assert len(report.early) == 11 and not report.holds
    # t = 0.5 is an offset, not a date: those runs fall back on their identity date.
    assert report.basis == {"event times": 8, "identity date": 5, "ingest": 0}
    assert "8 by event times, 5 by identity date" in report.timing()


def test_seal_time_drill_through_the_command_line(tmp_path):
    # drills/repro_defects.sh seal-time: runs ingested, then sealed, then documents.recorded_at moved back.
    db = str(tmp_path / "l.db")
    (tmp_path / "rule.yaml").write_text("scope: {identity: {model: m}}\n"
                                        "decision: {statistic: mean, unit: scenario, bound: estimate, above: 0.1}\n")
    lines = [json.dumps({"format_version": 1, "scenario": f"s{i}", "identity": {"model": "m"},
                         "outcome": {"passed": True}}) for i in range(6)]
    (tmp_path / "runs.jsonl").write_text("\n".join(lines) + "\n")

    from click.testing import CliRunner

    from fluke.cli import group

    def fluke(*args):
        return CliRunner().invoke(group, ["--ledger", db, *args])

    assert fluke("ingest", str(tmp_path / "runs.jsonl")).exit_code == 0
    digest = json.loads(fluke("--json", "seal", str(tmp_path / "rule.yaml")).output)["digest"]
    first = fluke("unseal", digest[:12])
    _sql(db, "UPDATE documents SET recorded_at='2000-01-01T00:00:00.000000Z'")
    second = fluke("unseal", digest[:12])
    assert first.exit_code == 1 and second.exit_code == 1, second.output
    assert "HOLDS" not in second.output.replace("DOES NOT HOLD", "")
