"""The CrewAI reader on a real event log: tests/adapters/fixtures/crewai_react_events.jsonl,
written by make_crewai_events.py from a crewai 1.15.30 crew on a scripted LLM (CrewAI is too
heavy to be a test dependency). Expected values are read from the log with plain json."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from fluke.adapters import detect_format, read_file

LOG = Path(__file__).parent / "fixtures" / "crewai_react_events.jsonl"


def _events():
    return [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]


def test_started_and_ended_events_pair_by_id():
    assert detect_format(LOG) == "crewai"
    [run] = read_file(LOG)
    raw = _events()
    starts = [e for e in raw if e["type"] == "tool_usage_started"]
    ends = {e["started_event_id"]: e for e in raw if e["type"] in ("tool_usage_finished", "tool_usage_error")}
    assert len(run.tool_calls) == len(starts) == 4   # the raising tool was run three times
    for call, start in zip(run.tool_calls, starts, strict=True):
        end = ends[start["event_id"]]
        assert call.tool == start["tool_name"] and call.args == end["tool_args"]
        assert call.ok == (end["type"] == "tool_usage_finished")
        assert call.agent == start["agent_role"] == "Researcher"
    weather, *lookups = run.tool_calls
    assert weather.result == "Sunny, 21C in Paris"
    # an error with no finished event: a failed call with the error text and no result
    assert all(c.result is None and "lookup backend unavailable" in c.error for c in lookups)
    assert not any(e["type"] == "tool_usage_finished" and e["tool_name"] == "flaky_lookup" for e in raw)


def test_times_are_utc_stamps_not_the_naive_local_ones():
    [run] = read_file(LOG)
    raw = _events()
    start = next(e for e in raw if e["type"] == "tool_usage_started")
    stamps = {e["timestamp"][-6:] == "+00:00" for e in raw} | {e["timestamp"].endswith("Z") for e in raw}
    assert stamps == {True, False}                     # the log mixes "Z" and "+00:00"
    expected = dt.datetime.fromisoformat(start["timestamp"].replace("Z", "+00:00")).timestamp()
    assert run.tool_calls[0].t_start == expected
    assert all(c.t_end >= c.t_start for c in run.tool_calls)


def test_messages_and_identity():
    [run] = read_file(LOG)
    assert run.events[0].kind == "user" and run.events[0].text == "Weather in Paris and hotels?"
    assert run.events[-1].text == "Paris is sunny, 21C; hotel lookup failed."
    assert run.identity.harness == {"crew": "crew", "agents": ["Researcher"]}
    assert run.outcome.passed is None


def test_file_order_does_not_matter(tmp_path):
    lines = LOG.read_text().splitlines()
    shuffled = tmp_path / "shuffled.jsonl"
    # listeners may write out of order; the kickoff start still opens the run
    shuffled.write_text("\n".join([lines[0], *reversed(lines[1:])]) + "\n")
    [a] = read_file(LOG)
    [b] = read_file(shuffled, identity={"scenario": "crewai_react_events"})
    assert a.events == b.events
