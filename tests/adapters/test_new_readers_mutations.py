"""The new readers raise only fluke's own errors on mutated real inputs (a bounded,
seeded mutation run per reader: keys dropped, values replaced by other JSON types, list
items removed; and random byte damage to a .eval archive). A reader that accepts a mutated
file is fine; an exception that is not a FlukeError fails the test."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from fluke.adapters import read_file
from fluke.errors import FlukeError

FIXTURES = Path(__file__).parent / "fixtures"
VALUES = [None, True, 0, -1, 2 ** 63, 1.5, "", "x", "attachment://00", [], {}, [1], {"a": 1}, "\x00"]


def _nodes(doc, path=()):
    yield path
    children = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in children:
        yield from _nodes(value, path + (key,))


def _mutate(doc, rng):
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 4)):
        path = rng.choice(list(_nodes(doc)))
        if not path:
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if rng.random() < 0.35:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))
    return doc


def _terminal_bench():
    trial = {"trial_name": "a.1-of-2.run", "task_id": "a", "is_resolved": True, "failure_mode": "unset",
             "total_input_tokens": 5, "agent_started_at": "2025-09-05T23:34:12+00:00",
             "agent_ended_at": "2025-09-05T23:34:13+00:00"}
    harbor = {"task_name": "h", "trial_name": "h__1", "agent_info": {"name": "cc", "model_info": {"name": "m"}},
              "agent_result": {"n_input_tokens": 5}, "verifier_result": {"rewards": {"reward": 1.0}},
              "exception_info": {"exception_type": "E", "exception_message": "m"}}
    return {"results": [trial, dict(trial, trial_name="a.2-of-2.run", is_resolved=None)], "trial_results": [harbor]}


CASES = [
    ("inspect", "inspect_ai/tiny_tools_epochs3.json", 60),
    ("otel-genai", "otel/genai_semconv.otlp.json", 300),
    ("openinference", "otel/openinference.otlp.json", 300),
    ("openai-agents", "openai_agents/traces_and_spans.json", 300),
    ("openai-agents-items", "openai_agents/run1_parallel_and_error.run_state.json", 300),
    ("openai-agents-items", "openai_agents/run2_agent_as_tool_and_handoff.new_items.json", 300),
]


def _check(path, fmt):
    try:
        list(read_file(path, format=fmt))
    except FlukeError:
        pass


@pytest.mark.parametrize("fmt,name,count", CASES)
def test_mutated_samples(samples, tmp_path, fmt, name, count):
    base = json.loads((samples / name).read_text())
    rng = random.Random(15)
    path = tmp_path / "case.json"
    for _ in range(count):
        path.write_text(json.dumps(_mutate(base, rng)))
        _check(path, fmt)


def test_mutated_crewai_log_and_terminal_bench(tmp_path):
    events = [json.loads(line) for line in (FIXTURES / "crewai_react_events.jsonl").read_text().splitlines()]
    rng = random.Random(15)
    path = tmp_path / "case.jsonl"
    for _ in range(300):
        mutated = _mutate(events, rng)
        path.write_text("\n".join(json.dumps(e) for e in mutated) + "\n" if isinstance(mutated, list) else "[]")
        _check(path, "crewai")
    path = tmp_path / "results.json"
    for _ in range(300):
        path.write_text(json.dumps(_mutate(_terminal_bench(), rng)))
        _check(path, "terminal-bench")


def test_damaged_eval_archive(samples, tmp_path):
    data = (samples / "inspect_ai" / "tiny_tools_epochs3.eval").read_bytes()
    rng = random.Random(15)
    path = tmp_path / "case.eval"
    for _ in range(150):
        damaged = bytearray(data[: rng.randrange(4, len(data))] if rng.random() < 0.3 else data)
        for _ in range(rng.randint(0, 20)):
            damaged[rng.randrange(4, len(damaged))] = rng.randrange(256)
        path.write_bytes(bytes(damaged))
        _check(path, "inspect")
