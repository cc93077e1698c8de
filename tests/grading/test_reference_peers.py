"""fluke's reference grading against agentevals 0.0.9 and DeepEval's ToolCorrectnessMetric.

Where the modes mean the same (exact arguments, one call per assistant turn, every call
succeeding), the verdicts and scores match on generated trajectories. For each defect the
peers' users report, a test shows the case, the peer's answer and fluke's.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from fluke.grading import grade_run, load_spec
from fluke.record import GoldCall

from .build import call, run_of

os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")   # no telemetry from the oracle
agentevals = pytest.importorskip("agentevals.trajectory.match", reason="pip install agentevals (test extra)")
deepeval_metrics = pytest.importorskip("deepeval.metrics", reason="pip install deepeval (test extra)")
from deepeval.models import DeepEvalBaseLLM  # noqa: E402
from deepeval.test_case import LLMTestCase, ToolCallParams  # noqa: E402
from deepeval.test_case import ToolCall as DeepCall  # noqa: E402

QUIET = {"ground": False, "secrets": False, "failing_loop": None}


# -- the peers, driven ------------------------------------------------------------------------

def _messages(turns):
    """OpenAI messages: one assistant message per turn (a list of (tool, args)), each call answered."""
    out, n = [{"role": "user", "content": "help"}], 0
    for turn in turns:
        ids = [f"c{n + i}" for i in range(len(turn))]
        n += len(turn)
        out.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": i, "type": "function", "function": {"name": t, "arguments": json.dumps(a)}}
            for i, (t, a) in zip(ids, turn, strict=True)]})
        out += [{"role": "tool", "tool_call_id": i, "content": "ok"} for i in ids]
    out.append({"role": "assistant", "content": "done"})
    return out


def agentevals_says(mode, made_turns, expected_turns, **kw):
    ev = agentevals.create_trajectory_match_evaluator(trajectory_match_mode=mode, **kw)
    return ev(outputs=_messages(made_turns), reference_outputs=_messages(expected_turns))


class _NoLLM(DeepEvalBaseLLM):
    """ToolCorrectnessMetric needs a model object; without available_tools it never calls it."""

    def __init__(self):
        pass

    def load_model(self):
        return None

    def generate(self, *a, **k):
        raise AssertionError("the metric asked an LLM")

    async def a_generate(self, *a, **k):
        raise AssertionError("the metric asked an LLM")

    def get_model_name(self):
        return "none"


def deepeval_score(expected, made, **kw):
    metric = deepeval_metrics.ToolCorrectnessMetric(model=_NoLLM(), async_mode=False, include_reason=False,
                                                    evaluation_params=[ToolCallParams.INPUT_PARAMETERS], **kw)
    case = LLMTestCase(input="q", actual_output="a",
                       tools_called=[DeepCall(name=t, input_parameters=a) for t, a in made],
                       expected_tools=[DeepCall(name=t, input_parameters=a) for t, a in expected])
    return metric.measure(case, _show_indicator=False)


def fluke_grade(mode, made, expected_groups, **more):
    """``made``: flat calls (each its own turn: no start times); ``expected_groups``: turns."""
    spec = load_spec({**QUIET, "reference_mode": mode, **more,
                      "reference": [[{"tool": t, "args": a} for t, a in g] for g in expected_groups]})
    return grade_run(run_of(*[call(t, a) for t, a in made]), spec)


# -- where both mean the same ------------------------------------------------------------------

def _trajectory(rng, pool):
    return [pool[int(i)] for i in rng.integers(0, len(pool), size=int(rng.integers(0, 6)))]


@pytest.mark.parametrize("seed", range(40))
def test_agentevals_modes_agree_on_generated_trajectories(seed):
    rng = np.random.default_rng(seed)
    pool = [("lookup", {"id": "A1"}), ("lookup", {"id": "B2"}), ("refund", {"id": "A1"}), ("email", {})]
    expected = _trajectory(rng, pool) or [pool[0]]
    made = list(expected) if rng.random() < 0.3 else _trajectory(rng, pool)
    if rng.random() < 0.3:
        made = list(reversed(expected))
    for mode in ("strict", "unordered", "subset", "superset"):
        peer = agentevals_says(mode, [[c] for c in made], [[c] for c in expected])["score"]
        ours = fluke_grade(mode, made, [[c] for c in expected])
        assert ours.path_ok is peer, (mode, made, expected)


@pytest.mark.parametrize("seed", range(40))
def test_deepeval_scores_agree_on_generated_trajectories(seed):
    # distinct calls, one argument each: DeepEval's partial credit and its duplicate defect stay out
    rng = np.random.default_rng(100 + seed)
    pool = [(t, {"id": f"{t[0]}{k}"}) for t in ("lookup", "refund", "email") for k in range(3)]
    expected = [pool[i] for i in rng.choice(len(pool), size=int(rng.integers(1, 5)), replace=False)]
    made = [pool[i] for i in rng.choice(len(pool), size=int(rng.integers(0, 6)), replace=False)]
    if rng.random() < 0.6:    # mostly the expected calls, shuffled, some dropped, some others added
        made = [c for c in expected if rng.random() < 0.8] + [c for c in made if c not in expected][:2]
        made = [made[i] for i in rng.permutation(len(made))]
    groups = [[c] for c in expected]
    # any order: DeepEval's score is recall
    assert deepeval_score(expected, made) == pytest.approx(fluke_grade("superset", made, groups).reference.recall)
    # considering order: its weighted LCS over the expected count is in_order recall
    assert deepeval_score(expected, made, should_consider_ordering=True) == \
        pytest.approx(fluke_grade("in_order", made, groups).reference.recall)
    # exact match: strict
    assert (deepeval_score(expected, made, should_exact_match=True) == 1.0) is \
        fluke_grade("strict", made, groups).path_ok


# -- the state mode beside the peers' closest modes ---------------------------------------------------
# Neither peer has a state mode. Its closest: agentevals' unordered and DeepEval's score, given
# only the successful writes of both sides (the filtering the state mode does itself).

WRITES = ("refund", "cancel")


def _writes_only(calls):
    return [(t, a) for t, a, *ok in calls if t in WRITES and (not ok or ok[0])]


@pytest.mark.parametrize("seed", range(30))
def test_state_mode_is_agentevals_unordered_over_the_successful_writes(seed):
    rng = np.random.default_rng(300 + seed)
    pool = [(t, {"id": k}) for t in ("lookup", "search", *WRITES) for k in ("A1", "B2")]
    expected = _trajectory(rng, pool)
    made = [(t, a, True) for t, a in expected] if rng.random() < 0.5 else []
    made += [(t, a, bool(rng.random() < 0.8)) for t, a in _trajectory(rng, pool)]
    made = [made[i] for i in rng.permutation(len(made))]
    spec = load_spec({**QUIET, "reference_mode": "state", "writes": list(WRITES), "reference": "gold"})
    run = run_of(*[call(t, a, ok=ok, error=None if ok else "Error: no") for t, a, ok in made])
    run = run.model_copy(update={"gold": [GoldCall(tool=t, args=a) for t, a in expected]})
    ours = grade_run(run, spec)
    peer = agentevals_says("unordered", [[c] for c in _writes_only(made)], [[c] for c in _writes_only(expected)])
    assert ours.reference_ok is peer["score"], (made, expected)
    # DeepEval's score over the same writes is the state mode's recall (distinct calls: its
    # duplicate defect stays out; no expected write: DeepEval has nothing to score)
    want, got = _writes_only(expected), _writes_only(made)
    if want and len({json.dumps(c) for c in want}) == len(want) and len({json.dumps(c) for c in got}) == len(got):
        assert deepeval_score(want, got) == pytest.approx(ours.reference.recall)


def _tau_messages(calls):
    return _messages([[c] for c in calls])


def _tau_calls(traj, keep):
    """The successful calls of a raw τ-bench trajectory, in order (call ids recur in a run, so
    each result answers the earliest unanswered call of its id)."""
    pending, out = {}, []
    for m in traj:
        for c in (m.get("tool_calls") or []) if m["role"] == "assistant" else []:
            pending.setdefault(c["id"], []).append(c["function"])
        if m["role"] == "tool":
            f = pending[m["tool_call_id"]].pop(0)
            if not str(m["content"]).startswith("Error:") and keep(f["name"]):
                out.append((f["name"], json.loads(f["arguments"])))
    return out


def test_tau_bench_side_by_side_with_agentevals():
    from fluke.adapters import read_file

    from ..conftest import TAU_AIRLINE, need

    doc = json.loads(need(TAU_AIRLINE).read_text())
    runs = list(read_file(TAU_AIRLINE))
    writes = {"book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_baggages",
              "update_reservation_passengers", "send_certificate"}
    agree = {}
    for mode in ("superset", "subset", "unordered", "strict", "state"):
        state = mode == "state"
        spec = load_spec({**QUIET, "reference": "gold", "reference_mode": mode,
                          **({"writes": sorted(writes)} if state else {})})
        keep = (lambda name: name in writes) if state else (lambda name: True)
        ev = agentevals.create_trajectory_match_evaluator(trajectory_match_mode="unordered" if state else mode)
        n = 0
        for record, run in zip(doc, runs, strict=True):
            gold = [(a["name"], a["kwargs"]) for a in record["info"]["task"]["actions"] if keep(a["name"])]
            peer = ev(outputs=_tau_messages(_tau_calls(record["traj"], keep)),
                      reference_outputs=_tau_messages(gold))["score"]
            ours = grade_run(run, spec).reference_ok
            assert ours is peer, (mode, run.scenario, run.trial)
            n += ours is (record["reward"] == 1.0)
        agree[mode] = n
    # the same verdict on every run in every mode; agreement with the reward, of 200 runs
    assert agree == {"superset": 154, "subset": 120, "unordered": 128, "strict": 128, "state": 195}


# -- the peers' defects, case by case ------------------------------------------------------------

def test_agentevals_first_fit_misses_a_valid_pairing():
    expected = [("get", {"id": 1}), ("get", {"id": 1, "verbose": True})]
    made = [("get", {"id": 1, "verbose": True}), ("get", {"id": 1})]
    peer = agentevals_says("superset", [[c] for c in made], [[c] for c in expected],
                           tool_args_match_overrides={"get": "superset"})
    assert peer["score"] is False               # get(id=1) took the verbose call first
    ours = fluke_grade("superset", made, [[c] for c in expected], match={"get": {"*": "superset"}})
    assert ours.path_ok and ours.reference.pairs == ((0, 1), (1, 0))


def test_agentevals_strict_fails_the_same_calls_split_over_two_turns():
    expected = [[("search", {"q": "JFK"}), ("search", {"q": "SEA"})]]       # one turn, two calls
    made = [("search", {"q": "JFK"}), ("search", {"q": "SEA"})]             # two turns
    assert agentevals_says("strict", [[c] for c in made], expected)["score"] is False
    assert fluke_grade("strict", made, expected).path_ok


def test_agentevals_says_no_reason():
    peer = agentevals_says("superset", [[("cancel", {"id": "zfa04y"})]], [[("cancel", {"id": "ZFA04Y"})]])
    assert peer["score"] is False and peer["comment"] is None
    [v] = fluke_grade("superset", [("cancel", {"id": "zfa04y"})], [[("cancel", {"id": "ZFA04Y"})]]).violations
    assert v.message == "expected `cancel(id='ZFA04Y')`, got `id='zfa04y'` at event 0"


def test_deepeval_never_charges_extra_calls():
    expected = [("refund", {"id": "A1"})]
    made = [("refund", {"id": "A1"}), ("email", {"to": "x"}), ("email", {"to": "y"}), ("wipe", {})]
    assert deepeval_score(expected, made) == 1.0
    ours = fluke_grade("unordered", made, [[c] for c in expected])
    assert ours.reference.score == pytest.approx(2 * 1 / (1 + 4)) and ours.reference.precision == 0.25
    assert [v.check for v in ours.violations] == ["reference_extra"] * 3


def test_deepeval_scores_two_identical_calls_one_half():
    twice = [("refund", {"id": "A1"}), ("refund", {"id": "A1"})]
    assert deepeval_score(twice, twice) == 0.5
    ours = fluke_grade("strict", twice, [[c] for c in twice])
    assert ours.reference.score == 1.0 and ours.path_ok


def test_deepeval_score_depends_on_the_order_of_the_expected_list():
    expected = [("get", {"id": 1, "day": 1}), ("get", {"id": 1, "day": 2})]
    made = [("get", {"id": 1, "day": 2}), ("get", {"id": 9, "day": 1})]
    assert (deepeval_score(expected, made), deepeval_score(expected[::-1], made)) == (0.25, 0.75)
    forward = fluke_grade("superset", made, [[c] for c in expected]).reference
    backward = fluke_grade("superset", made, [[c] for c in expected[::-1]]).reference
    assert (forward.score, forward.recall) == (backward.score, backward.recall) == (0.5, 0.5)
