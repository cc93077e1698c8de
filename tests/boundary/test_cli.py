"""fluke boundary, fluke incident and plan --explore on the command line: JSON that carries the
chart, bad input as one line with exit 2, and hostile strings from runs and incidents printed inert."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run
from fluke.simulate import planted_agent

from ..cli.test_untrusted_output import HOSTILE, MARKERS, SECRETS

SPACE = """name: account desk
axes:
  case: [unique, same_name, missing_id, no_permission]
  records: {levels: [1, 2, 5, 10, 20, 50], ordered: true}
"""


@pytest.fixture
def ledger(tmp_path):
    path = tmp_path / "b.db"
    with open_ledger(str(path)) as led:
        led.ingest(planted_agent().suite(12, seed=8, skip=(("unique", "50"),)))
    space = tmp_path / "space.yaml"
    space.write_text(SPACE, encoding="utf-8")
    return str(path), str(space)


def _run(*args):
    return CliRunner().invoke(group, list(args))


def test_boundary_json_carries_every_point_and_the_rule(ledger):
    path, space = ledger
    done = _run("--ledger", path, "--json", "boundary", "--space", space, "--bar", "0.8")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    assert doc["kind"] == "boundary" and doc["space"]["size"] == 24 and doc["run_points"] == 23
    points = {p["point"]: p for p in doc["points"]}
    assert points["case=unique,records=50"]["region"] == "not run"
    assert sum(doc["regions"].values()) == 24
    p = points["case=same_name,records=1"]
    assert p["completed"] + p["asked"] + p["failed"] == p["runs"] == 12
    assert {k["kind"] for k in doc["kinds"]} == {"regression", "frontier"} and doc["kinds_warning"]
    assert any("prior uniform Beta(1, 1)" in c for c in doc["conditional_on"])
    text = _run("--ledger", path, "boundary", "--space", space, "--bar", "0.8").output
    assert "24 points (case 4 levels, records 6 levels, ordered); 23 run (95.8%), 1 named but not run" in text
    assert "warning: the aggregate pass rate mixes 2 case kinds" in text


def test_plan_explore_proposes_the_named_but_not_run_point(ledger):
    path, space = ledger
    done = _run("--ledger", path, "--json", "plan", "--explore", "--space", space, "--budget", "20",
                "--bar", "0.8", "--level", "0.9")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    assert doc["kind"] == "explore" and sum(p["next_runs"] for p in doc["points"]) == 20
    nxt = {p["point"]: p["next_runs"] for p in doc["points"]}
    assert nxt["case=unique,records=50"] > 0
    assert doc["gain"] >= doc["gain_even"] and "expected information gain" in doc["measure"]


@pytest.mark.parametrize("args,words", [
    (["plan", "--explore", "--budget", "5"], "--explore needs --space"),
    (["plan", "--explore", "--space", "SPACE", "--budget", "5", "--detect", "3"], "does not take --detect"),
    (["boundary", "--space", "SPACE", "--floor", "0.95"], "--floor 0.95 is above --bar 0.9"),
    (["boundary", "--space", "BAD"], "space.bad.yaml: axis 'case': field levels"),
    (["incident", "add", "--space", "SPACE", "--at", "case"], "give KEY=VALUE pairs"),
    (["incident", "add", "--space", "SPACE"], "give --at"),
])
def test_bad_input_is_one_line_and_exit_2(ledger, tmp_path, args, words):
    path, space = ledger
    bad = tmp_path / "space.bad.yaml"
    bad.write_text("axes:\n  case: {levels: []}\n", encoding="utf-8")
    args = [space if a == "SPACE" else str(bad) if a == "BAD" else a for a in args]
    done = _run("--ledger", path, *args)
    assert done.exit_code == 2, done.output
    assert words in done.output and "Traceback" not in done.output
    assert len(done.output.strip().splitlines()) == 1


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_hostile_conditions_and_incidents_print_inert(tmp_path, fmt):
    hostile = " ".join(HOSTILE)
    secret = next(iter(SECRETS))
    path = tmp_path / "h.db"
    rng = np.random.default_rng(0)
    with open_ledger(str(path)) as led:
        led.ingest([Run(scenario=f"s {HOSTILE[0]}", trial=t, identity=Identity(model="m"),
                        condition={"case": f"{hostile} {secret}" if t % 2 else "unique"},
                        tags=[f"kind:{hostile}"], outcome=Outcome(passed=bool(rng.random() < 0.5)))
                    for t in range(8)])
    space = tmp_path / "space.yaml"
    space.write_text("axes:\n  case: [unique]\n", encoding="utf-8")
    inc = tmp_path / "inc.jsonl"
    inc.write_text(json.dumps({"at": {"case": f"{hostile} {secret}"}, "when": "2026-11-01",
                               "note": hostile, "id": secret}) + "\n", encoding="utf-8")
    assert _run("--ledger", str(path), "incident", "add", "--space", str(space), "--file", str(inc)).exit_code == 0
    for args in (["boundary", "--space", str(space)], ["incident", "show", "--space", str(space)],
                 ["plan", "--explore", "--space", str(space), "--budget", "3"]):
        done = _run("--ledger", str(path), "--format", fmt, *args)
        assert done.exit_code == 0, done.output
        for ch in ("\x1b", "\x07", "\r", "\x9b"):
            assert ch not in done.output, (args[0], ch)
        for marker in MARKERS:
            assert marker not in done.output, (args[0], marker)


def test_believe_by_condition_is_the_boundary_chart(ledger):
    path, space = ledger
    by = _run("--ledger", path, "--json", "believe", "--by", "condition", "--space", space, "--bar", "0.8",
              "--level", "0.9", "--floor", "0.5")
    direct = _run("--ledger", path, "--json", "boundary", "--space", space, "--bar", "0.8", "--prob", "0.9")
    assert by.exit_code == 0, by.output
    assert json.loads(by.output)["points"] == json.loads(direct.output)["points"]
    refused = _run("--ledger", path, "believe", "--by", "condition", "--space", space, "--discount", "0.9")
    assert refused.exit_code == 2 and "does not take --discount" in refused.output
    assert _run("--ledger", path, "believe", "--by", "condition").exit_code == 2


def test_pass_rates_per_kind_follow_every_version_in_the_order_recorded(ledger):
    path, space = ledger
    agent = planted_agent(version="account-desk-v2", works_rate=0.5)
    with open_ledger(path) as led:
        led.ingest(agent.suite(6, seed=1))
    doc = json.loads(_run("--ledger", path, "--json", "boundary", "--space", space).output)
    seen = [(k["version"].split(" (")[1].rstrip(")"), k["kind"], k["runs"]) for k in doc["kinds"]]
    assert seen == [("account-desk-v1", "frontier", 12 * 18), ("account-desk-v1", "regression", 12 * 5),
                    ("account-desk-v2", "frontier", 6 * 18), ("account-desk-v2", "regression", 6 * 6)]
    assert doc["label"].endswith("(account-desk-v2)")   # the chart is the latest version's


def test_boundary_past_the_memory_budget_is_refused_before_it_reads_a_run(ledger, monkeypatch):
    """The chart holds a few tuples per run of the charted version (BOUNDARY_BYTES each); past the memory
    available (FLUKE_MEMORY_BUDGET here) it says so in one line, exit 2, as the report does."""
    from fluke.analysis._boundary import BOUNDARY_BYTES

    path, space = ledger
    with open_ledger(path, create=False) as led:
        runs = led.count(version=[led.versions()[-1].version])
    assert runs == 23 * 12
    need = runs * BOUNDARY_BYTES
    monkeypatch.setenv("FLUKE_MEMORY_BUDGET", str(need - 1))
    done = _run("--ledger", path, "boundary", "--space", space)
    assert done.exit_code == 2 and "Traceback" not in done.output
    assert f"boundary on {runs} runs would need about {need / 1024:.1f} KB of memory" in done.output, done.output
    assert "--version" in done.output
    monkeypatch.setenv("FLUKE_MEMORY_BUDGET", str(need))
    assert _run("--ledger", path, "boundary", "--space", space).exit_code == 0


def test_boundary_bytes_bound_what_the_chart_holds_per_run(tmp_path):
    """The per-run figure the budget uses bounds what _rows keeps (tracemalloc: about 127 B a run here), on 6,000
    runs with conditions, tags and labels: so the refusal never comes too late."""
    import tracemalloc

    from fluke.analysis._boundary import BOUNDARY_BYTES, _rows

    runs = [Run(scenario=f"s{i % 50}", trial=i // 50, identity=Identity(model="m"), tags=[f"kind/{i % 3}"],
                condition={"case": ("unique", "same_name")[i % 2], "records": (1, 2, 5)[i % 3]},
                outcome=Outcome(passed=i % 4 != 0, label=("complete", "fail", "should_ask", None)[i % 4]))
            for i in range(6_000)]
    led = open_ledger(str(tmp_path / "m.db"))
    led.ingest(runs)
    v = led.versions()[0].version
    _rows(led, v, "fail")   # warm: the shared stand-ins and caches, once
    tracemalloc.start()
    rows, kinds, _ = _rows(led, v, "fail")
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(rows) == len(kinds) == 6_000
    assert held < 6_000 * BOUNDARY_BYTES, held / 6_000
