"""The real inputs the reader fuzz tests mutate (``test_fuzz.py``): small cuts of the samples
in ../shared/formats/samples, of the τ-bench and τ²-bench runs in ../shared/data, and of the
CrewAI log in the fixtures, each wrapped in a :class:`Mutator` (see ``_fuzz.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..conftest import DATA, FORMATS
from ._fuzz import EvalMutator, Mutator

SAMPLES = FORMATS / "samples"
FIXTURES = Path(__file__).parent / "fixtures"
TAU_AIRLINE = DATA / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
TAU2 = DATA / "tau2-bench" / "src" / "experiments" / "model_training" / "results"
EVAL_SAMPLE = SAMPLES / "inspect_ai" / "tiny_tools_epochs3.eval"


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _trim_traj(record: dict, keep: int) -> dict:
    return dict(record, traj=record["traj"][:keep])


def _tau2() -> list[Any]:
    out = []
    for name in ("gpt-4.1_airline_default_gpt-4.1_1trials.json", "gpt-4.1_telecom_default_gpt-4.1_1trials.json"):
        doc = _load(TAU2 / name)
        sims = [dict(s, messages=s["messages"][:10]) for s in doc["simulations"][:2]]
        info = dict(doc["info"])
        env = dict(info.get("environment_info") or {})
        env["policy"] = (env.get("policy") or "")[:300]
        env["tool_defs"] = (env.get("tool_defs") or [])[:2] if isinstance(env.get("tool_defs"), list) \
            else env.get("tool_defs")
        info["environment_info"] = env
        out.append({"timestamp": doc["timestamp"], "info": info, "tasks": [], "simulations": sims})
    return out


def _inspect_log() -> dict:
    """The real JSON log cut to two samples with their tool and score events."""
    doc = _load(SAMPLES / "inspect_ai" / "tiny_tools_epochs3.json")
    keep = ("tool", "score", "model")
    samples = [dict(s, events=[e for e in s["events"] if e.get("event") in keep][:6]) for s in doc["samples"][:2]]
    return {k: doc[k] for k in ("version", "status", "eval", "results", "reductions") if k in doc} | {
        "samples": samples}


def _terminal_bench() -> list[Any]:
    """Terminal-Bench and Harbor cannot be installed here (they need Python 3.12 or later):
    these follow the files those harnesses write (field for field, as docs/adapters.md lists)."""
    trial = {"id": "7f0e", "trial_name": "hello-world.1-of-2.2025-09-05__23-30-00", "task_id": "hello-world",
             "instruction": "Create hello.txt", "is_resolved": True, "failure_mode": "unset",
             "parser_results": {"test_hello_file_exists": "passed"}, "total_input_tokens": 5120,
             "total_output_tokens": 311, "trial_started_at": "2025-09-05T23:34:10.1+00:00",
             "trial_ended_at": "2025-09-05T23:35:01.9+00:00", "agent_started_at": "2025-09-05T23:34:12+00:00",
             "agent_ended_at": "2025-09-05T23:34:58+00:00"}
    run = {"id": "2025-09-05__23-30-00", "results": [
        trial, dict(trial, trial_name="hello-world.2-of-2.2025-09-05__23-30-00", is_resolved=None,
                    failure_mode="agent_timeout", parser_results=None)],
        "pass_at_k": {"2": 0.5}, "n_resolved": 1, "n_unresolved": 1, "resolved_ids": ["hello-world"],
        "unresolved_ids": [], "accuracy": 0.5}
    harbor = {"id": "0c2f", "task_name": "fix-git", "trial_name": "fix-git__Ab3xY", "trial_uri": "file:///j/fix-git",
              "agent_info": {"name": "claude-code", "version": "1.0.3", "model_info": {"name": "sonnet-4",
                                                                                   "provider": "anthropic"}},
              "agent_result": {"n_input_tokens": 900, "n_output_tokens": 80, "cost_usd": 0.01},
              "verifier_result": {"rewards": {"reward": 1.0}}, "exception_info": None,
              "started_at": "2025-11-01T10:00:00Z", "finished_at": "2025-11-01T10:05:00Z",
              "agent_execution": {"started_at": "2025-11-01T10:00:05Z", "finished_at": "2025-11-01T10:04:00Z"}}
    failed = dict(harbor, trial_name="fix-git__Zz9", verifier_result=None,
                  exception_info={"exception_type": "AgentTimeoutError", "exception_message": "timed out"})
    cancelled = dict(harbor, trial_name="fix-git__Cc1", verifier_result=None, reward_valid=False,
                     exception_info={"exception_type": "CancelledError", "exception_message": "",
                                     "policy": {"should_retry": False, "should_grade": False,
                                                "has_valid_reward": False}})
    job = {"id": "job", "n_total_trials": 3, "trial_results": [harbor, failed, cancelled],
           "stats": {"n_completed_trials": 3, "n_errored_trials": 2, "n_cancelled_trials": 1, "n_retries": 1,
                     "evals": {"claude-code__sonnet-4__terminal-bench": {"n_trials": 1, "n_errors": 2}}}}
    return [run, trial, harbor, {"id": "job", "trial_results": [harbor, failed], "stats": {"n_trials": 2}}, job]


def _lm_eval() -> list[Any]:
    """lm-evaluation-harness logged samples (it cannot run here: no datasets, no model), field for
    field as lm_eval 0.4.13 writes them (tests/adapters/test_lm_eval.py)."""
    out = []
    for doc_id, filter_key, value in ((0, "strict-match", 1.0), (1, "strict-match", 0.0), (0, "flexible-extract", 1.0)):
        out.append({"doc_id": doc_id, "doc": {"question": f"q{doc_id}", "answer": "#### 4"}, "target": "4",
                    "arguments": {"gen_args_0": {"arg_0": f"Question: q{doc_id}\nAnswer:", "arg_1": {"until": ["Q"]}}},
                    "resps": [["The answer is 4."]], "filtered_resps": ["4"], "filter": filter_key,
                    "metrics": ["exact_match"], "doc_hash": "a" * 64, "prompt_hash": "b" * 64, "target_hash": "c" * 64,
                    "exact_match": value})
    return out


def _fluke_runs() -> list[Any]:
    from fluke.adapters import read_file

    runs = list(read_file(TAU2 / "gpt-4.1_telecom_default_gpt-4.1_1trials.json"))[:3]
    runs += list(read_file(SAMPLES / "otel" / "genai_semconv.otlp.json"))[:1]
    return [json.loads(r.model_copy(update={"events": r.events[:8]}).model_dump_json()) for r in runs]


def seeds(reader: str) -> list[Mutator] | EvalMutator:
    """The mutators of a reader's real inputs (small cuts of real files)."""
    if reader == "tau-bench":
        doc = _load(TAU_AIRLINE)
        return [Mutator([_trim_traj(doc[0], 12), _trim_traj(doc[1], 8)]), Mutator([_trim_traj(doc[5], 16)])]
    if reader == "tau2-bench":
        return [Mutator(d) for d in _tau2()]
    if reader == "langgraph":
        return [Mutator(_load(p)) for p in sorted((SAMPLES / "langgraph").glob("*.json")) if ".openai." not in p.name]
    if reader == "openai":
        return [Mutator(_load(p)) for p in sorted((SAMPLES / "langgraph").glob("*.openai.json"))
                + sorted((SAMPLES / "openai_agents").glob("*.to_input_list.json"))]
    if reader == "n8n":
        names = ["execution_2_success.json", "execution_1_error.json", "cli_execute_rawOutput_IRun.json",
                 "execution_3_success.db_flatted.txt"]
        return [Mutator(_load(SAMPLES / "n8n" / n)) for n in names]
    if reader == "fluke":
        runs = _fluke_runs()
        return [Mutator(runs[:3], lines=True), Mutator(runs[3:], lines=True)]
    if reader == "inspect":
        return [Mutator(_inspect_log())]
    if reader == "otel-genai":
        return [Mutator(_load(SAMPLES / "otel" / "genai_semconv.otlp.json")),
                Mutator(_lines(SAMPLES / "otel" / "genai_semconv.sdk_to_json.jsonl"), lines=True)]
    if reader == "openinference":
        return [Mutator(_load(SAMPLES / "otel" / "openinference.otlp.json"))]
    if reader == "openai-agents":
        return [Mutator(_load(SAMPLES / "openai_agents" / "traces_and_spans.json"))]
    if reader == "openai-agents-items":
        return [Mutator(_load(SAMPLES / "openai_agents" / n)) for n in (
            "run1_parallel_and_error.run_state.json", "run1_parallel_and_error.new_items.json",
            "run2_agent_as_tool_and_handoff.new_items.json")]
    if reader == "terminal-bench":
        return [Mutator(d) for d in _terminal_bench()]
    if reader == "crewai":
        return [Mutator(_lines(FIXTURES / "crewai_react_events.jsonl"), lines=True)]
    if reader == "lm-eval":
        return [Mutator(_lm_eval(), lines=True)]
    raise KeyError(reader)


def stored_bodies() -> list[Any]:
    """Stored bodies of real runs (τ²-bench, OpenTelemetry, Inspect), for the ledger's read."""
    from fluke.adapters import read_file
    from fluke.record import content_json

    runs = list(read_file(TAU2 / "gpt-4.1_telecom_default_gpt-4.1_1trials.json"))[:2]
    runs += list(read_file(SAMPLES / "otel" / "genai_semconv.otlp.json"))[:1]
    runs += list(read_file(SAMPLES / "inspect_ai" / "tiny_tools_epochs3.json"))[:1]
    return [json.loads(content_json(r.model_copy(update={"events": r.events[:6]}))) for r in runs]
