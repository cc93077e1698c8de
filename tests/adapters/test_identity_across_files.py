"""Files of different agents are not merged (issue 15, point 3): each reader takes the
model or agent from the file where the format says it, so the same real sample with only
that name changed is another version in the ledger; and where a file does not say it, the
ingest that finds most of its runs stored from another file says so and suggests
``--identity`` (tests/ledger/test_overlap.py holds the warning itself, on both backends)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.adapters import read_file

from ..ledger.test_overlap import _results

from .conftest import SAMPLES


#: (real file, the name it carries that goes into the identity)
CASES = [
    ("inspect_ai/tiny_tools_epochs3.json", "mockllm/model"),
    ("n8n/execution_2_success.json", "gpt-4o-mini"),
    ("otel/genai_semconv.otlp.json", "gpt-4o"),
    ("otel/genai_semconv.sdk_to_json.jsonl", "weather_agent"),
    ("otel/openinference.otlp.json", "gpt-4o"),
    ("langgraph/run5_chatopenai_parallel.messages_to_dict.json", "gpt-4o-mini"),
    ("openai_agents/traces_and_spans.json", "triage"),
    ("openai_agents/run2_agent_as_tool_and_handoff.new_items.json", "triage"),
    ("fixtures/crewai_react_events.jsonl", "Researcher"),
]


def _path(name: str):
    from pathlib import Path

    if name.startswith("fixtures/"):
        return Path(__file__).parent / name
    return SAMPLES / name


@pytest.mark.parametrize("name, carried", CASES, ids=[c[0] for c in CASES])
def test_the_same_runs_from_another_agent_are_another_version(samples, ledger, tmp_path, name, carried):
    original = _path(name)
    text = original.read_text()
    quoted = json.dumps(carried)
    assert quoted in text
    other = tmp_path / original.name
    other.write_text(text.replace(quoted, json.dumps(carried + "-other")))
    a, b = list(read_file(original)), list(read_file(other))
    assert len(a) == len(b) > 0
    carrying = [i for i, r in enumerate(a) if carried in json.dumps(r.identity.model_dump())]
    assert carrying, "the name is in the identity"
    for i in carrying:   # the same runs, but for the name: another version
        assert carried + "-other" in json.dumps(b[i].identity.model_dump())
        assert b[i].version != a[i].version and b[i].scenario == a[i].scenario
    first, second = ledger.ingest(a), ledger.ingest(b)
    assert (first.added, second.added, second.warnings) == (len(a), len(carrying), ())
    assert len({c.version for c in ledger.counts()}) == len({r.version for r in a + b})


def test_fluke_ingest_says_when_a_file_reads_as_runs_stored_from_another_file(tmp_path):
    """Terminal-Bench run results name no agent: a second agent's file with the same outcomes
    reads as the same runs. ``fluke ingest`` prints a warning naming both files and
    ``--identity``; with ``--identity`` the runs are stored apart, without a warning."""
    from fluke.cli import group

    outcomes = [True, False, True, False]
    a, b = _results(tmp_path / "agent-a", outcomes), _results(tmp_path / "agent-b", outcomes)
    db = str(tmp_path / "l.db")

    def ingest(*args):
        result = CliRunner().invoke(group, ["--ledger", db, "ingest", *map(str, args)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    assert "warning" not in ingest(a)
    out = ingest(b)
    [line] = [ln for ln in out.splitlines() if "warning" in ln]
    assert str(b) in line and str(a) in line and "--identity" in line and "4 of 4" in line
    c = _results(tmp_path / "agent-c", outcomes)
    # c's bytes are a's, so the notice that one file's bodies now sit under two versions may stand
    # (issue 36); the warning that runs read as another file's, asking for --identity, does not
    warned = [ln for ln in ingest(c, "--identity", "model=agent-c").splitlines() if "warning" in ln]
    assert not [ln for ln in warned if str(a) in ln or "--identity" in ln], warned
    from fluke.ledger import open_ledger

    with open_ledger(db) as ledger:
        assert ledger.count() == 8

