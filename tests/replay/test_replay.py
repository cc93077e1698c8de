"""fluke replay: fidelity observed, 100% for a deterministic agent and measured below 100% for a
stochastic one; a request the recording does not hold stops the replay at that step with the
difference shown; replays and interventions are runs every verb reads."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from fluke.cli import group

SUITE = textwrap.dedent("""
    import random
    from fluke.simulate import SUPPORT_TOOLS, support_tool_agent, support_tool_cases

    cases = support_tool_cases(8, memory=True, retry=1)
    tools = SUPPORT_TOOLS
    identity = {"model": "sim-support", "policy": "memory+retry1", "date": "2026-12-01"}
    k = 1
    STOCHASTIC = @STOCHASTIC@

    def agent(input, *, rng, tools):
        if STOCHASTIC and random.random() < 0.5:   # hidden randomness: not the run's rng
            input = {**input, "memory": False}
        return support_tool_agent(input, rng=rng, tools=tools)
""")


def _cli(*args):
    result = CliRunner().invoke(group, list(args), catch_exceptions=False)
    return result


@pytest.fixture
def suite(tmp_path):
    def make(stochastic: bool):
        path = tmp_path / f"suite_{stochastic}.py"
        path.write_text(SUITE.replace("@STOCHASTIC@", str(stochastic)))
        db = str(tmp_path / f"runs_{stochastic}.db")
        ran = _cli("--ledger", db, "run", str(path), "--json")
        assert len(json.loads(ran.output)["runs"]) == 8
        return db, str(path)
    return make


def test_a_deterministic_agent_replays_with_fidelity_100_percent(suite):
    db, path = suite(False)
    out = _cli("--ledger", db, "replay", "--suite", path, "--k", "3", "--json")
    doc = json.loads(out.output)
    assert out.exit_code == 0 and (doc["faithful"], doc["replays"], doc["fidelity"]) == (24, 24, 1.0)
    assert all(r["first_divergence"] is None and r["same_outcome"] == 3 for r in doc["runs"])
    text = _cli("--ledger", db, "replay", "--suite", path, "--k", "3").output
    assert "reproduction fidelity 100.0% (24/24)" in text
    assert "0 added, 24 already there" in text     # the replays are stored runs, and are not run twice


def test_a_stochastic_agent_has_a_measured_fidelity_below_100_percent(suite):
    db, path = suite(True)
    doc = json.loads(_cli("--ledger", db, "replay", "--suite", path, "--k", "4", "--json").output)
    assert 0 < doc["faithful"] < doc["replays"] == 32
    assert doc["low"] < doc["fidelity"] < doc["high"]
    diverged = [r for r in doc["runs"] if r["first_divergence"] is not None]
    assert diverged and all(r["first_divergence"] == 0 for r in diverged)   # the memory search, or its absence
    assert all("recorded" in r["difference"] for r in diverged)
    text = _cli("--ledger", db, "replay", "--suite", path, "--k", "4").output
    share = 100 * doc["faithful"] / doc["replays"]
    assert f"reproduction fidelity {share:.1f}% ({doc['faithful']}/32)" in text
    print(text)


def test_a_mismatched_request_stops_the_replay_at_that_step_with_the_difference(tmp_path):
    from fluke.ledger import open_ledger
    from fluke.replay import replay, select_sources
    from fluke.simulate import support_tool_agent

    from ._support import record

    with open_ledger(str(tmp_path / "r.db")) as ledger:
        record(ledger, 3)
        sources = select_sources(ledger)

        def other(input, *, rng, tools):   # asks for another case's account first
            tools.call("lookup_account", case="env-9999")
            return support_tool_agent(input, rng=rng, tools=tools)

        result = replay(sources, other, k=2, ledger=ledger)
    assert result.faithful == 0 and result.replays == 6
    for row in result.runs:
        assert row.first_divergence == 0 and row.same_calls == 0
        assert row.difference == ('request differs from the recording: lookup_account({"case": "env-9999"}), '
                                  f'recorded search_memory({{"case": "{row.scenario}"}})')


def test_interventions_are_runs_that_name_their_origin_and_every_verb_reads(suite):
    db, path = suite(False)
    from fluke.ledger import open_ledger
    from fluke.replay import tool_logs

    with open_ledger(db) as ledger:
        logs = tool_logs(ledger)
    run = next(h for h, log in logs.items() if len(log["calls"]) > 1 and log["calls"][1]["error"])
    doc = json.loads(_cli("--ledger", db, "intervene", run[:12], "--suite", path, "--step", "1",
                          "--respond", '{"account": "x"}', "--n", "40", "--json").output)
    base, treated = doc["baseline"]["version"], doc["intervened"]["version"]
    with open_ledger(db) as ledger:
        made = [r for r in ledger.runs() if r.version == treated]
    origin = made[0].identity.harness["origin"]
    assert (origin["verb"], origin["step"], origin["arm"], origin["intervention"]) == (
        "intervene", 1, "intervened", doc["intervention_digest"])
    assert len(made) == 40 and {r.condition["origin"] for r in made} == {run[:16]}
    compared = _cli("--ledger", db, "compare", base[:12], treated[:12], "--json")
    assert compared.exit_code in (0, 1)
    body = json.loads(compared.output)
    assert json.dumps(body).count(base[:12]) and body["kind"] == "comparison"
    believed = _cli("--ledger", db, "believe", "--version", treated[:12], "--json")
    assert believed.exit_code == 0, believed.output
