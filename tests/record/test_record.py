"""The run record: identity versions, content hashes, the tagged union, format versions."""

import hashlib
import json

import pytest
from pydantic import ValidationError

from fluke.record import (FORMAT_VERSION, AgentMessage, Identity, Outcome, Run, ToolCall, UserMessage,
                          run_schema)


def _run(**changes):
    base = dict(scenario="refund/1", trial=2, identity=Identity(model="m", world="w"),
                events=[UserMessage(text="refund W1"), ToolCall(tool="refund", args={"id": "W1"}, ok=True)],
                outcome=Outcome(passed=True, reward=1.0, label="complete"))
    base.update(changes)
    return Run(**base)


def test_version_hash_leaves_the_date_out_and_is_sha256_of_sorted_components():
    a = Identity(model="gpt-4o", tools={"b": 1, "a": 2}, date="2024-01-01")
    b = Identity(tools={"a": 2, "b": 1}, model="gpt-4o", date="2026-11-30")
    assert a.version == b.version
    expected = hashlib.sha256(json.dumps(
        {"grader": None, "harness": None, "model": "gpt-4o", "policy": None, "tools": {"a": 2, "b": 1},
         "world": None}, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert a.version == expected
    assert Identity(model="gpt-4o", harness="h2").version != a.version


def test_content_hash_ignores_source_but_not_content():
    a = _run(source={"adapter": "x", "file": "a.json", "position": 1})
    b = _run(source={"adapter": "y", "file": "b.json", "position": 9})
    assert a.hash == b.hash
    assert _run(trial=3).hash != a.hash
    body = a.model_dump(mode="json", exclude={"source"})
    assert a.hash == hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_events_are_a_tagged_union_that_round_trips():
    run = _run(events=[UserMessage(text="hi"), AgentMessage(text="hello", agent="triage"),
                       ToolCall(tool="t", call_id="c1", ok=None, requestor="user")])
    back = Run.model_validate_json(run.model_dump_json())
    assert [type(e).__name__ for e in back.events] == ["UserMessage", "AgentMessage", "ToolCall"]
    assert back.events[2].ok is None and back.events[2].requestor == "user"
    assert back.hash == run.hash


def test_unknown_event_kind_and_unknown_field_are_refused():
    with pytest.raises(ValidationError, match="kind"):
        Run.model_validate({"scenario": "s", "events": [{"kind": "thought", "text": "x"}]})
    with pytest.raises(ValidationError, match="scenaro"):
        Run.model_validate({"scenario": "s", "scenaro": "typo"})


def test_newer_format_version_is_refused_with_an_upgrade_hint():
    with pytest.raises(ValidationError, match="pip install -U fluke"):
        Run.model_validate({"scenario": "s", "format_version": FORMAT_VERSION + 1})


def test_unit_defaults_to_the_scenario_and_condition_key_is_sorted():
    run = _run(condition={"z": 1, "a": "ambiguous"})
    assert run.sampling_unit == "refund/1"
    assert run.condition_key() == "a=ambiguous,z=1"
    assert _run(unit="user-7").sampling_unit == "user-7"


def test_schema_describes_the_run_and_its_events():
    schema = run_schema()
    assert schema["required"] == ["scenario"]
    assert {"ToolCall", "UserMessage", "AgentMessage", "Identity", "Outcome"} <= set(schema["$defs"])
    assert schema["$defs"]["Outcome"]["properties"]["label"]["anyOf"][0]["enum"] == [
        "complete", "should_ask", "fail", "error"]
