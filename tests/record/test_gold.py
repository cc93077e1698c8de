"""Run.gold: the readers keep the benchmark's gold actions, and a run without gold hashes,
stores and exports exactly as before the field existed."""

from __future__ import annotations

import hashlib
import json

import orjson

from fluke.adapters import read_file
from fluke.ledger import open_ledger
from fluke.record import GoldCall, Run, ToolCall, canonical_json, content_json

from ..conftest import TAU2_RESULTS, TAU_AIRLINE, need

#: Computed with the parent commit (before Run.gold existed) by reading the same files.
TAU_FIRST = "095895335b935c4dd0abd2ee2f67029079dd2b4d80690a280de5743c1068293d"
TAU_ALL = "193b941e5488791e592a16aeb3e4fb39cec1bbaa2938df5e8e872e3684edae9f"
TAU2_FIRST = "f7f8a2d589f1ebe3652093d7763b4dcaa34a7d80512dba1f497eabc4e5f763fa"
TAU2_ALL = "d1ea44c2d266307e8497e07beb3fe7dc492b880694a5e8b1d8e89dc257383cb0"


def _without_gold(run):
    # not model_copy(update=...): it would carry the cached hash over
    return Run.model_validate({**run.model_dump(), "gold": None})


def _hash_of_all(runs):
    return hashlib.sha256("".join(r.hash for r in runs).encode()).hexdigest()


def test_a_run_without_gold_hashes_as_before():
    run = Run(scenario="s", events=[ToolCall(tool="t", args={"a": 1}, ok=True)])
    body = run.model_dump(mode="json", exclude={"source"})
    assert "gold" not in body and "gold" not in run.model_dump_json()
    assert content_json(run) == canonical_json(body)
    # the hash is over exactly the fields a run had before: an independent SHA-256 of them
    old_fields = {k: v for k, v in body.items()}
    assert run.hash == hashlib.sha256(orjson.dumps(old_fields, option=orjson.OPT_SORT_KEYS)).hexdigest()


def test_real_runs_hash_as_before_once_their_gold_is_dropped():
    for path, first, whole in ((need(TAU_AIRLINE), TAU_FIRST, TAU_ALL),
                               (need(TAU2_RESULTS / "gpt-4.1_airline_default_gpt-4.1_1trials.json"),
                                TAU2_FIRST, TAU2_ALL)):
        runs = [_without_gold(r) for r in read_file(path)]
        assert all(r.gold is None for r in runs)
        assert runs[0].hash == first and _hash_of_all(runs) == whole


def test_gold_is_part_of_the_content_and_round_trips(tmp_path):
    run = Run(scenario="s", gold=[GoldCall(tool="cancel", args={"id": "X1"})])
    assert run.hash != _without_gold(run).hash
    assert Run.model_validate_json(run.model_dump_json()).hash == run.hash
    with open_ledger(str(tmp_path / "l.db")) as ledger:
        ledger.ingest([run, Run(scenario="plain")])
        back = {r.scenario: r for r in ledger.runs()}
    assert back["s"].gold == run.gold and back["s"].hash == run.hash
    assert back["plain"].gold is None


def test_tau_bench_reader_keeps_the_task_actions():
    doc = json.loads(need(TAU_AIRLINE).read_text())
    runs = list(read_file(TAU_AIRLINE))
    for run, item in zip(runs, doc, strict=True):
        want = [(a["name"], a["kwargs"]) for a in item["info"]["task"]["actions"]]
        assert [(g.tool, g.args) for g in run.gold] == want
    assert sum(len(r.gold) for r in runs if r.trial == 0) == 158


def test_tau2_bench_reader_keeps_the_evaluation_actions():
    path = need(TAU2_RESULTS / "gpt-4.1_airline_default_gpt-4.1_1trials.json")
    doc = json.loads(path.read_text())
    tasks = {t["id"]: t for t in doc["tasks"]}
    for run, sim in zip(read_file(path), doc["simulations"], strict=True):
        actions = tasks[sim["task_id"]]["evaluation_criteria"]["actions"] or []
        assert [(g.tool, g.args, g.compare) for g in run.gold] == \
            [(a["name"], a["arguments"], a["compare_args"]) for a in actions]


def test_malformed_gold_is_left_out_never_an_ingest_error(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"task_id": 0, "reward": 1, "traj": [], "info": {"task": {"actions": "?"}}},
                                {"task_id": 1, "reward": 1, "traj": [], "info": {"task": {"actions": [{"name": 3}]}}},
                                {"task_id": 2, "reward": 1, "traj": [], "info": "x"}]))
    assert [r.gold for r in read_file(path)] == [None, None, None]
    tasks = [5, {"id": "1"}, {"id": "2", "evaluation_criteria": {"actions": [{"name": "x", "compare_args": [1]}]}},
             {"id": "3", "evaluation_criteria": {"actions": [{"name": "y", "arguments": {"a": 1}}]}}]
    sims = [{"task_id": str(k), "messages": [], "reward_info": {"reward": 1.0}} for k in (1, 2, 3)]
    path2 = tmp_path / "t2.json"
    path2.write_text(json.dumps({"timestamp": "2025-01-01", "info": {}, "tasks": tasks, "simulations": sims}))
    assert [r.gold for r in read_file(path2)] == [None, None, [GoldCall(tool="y", args={"a": 1})]]
