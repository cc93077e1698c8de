"""`reference: gold` on the recorded τ-bench and τ²-bench airline runs: fluke's "made every gold
action" against an independent reading of the raw files, and the agreement counts of
examples/gold_agreement.py (the table in docs/grading.md)."""

from __future__ import annotations

import importlib.util
import json
import sys

from ..conftest import DATA, ROOT, TAU_AIRLINE, need


def _script():
    loaded = importlib.util.spec_from_file_location("gold_agreement", ROOT / "examples" / "gold_agreement.py")
    module = importlib.util.module_from_spec(loaded)
    sys.modules["gold_agreement"] = module      # its dataclasses look their module up
    loaded.loader.exec_module(module)
    return module


def _match(gold, made):
    """Can every gold action take its own successful made call with equal name and arguments?
    (augmenting paths: a bipartite matching written out, no fluke code)."""
    fits = [[j for j, (name, args) in enumerate(made) if name == g[0] and args == g[1]] for g in gold]
    owner: dict[int, int] = {}

    def take(i, seen):
        for j in fits[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or take(owner[j], seen):
                    owner[j] = i
                    return True
        return False
    return all(take(i, set()) for i in range(len(gold)))


def _tau_made(traj):
    results = {m["tool_call_id"]: m["content"] for m in traj if m["role"] == "tool"}
    return [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for m in traj if m["role"] == "assistant" for c in m.get("tool_calls") or []
            if not str(results.get(c["id"], "Error:")).startswith("Error:")]


def test_tau_bench_agreement_counts_and_an_independent_reading():
    doc = json.loads(need(TAU_AIRLINE).read_text())
    oracle = [_match([(a["name"], a["kwargs"]) for a in r["info"]["task"]["actions"]], _tau_made(r["traj"]))
              for r in doc]
    a = _script().agreement([TAU_AIRLINE], tau2=False)
    table = {k: a.table[k] for k in [(True, True), (True, False), (False, True), (False, False)]}
    assert table == {(True, True): 57, (True, False): 19, (False, True): 27, (False, False): 97}
    assert sum(oracle) == 57 + 19
    rewards = [r["reward"] == 1.0 for r in doc]
    assert sum(o and p for o, p in zip(oracle, rewards, strict=True)) == 57
    # every disagreement has a named cause; no reward-1 run missed a call that changes state
    assert sum(a.why.values()) == 46 and not any(w.startswith("reward 0, a check") for w in a.why)
    assert a.tasks["airline/48"] == [4, 4, 4] and a.tasks["airline/35"] == [4, 0, 4]


def test_tau2_bench_agrees_with_its_own_action_check():
    files = sorted(need(DATA / "tau2-bench").glob("**/*airline*.json"))
    assert len(files) == 6
    script = _script()
    for path in files:
        a = script.agreement([path], tau2=True)
        assert a.own[True, False] == a.own[False, True] == 0, path.name
    one = script.agreement([p for p in files if p.name.startswith("gpt-4.1_airline")], tau2=True)
    assert dict(one.table) == {(True, True): 9, (True, False): 2, (False, True): 1, (False, False): 8}
    assert one.own[True, True] + one.own[False, False] == 18


def test_parallel_calls_of_one_tau2_message_are_one_turn():
    from fluke.adapters import read_file
    from fluke.grading import grade_run, load_spec

    path = need(DATA / "tau2-bench" / "src" / "experiments" / "model_training" / "results"
                / "gpt-4.1_airline_default_gpt-4.1_1trials.json")
    doc = json.loads(path.read_text())
    for run, sim in zip(read_file(path), doc["simulations"], strict=True):
        parallel = next((m["tool_calls"] for m in sim["messages"]
                         if m["role"] == "assistant" and len(m.get("tool_calls") or []) > 1), None)
        if parallel:
            break
    # the message's calls, listed in reverse as separate expected turns: in order all the same,
    # since the agent made them in one turn; once the start times are gone, they are ordered
    backwards = [{"tool": c["name"], "args": c["arguments"]} for c in reversed(parallel)]
    spec = load_spec({"ground": False, "secrets": False, "reference": backwards, "reference_mode": "in_order"})
    assert grade_run(run, spec).reference.complete
    untimed = run.model_validate({**run.model_dump(), "events": [
        {**e.model_dump(), "t_start": None} if e.kind == "tool" else e.model_dump() for e in run.events]})
    assert grade_run(untimed, spec).reference.matched == 1
