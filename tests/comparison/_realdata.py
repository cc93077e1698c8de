"""Minimal readers of the shared τ-bench / τ²-bench files for tests (until the adapters land).

They map each file to fluke runs the simple way: one event per message text and one ToolCall per
tool call; a run passes when its reward is 1. The tests only need the same runs on both sides of
an oracle comparison, and outcome counts checked against figures computed by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluke.record import AgentMessage, Identity, Outcome, Run, ToolCall, UserMessage

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
TAU2_RESULTS = DATA / "tau2-bench" / "src" / "experiments" / "model_training" / "results"
TAU1_AIRLINE = DATA / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
FINE_TUNED = "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm"
TAU2_FILES = {
    ("gpt-4.1", "airline"): "gpt-4.1_airline_default_gpt-4.1_1trials.json",
    ("gpt-4.1", "retail"): "gpt-4.1_retail_defautl_gpt-4.1_1trials.json",
    ("gpt-4.1", "telecom"): "gpt-4.1_telecom_default_gpt-4.1_1trials.json",
    (FINE_TUNED, "airline"): f"{FINE_TUNED}_airline_default_gpt-4.1_1trials.json",
    (FINE_TUNED, "retail"): f"{FINE_TUNED}_retail_default_gpt-4.1_1trials.json",
    (FINE_TUNED, "telecom"): f"{FINE_TUNED}_telecom_default_gpt-4.1_1trials.json",
}


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real data not found at {path} (the shared data folder is absent)")
    return path


def _events(messages, *, content="content", calls="tool_calls"):
    events = []
    for m in messages:
        role = m.get("role")
        text = m.get(content)
        if role == "user" and text:
            events.append(UserMessage(text=str(text)))
        elif role == "assistant" and text:
            events.append(AgentMessage(text=str(text)))
        for call in m.get(calls) or []:
            name = call.get("name") or call.get("function", {}).get("name")
            events.append(ToolCall(tool=name, call_id=call.get("id"),
                                   requestor="user" if call.get("requestor") == "user" else "agent"))
    return events


def tau2_runs(model: str, domain: str) -> list[Run]:
    """The τ²-bench runs of ``model`` on ``domain`` as fluke runs (scenario = domain/task)."""
    path = need(TAU2_RESULTS / TAU2_FILES[(model, domain)])
    doc = json.loads(path.read_text())
    identity = Identity(model=model, harness="tau2-bench")
    runs = []
    for sim in doc["simulations"]:
        reward = (sim.get("reward_info") or {}).get("reward") or 0.0
        runs.append(Run(scenario=f"{domain}/{sim['task_id']}", trial=sim.get("trial") or 0,
                        identity=identity, events=_events(sim["messages"]),
                        outcome=Outcome(passed=reward >= 1 - 1e-9, reward=reward)))
    return runs


def tau1_airline_runs() -> list[Run]:
    """τ-bench gpt-4o airline: 50 tasks × 4 trials."""
    doc = json.loads(need(TAU1_AIRLINE).read_text())
    identity = Identity(model="gpt-4o", harness="tau-bench")
    return [Run(scenario=f"airline/{r['task_id']}", trial=r["trial"], identity=identity,
                events=_events(r["traj"]), outcome=Outcome(passed=r["reward"] >= 1 - 1e-9, reward=r["reward"]))
            for r in doc]
