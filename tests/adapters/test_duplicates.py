"""A run dropped as a duplicate is reported with its reason, not only counted: a repeat of an
earlier run of the same file (named, with where both are), or a run stored before."""

from __future__ import annotations

import json

import orjson

from fluke.analysis import ingest
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run


def test_repeats_in_a_file_are_named_and_runs_stored_before_are_counted(tmp_path):
    runs = [Run(scenario=f"s{i}", identity=Identity(model="m"), outcome=Outcome(passed=i % 2 == 0)) for i in range(6)]
    lines = [orjson.dumps(r.model_dump(mode="json")) for r in runs]
    lines.insert(4, lines[1])   # line 5 repeats line 2
    first = tmp_path / "a.jsonl"
    first.write_bytes(b"\n".join(lines) + b"\n")
    ledger = open_ledger(str(tmp_path / "d.db"))
    [row] = ingest(ledger, [str(first)]).files
    assert (row["added"], row["skipped"]) == (6, 1)
    assert row["duplicates"] == {"in_file": 1, "before": 0, "examples": [
        {"scenario": "s1", "trial": 0, "where": "position 5", "first": "position 2"}]}

    again = tmp_path / "b.jsonl"   # three of the same runs, and a new one
    again.write_bytes(b"\n".join(lines[:3] + [orjson.dumps(Run(scenario="new").model_dump(mode="json"))]) + b"\n")
    report = ingest(ledger, [str(again)])
    [row] = report.files
    assert (row["added"], row["skipped"]) == (1, 3)
    assert row["duplicates"] == {"in_file": 0, "before": 3, "examples": []}
    assert "3 were stored before this ingest" in report.render()


def test_a_reader_building_runs_reports_its_repeats_too(tmp_path):
    trial = {"task_id": "hello", "trial_name": "hello.1-of-1.2025-01-01__00-00-00", "is_resolved": None,
             "failure_mode": "unknown_agent_error"}
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"id": "r", "results": [trial, dict(trial, task_id="bye", trial_name="bye.1-of-1.x"),
                                                       trial]}))
    report = ingest(open_ledger(str(tmp_path / "t.db")), [str(path)])
    [row] = report.files
    assert (row["added"], row["skipped"]) == (2, 1)
    [example] = row["duplicates"]["examples"]
    assert example["scenario"] == "hello" and example["where"] == "position hello.1-of-1.2025-01-01__00-00-00"
    assert "1 repeat a run earlier in this file" in report.render()
