"""A Terminal-Bench submission of several runs: one ``results.json`` per run folder.

The files are written from Terminal-Bench's published result models (``TrialResults`` inside
``BenchmarkResults``; run folders named by the harness's ``YYYY-MM-DD__HH-MM-SS`` run id), as
in tests/adapters/test_terminal_bench.py: the harness does not install here (Python 3.12+).
Each run attempts each task once (trial names ``<task>.1-of-1.<run id>``), so before the
reader numbered trials across the runs every run read as trial 0 and outcome-less trials of
one task in different runs had the same content and were dropped as duplicates."""

from __future__ import annotations

import json
import random

import pytest

from fluke.adapters import read_file
from fluke.analysis import fixcheck, ingest, passk
from fluke.ledger import open_ledger

TASKS, RUNS = 80, 5


def _submission(root, folder="20250601_ante_claude-4-sonnet", seed=3):
    """Five run folders of one agent on 80 tasks; tasks 0 and 1 never get an outcome."""
    rng = random.Random(seed)
    sub = root / "terminal-bench-core@0.1.1" / folder
    outcomes = {}
    for i in reversed(range(RUNS)):   # written newest first: the order read is the run ids', not the disk's
        run_id = f"2025-06-0{i + 1}__10-00-0{i}"
        (sub / run_id).mkdir(parents=True)
        trials = []
        for j in range(TASKS):
            resolved = None if j < 2 else rng.random() < 0.4
            outcomes[(f"task-{j}", i)] = resolved
            trials.append({"id": f"{j}-{i}", "trial_name": f"task-{j}.1-of-1.{run_id}", "task_id": f"task-{j}",
                           "instruction": "do it", "is_resolved": resolved,
                           "failure_mode": "unknown_agent_error" if resolved is None else "unset",
                           "parser_results": None, "recording_path": None,
                           "total_input_tokens": None, "total_output_tokens": None})
        (sub / run_id / "results.json").write_text(json.dumps({"id": run_id, "results": trials,
                                                                "accuracy": 0.4, "pass_at_k": {}}))
    return sub, outcomes


def test_five_runs_store_400_runs_as_trials_0_to_4(tmp_path):
    sub, outcomes = _submission(tmp_path)
    files = sorted(str(p) for p in sub.glob("*/results.json"))
    ledger = open_ledger(str(tmp_path / "tb.db"))
    report = ingest(ledger, files)
    assert [(r["added"], r["skipped"]) for r in report.files] == [(TASKS, 0)] * RUNS
    [row] = ledger.versions()
    assert row.identity.harness == "ante" and row.identity.model == "claude-4-sonnet"
    trials = {}
    for run in ledger.runs():
        trials.setdefault(run.scenario, []).append(run.trial)
        assert run.outcome.passed == outcomes[(run.scenario, run.trial)]
    assert len(trials) == TASKS and all(sorted(t) == [0, 1, 2, 3, 4] for t in trials.values())

    # pass@5 is defined, and equals the share of tasks with a pass in any run (unknown = fail)
    [version] = passk(ledger, unknown="fail").payload()["versions"]
    at5 = next(r for r in version["rows"] if r["k"] == 5)
    expected = sum(any(outcomes[(f"task-{j}", i)] is True for i in range(RUNS)) for j in range(TASKS)) / TASKS
    assert at5["reason"] is None and at5["pass_at_k"] == pytest.approx(expected)
    assert version["unknowns"] == 2 * RUNS

    # fixcheck M@0 M@1-4 answers: the failing inputs of run 0, re-run in runs 1-4
    result = fixcheck(ledger, "model=claude-4-sonnet@0", "model=claude-4-sonnet@1-4").payload()
    failing = [j for j in range(TASKS) if outcomes[(f"task-{j}", 0)] is not True]
    rule = result["candidate_rule"]
    assert result["candidate"]["trials"] == [1, 2, 3, 4] and rule["rows"] == len(failing)
    fixed_within = sum(any(outcomes[(f"task-{j}", i)] is True for i in (1, 2, 3)) for j in failing)
    assert rule["fixed_within"]["estimate"] == pytest.approx(fixed_within / len(failing))


def test_one_run_read_alone_keeps_its_place_in_the_submission(tmp_path):
    sub, _ = _submission(tmp_path)
    third = sorted(sub.glob("*/results.json"))[2]
    assert {r.trial for r in read_file(third)} == {2}


def test_a_submission_folder_outside_the_leaderboard_layout_names_the_harness(tmp_path):
    sub, _ = _submission(tmp_path, folder="my-agent-runs")
    runs = [r for p in sorted(sub.glob("*/results.json")) for r in read_file(p)]
    assert {r.identity.harness for r in runs} == {"my-agent-runs"}
    assert len({r.hash for r in runs}) == TASKS * RUNS


def test_two_agents_on_one_model_print_with_their_harness(tmp_path):
    from fluke.analysis import leaderboard

    files = []
    for folder, seed in (("20250601_ante_claude-4-sonnet", 3), ("20250602_terminus_claude-4-sonnet", 4)):
        sub, _ = _submission(tmp_path, folder=folder, seed=seed)
        files += sorted(str(p) for p in sub.glob("*/results.json"))
    ledger = open_ledger(str(tmp_path / "two.db"))
    ingest(ledger, files)
    labels = {v["label"] for v in leaderboard(ledger, replicates=100).payload()["versions"]}
    assert labels == {"claude-4-sonnet (ante)", "claude-4-sonnet (terminus)"}


def test_a_trials_own_results_file_is_numbered_by_its_run(tmp_path):
    sub, outcomes = _submission(tmp_path)
    for run in sorted(p.parent for p in sub.glob("*/results.json")):
        for trial in json.loads((run / "results.json").read_text())["results"][:3]:
            folder = run / trial["task_id"] / trial["trial_name"]
            folder.mkdir(parents=True)
            (folder / "results.json").write_text(json.dumps(trial))
    got = sorted((r.scenario, r.trial, r.outcome.passed) for p in sub.glob("*/*/*/results.json") for r in read_file(p))
    assert got == sorted((f"task-{j}", i, outcomes[(f"task-{j}", i)]) for j in range(3) for i in range(RUNS))
