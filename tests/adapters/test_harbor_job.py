"""A Harbor job folder: ``result.json`` (``JobResult``: ``n_total_trials``, ``stats``) beside one
folder per trial holding its ``result.json`` (``TrialResult``).

Harbor needs Python 3.12 or later and does not install here, so the folder is written from
its documented result models (harbor 0.26: ``harbor.models.job.result.JobResult`` /
``JobStats`` / ``AgentDatasetStats``, ``harbor.models.trial.result.TrialResult`` with its
computed ``reward_valid`` and ``ExceptionInfo.policy``), and the job's stats are counted here
the way ``JobStats.increment`` counts them: every trial result is completed, one with any
exception is errored (and cancelled for ``CancelledError``), one with a valid reward counts in
its eval's ``n_trials``. Retried attempts leave no folder (Harbor replaces them); the job
counts them in ``n_retries``."""

from __future__ import annotations

import json

import pytest

from fluke.adapters import read_file
from fluke.analysis import ingest
from fluke.ledger import open_ledger

#: (exception type, should_retry, should_grade, has_valid_reward) of Harbor's error policy table
POLICIES = {"AgentTimeoutError": (False, True, True), "ApiRateLimitError": (True, True, False),
            "CancelledError": (False, False, False)}
#: task, start minute, reward (None: no verifier result), exception type (None: none)
TRIALS = [("fix-git", 3, 1.0, None), ("fix-git", 1, 0.0, None), ("fix-git", 2, 0.0, "AgentTimeoutError"),
          ("chess", 0, 1.0, None), ("chess", 4, 1.0, "ApiRateLimitError"), ("chess", 5, None, "CancelledError"),
          ("hello", 6, None, "AgentTimeoutError")]
AGENT = {"name": "terminus-2", "version": "2.0.0", "model_info": {"name": "gpt-5", "provider": "openai"}}


def _trial(i, task, minute, reward, exc):
    info = None
    if exc:
        retry, grade, valid = POLICIES[exc]
        info = {"exception_type": exc, "exception_message": f"{exc} happened", "exception_traceback": "Traceback ...",
                "occurred_at": f"2026-02-01T10:{minute:02d}:30Z",
                "policy": {"should_retry": retry, "should_grade": grade, "has_valid_reward": valid}}
    verifier = None if reward is None else {"rewards": {"reward": reward}}
    reward_valid = verifier is not None and (info is None or info["policy"]["has_valid_reward"])
    name = f"{task}__{'abcdefg'[i]}Xy{i}Z9"
    return name, {"schema_version": 1, "id": f"00000000-0000-0000-0000-00000000000{i}", "task_name": task,
                  "trial_name": name, "trial_uri": f"file:///jobs/j/{name}", "source": "terminal-bench",
                  "task_id": {"path": f"tasks/{task}"}, "task_checksum": "c" * 64, "config": {"agent": {}},
                  "agent_info": AGENT, "agent_result": {"n_input_tokens": 100, "n_output_tokens": 10, "cost_usd": 0.01},
                  "verifier_result": verifier, "exception_info": info, "reward_valid": reward_valid,
                  "started_at": f"2026-02-01T10:{minute:02d}:00Z", "finished_at": f"2026-02-01T10:{minute:02d}:50Z"}


def _job(root, *, claim_more=0, retries=2):
    job = root / "2026-02-01__10-00-00"
    trials = [_trial(i, *t) for i, t in enumerate(TRIALS)]
    for name, trial in trials:
        (job / name).mkdir(parents=True)
        (job / name / "result.json").write_text(json.dumps(trial))
    # the job's stats, counted as JobStats.increment counts them
    completed = len(trials) + claim_more
    errored = sum(t["exception_info"] is not None for _, t in trials)
    cancelled = sum((t["exception_info"] or {}).get("exception_type") == "CancelledError" for _, t in trials)
    rewarded = sum(t["reward_valid"] for _, t in trials)
    stats = {"n_completed_trials": completed, "n_errored_trials": errored, "n_running_trials": 0,
             "n_pending_trials": 0, "n_cancelled_trials": cancelled, "n_retries": retries,
             "evals": {"terminus-2__gpt-5__terminal-bench": {"n_trials": rewarded, "n_errors": errored}}}
    (job / "result.json").write_text(json.dumps({"schema_version": 1, "id": "11111111-2222-3333-4444-555555555555",
                                                 "started_at": "2026-02-01T10:00:00Z", "n_total_trials": completed,
                                                 "stats": stats}))
    (job / "config.json").write_text(json.dumps({"job_name": job.name, "n_attempts": 3}))
    return job, stats


def test_the_counts_fluke_reads_equal_the_jobs_own(tmp_path):
    job, stats = _job(tmp_path)
    ledger = open_ledger(str(tmp_path / "h.db"))
    report = ingest(ledger, [str(job / "result.json")])
    [row] = report.files
    assert row["added"] == stats["n_completed_trials"] and row["skipped"] == 0
    [note] = row["notes"]
    assert "the counts agree" in note and "n_retries 2" in note and "2 retried attempts" in note
    assert f"read {stats['n_completed_trials']} trials, {stats['n_errored_trials']} with an exception " \
           f"({stats['n_cancelled_trials']} cancelled)" in note
    assert note in report.render()

    runs = list(ledger.runs())
    assert sum(r.error is not None for r in runs) == stats["n_errored_trials"]
    valid = stats["evals"]["terminus-2__gpt-5__terminal-bench"]["n_trials"]
    assert sum(r.outcome.passed is not None for r in runs) == valid
    assert sum(r.outcome.passed is None for r in runs) == len(runs) - valid
    # errored, cancelled and invalid-reward trials are unknown; a timed-out agent graded as usual is not
    by = {(r.scenario, r.trial): r for r in runs}
    assert by[("chess", 1)].outcome.passed is None and by[("chess", 1)].error.startswith("ApiRateLimitError")
    assert by[("chess", 2)].outcome.passed is None and by[("chess", 2)].error.startswith("CancelledError")
    assert by[("fix-git", 1)].outcome.passed is False and by[("fix-git", 1)].error.startswith("AgentTimeoutError")
    # a task's trials are numbered in the order they started, not by their random names
    assert [by[("fix-git", t)].outcome.reward for t in range(3)] == [0.0, 0.0, 1.0]


def test_a_job_whose_counts_differ_says_so(tmp_path):
    job, _ = _job(tmp_path, claim_more=1, retries=0)
    notes: list[str] = []
    runs = list(read_file(job / "result.json", notes=notes))
    assert len(runs) == len(TRIALS)
    assert notes and "the counts DIFFER (trials: job 8, read 7)" in notes[0]


def test_a_single_trial_file_has_no_job_note(tmp_path):
    job, _ = _job(tmp_path)
    notes: list[str] = []
    [run] = read_file(next(job.glob("hello__*")) / "result.json", notes=notes)
    assert notes == [] and run.outcome.passed is None and run.identity.model == "openai/gpt-5"
    assert run.cost == pytest.approx({"input_tokens": 100, "output_tokens": 10, "usd": 0.01})
