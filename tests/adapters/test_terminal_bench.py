"""The Terminal-Bench / Harbor reader.

Neither harness installs here (both need Python 3.12 or newer; this machine has 3.11) and
../shared/formats/samples has no Terminal-Bench output, so these files are written in the
test from the harnesses' published result models (terminal_bench.harness.models
TrialResults / BenchmarkResults / RunMetadata, Harbor's TrialResult): not real output."""

from __future__ import annotations

import json

import pytest

from fluke.adapters import detect_format, read_file
from fluke.errors import InputError


def _trial(task, k, n, resolved, mode="unset"):
    return {
        "id": f"{task}-{k}",
        "trial_name": f"{task}.{k}-of-{n}.2025-09-05__16-26-44",
        "task_id": task,
        "instruction": "do it",
        "is_resolved": resolved,
        "failure_mode": mode,
        "parser_results": {"test_a": "passed" if resolved else "failed"},
        "recording_path": "x.cast",
        "total_input_tokens": 100 * k,
        "total_output_tokens": 10,
        "trial_started_at": "2025-09-05T23:33:51.941797+00:00",
        "trial_ended_at": "2025-09-05T23:34:33.629488+00:00",
        "agent_started_at": "2025-09-05T23:34:12.000000+00:00",
        "agent_ended_at": "2025-09-05T23:34:13.500000+00:00",
    }


def _run_dir(root, agent_folder, trials, meta=None):
    run = root / "terminal-bench-core@0.1.1" / agent_folder / "2025-09-05__16-26-44"
    run.mkdir(parents=True)
    (run / "results.json").write_text(json.dumps({"id": "r", "results": trials, "accuracy": 0.5}))
    if meta:
        (run / "run_metadata.json").write_text(json.dumps(meta))
    return run / "results.json"


def test_run_results_outcomes_trials_and_unknowns(tmp_path):
    trials = [_trial("hello", 1, 3, True), _trial("hello", 2, 3, False, "agent_timeout"),
              _trial("hello", 3, 3, None, "unknown_agent_error"), _trial("chess", 1, 3, False)]
    path = _run_dir(tmp_path, "20250926_ante_claude-4-sonnet", trials)
    assert detect_format(path) == "terminal-bench"
    runs = list(read_file(path))
    assert [(r.scenario, r.trial, r.outcome.passed, r.error) for r in runs] == [
        ("hello", 0, True, None), ("hello", 1, False, "agent_timeout"), ("hello", 2, None, "unknown_agent_error"),
        ("chess", 0, False, None)]
    assert runs[2].outcome.label is None and runs[0].latency == pytest.approx(1.5)
    assert runs[1].cost == {"input_tokens": 200, "output_tokens": 10}
    # the folder layout says who: <dataset>@<version>/<date>_<agent>_<model>
    ident = runs[0].identity
    assert (ident.harness, ident.model, ident.world) == ("ante", "claude-4-sonnet", "terminal-bench-core@0.1.1")


def test_metadata_and_supplied_identity_beat_the_folder_guess(tmp_path):
    meta = {"run_id": "r", "agent_name": "terminus", "model_name": "openai/gpt-5", "dataset_name": "tb",
            "dataset_version": "2.0"}
    path = _run_dir(tmp_path, "20250926_ante_claude-4-sonnet", [_trial("hello", 1, 1, True)], meta)
    [run] = read_file(path)
    assert (run.identity.harness, run.identity.model, run.identity.world) == ("terminus", "openai/gpt-5", "tb@2.0")
    bare = _run_dir(tmp_path / "b", "20250926_ante_claude-4-sonnet", [_trial("hello", 1, 1, True)])
    [run] = read_file(bare, identity={"model": "mine"})
    assert (run.identity.model, run.identity.harness) == ("mine", "ante")


def test_one_trial_file_and_harbor(tmp_path):
    single = tmp_path / "results.json"
    single.write_text(json.dumps(_trial("hello", 2, 5, True)))
    [run] = read_file(single)
    assert (run.scenario, run.trial, run.outcome.passed) == ("hello", 1, True)
    harbor = {
        "task_name": "hello",
        "trial_name": "hello__AbC12",
        "trial_uri": "file:///x",
        "task_id": {"path": "x"},
        "agent_info": {
            "name": "claude-code",
            "version": "1.0",
            "model_info": {"name": "opus", "provider": "anthropic"},
        },
        "agent_result": {"n_input_tokens": 5, "n_output_tokens": 3, "cost_usd": 0.25},
        "verifier_result": {"rewards": {"reward": 0.0}},
        "exception_info": None,
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:01:00Z",
    }
    job = tmp_path / "job"
    for i, (reward, exc) in enumerate([(1.0, None), (0.0, None), (None, {"exception_type": "AgentTimeoutError",
                                                                         "exception_message": "took too long"})]):
        trial = dict(
            harbor,
            trial_name=f"hello__{i}",
            verifier_result=None if reward is None else {"rewards": {"reward": reward}},
            exception_info=exc,
        )
        (job / f"hello__{i}").mkdir(parents=True)
        (job / f"hello__{i}" / "result.json").write_text(json.dumps(trial))
    (job / "result.json").write_text(json.dumps({"id": "j", "n_total_trials": 3, "stats": {"n_trials": 3}}))
    assert detect_format(job / "hello__0" / "result.json") == detect_format(job / "result.json") == "terminal-bench"
    runs = list(read_file(job / "result.json"))
    assert [(r.trial, r.outcome.passed, r.error) for r in runs] == [
        (0, True, None), (1, False, None), (2, None, "AgentTimeoutError: took too long")]
    assert runs[0].identity.model == "anthropic/opus" and runs[0].identity.harness == {
        "agent": "claude-code",
        "version": "1.0",
    }
    assert runs[0].cost == {"input_tokens": 5, "output_tokens": 3, "usd": 0.25}


def test_bad_is_resolved_names_the_record(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(
        json.dumps({"results": [_trial("a", 1, 1, True), dict(_trial("a", 1, 1, True), is_resolved="yes")]})
    )
    with pytest.raises(InputError, match=r"results.1: field is_resolved: expected true, false or null"):
        list(read_file(path))
