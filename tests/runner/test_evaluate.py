"""fluke.runner.evaluate: resilient batches, refused specs, ledger writes and resume."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from fluke.errors import InputError, MissingDependency, UsageError
from fluke.record import AgentMessage, Identity, Run, ToolCall, UserMessage
from fluke.runner import Case, Trajectory, evaluate

CASES = [Case("refund", input="refund W1", check=lambda out: out == "done"),
         Case("lookup", input="find W2", check=lambda out: out == "found")]


def good_agent(text, *, trial, rng):
    order = text.split()[-1]
    events = [UserMessage(text=text),
              ToolCall(tool="get_order", args={"order_id": order}, call_id=f"c{trial}", ok=True, result="{}"),
              AgentMessage(text="ok")]
    return Trajectory(events=events, output="done" if text.startswith("refund") else "found")


def test_k_runs_per_case_in_order():
    result = evaluate(CASES, good_agent, k=3, identity={"model": "toy"})
    assert [(r.scenario, r.trial) for r in result.runs] == [
        ("refund", 0), ("refund", 1), ("refund", 2), ("lookup", 0), ("lookup", 1), ("lookup", 2)]
    assert result.passes() == (6, 6) and result.errors == 0 and result.hard == 0
    run = result.runs[1]
    assert run.identity.model == "toy" and run.version == Identity(model="toy").version
    assert [e.kind for e in run.events] == ["user", "tool", "agent"]
    assert run.tool_calls[0].call_id == "c1" and run.outcome.label == "complete"


def test_rng_depends_only_on_seed_scenario_and_trial():
    draws = {}

    def agent(text, *, trial, rng):
        draws[(text, trial)] = int(rng.integers(1 << 30))
        return Trajectory(output="done")

    evaluate([Case("refund", input="refund W1")], agent, k=2, seed=7)
    for trial in (0, 1):
        # Independent re-derivation of the documented rule: sha256("seed|scenario|trial").
        raw = hashlib.sha256(f"7|refund|{trial}".encode()).digest()[:8]
        expected = np.random.default_rng(int.from_bytes(raw, "big") & (2**63 - 1)).integers(1 << 30)
        assert draws[("refund W1", trial)] == expected
    assert draws[("refund W1", 0)] != draws[("refund W1", 1)]


def test_exceptions_in_agent_and_check_are_recorded_and_the_batch_goes_on():
    def flaky(text, *, trial):
        if trial == 1:
            raise ConnectionError("network blip")
        return Trajectory(output="done" if trial != 2 else None)

    def check(out):
        if out is None:
            raise KeyError("no output field")
        return out == "done"

    result = evaluate([Case("refund", input="x", check=check)], flaky, k=4)
    states = [(r.run.outcome.passed, r.run.outcome.label, r.run.error, r.hard) for r in result.results]
    assert states == [(True, "complete", None, False),
                      (None, "error", "agent raised ConnectionError: network blip", True),
                      (None, "error", "output check raised KeyError: 'no output field'", True),
                      (True, "complete", None, False)]
    assert result.errors == 2 and result.hard == 2
    assert "ConnectionError" in result.results[1].traceback
    assert [v.severity for v in result.results[1].violations] == ["hard"]
    assert result.results[1].violations[0].check == "run_error"


def test_agent_returning_a_run_or_a_pair_or_garbage():
    adapter_run = Run(scenario="ignored", identity=Identity(harness="langgraph"),
                      events=[ToolCall(tool="t", ok=None), AgentMessage(text="done")])
    answers = iter([adapter_run, ([{"kind": "tool", "tool": "t", "ok": True}], "done"), 42])
    result = evaluate([Case("refund", input="x", check=lambda o: o == "done")],
                      lambda _: next(answers), k=3, identity={"model": "m"})
    first, second, third = result.runs
    assert first.scenario == "refund" and first.identity.model == "m" and first.identity.harness == "langgraph"
    assert first.outcome.passed is True and first.tool_calls[0].ok is None
    assert second.tool_calls[0].ok is True and second.outcome.passed is True
    assert third.error == "agent returned a int; expected a Trajectory, a Run or (events, output)"


def test_bad_input_is_refused_before_any_call():
    calls = []

    def agent(text):
        calls.append(text)

    with pytest.raises(UsageError, match="k=0 must be an integer of at least 1"):
        evaluate(CASES, agent, k=0)
    with pytest.raises(InputError, match="appears twice"):
        evaluate([Case("a"), Case("a")], agent, k=1)
    with pytest.raises(InputError, match="field tag: is not a case field"):
        evaluate([{"scenario": "a", "tag": "x"}], agent, k=1)
    with pytest.raises(UsageError, match="executor='dask' is not one of"):
        evaluate(CASES, agent, k=1, executor="dask")
    assert calls == []


def test_threads_give_the_same_runs_as_local():
    def agent(text, *, trial, rng):
        return Trajectory(events=[ToolCall(tool="t", args={"x": int(rng.integers(100))}, ok=True)], output="done")

    local = evaluate(CASES, agent, k=3, identity={"model": "m", "date": "2026-11-30"})
    threads = evaluate(CASES, agent, k=3, identity={"model": "m", "date": "2026-11-30"},
                       executor="threads", workers=3)
    strip = lambda runs: [(r.scenario, r.trial, r.tool_calls[0].args) for r in runs]  # noqa: E731
    assert strip(local.runs) == strip(threads.runs)


def test_ray_is_optional_with_an_install_hint(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)   # as if ray were not installed
    with pytest.raises(MissingDependency, match=r"pip install 'fluke\[ray\]'"):
        evaluate(CASES, good_agent, k=1, executor="ray")


def _crash_then_resume(ledger):
    seen = []

    def crashing(text, *, trial, rng):
        seen.append((text, trial))
        if len(seen) == 4:
            raise KeyboardInterrupt  # fluke itself dies (not an agent error): nothing caught
        return good_agent(text, trial=trial, rng=rng)

    ident = {"model": "toy", "date": "2026-11-30"}
    with pytest.raises(KeyboardInterrupt):
        evaluate(CASES, crashing, k=3, ledger=ledger, identity=ident)
    before = list(ledger.runs())
    assert sorted((r.scenario, r.trial) for r in before) == [("refund", 0), ("refund", 1), ("refund", 2)]

    seen.clear()
    result = evaluate(CASES, crashing, k=3, ledger=ledger, identity=ident)
    assert seen == [("find W2", 0), ("find W2", 1), ("find W2", 2)]   # only the missing runs ran
    assert (result.added, result.resumed) == (3, 3)
    assert [r.resumed for r in result.results] == [True] * 3 + [False] * 3
    after = list(ledger.runs())
    assert len(after) == 6 and len({(r.scenario, r.trial) for r in after}) == 6

    again = evaluate(CASES, crashing, k=3, ledger=ledger, identity=ident)
    assert (again.added, again.resumed) == (0, 6) and len(list(ledger.runs())) == 6
    # Another version is a different agent: it runs in full.
    other = evaluate(CASES, good_agent, k=1, ledger=ledger, identity={"model": "toy-2"})
    assert (other.added, other.resumed) == (2, 0)


def test_crash_loses_no_completed_run_and_resume_duplicates_none(ledger):
    _crash_then_resume(ledger)
    # Each completed run went in by its own ingest, so each has its own recording time.
    times = ledger.recorded_times()
    assert len(times) == 8 and len(set(times.values())) == 8


def test_crash_and_resume_on_a_real_sqlite_ledger(tmp_path):
    import fluke.ledger as ledger_mod
    with ledger_mod.open_ledger(str(tmp_path / "fluke.db")) as ledger:
        _crash_then_resume(ledger)
    with ledger_mod.open_ledger(str(tmp_path / "fluke.db")) as reopened:
        assert reopened.count() == 8


SPEC = {"tools": ["get_order", "refund"], "required": ["get_order"], "forbidden": ["refund"]}


def test_bad_spec_is_refused_before_the_first_agent_call():
    from fluke.errors import SpecError

    calls = []

    def agent(text):
        calls.append(text)
        return Trajectory(output="done")

    with pytest.raises(SpecError, match="forbiden"):
        evaluate(CASES, agent, k=2, spec={"tools": ["get_order"], "forbiden": ["refund"]})
    with pytest.raises(SpecError):
        evaluate(CASES, agent, k=2, spec={"tools": ["get_order"], "required": ["get_ordr"]})
    assert calls == []


def test_runs_are_graded_and_a_grading_crash_is_recorded(monkeypatch):
    import fluke.grading as grading

    def agent(text, *, trial):
        tools = ["get_order", "refund"] if trial == 1 else ["get_order"]
        return Trajectory([ToolCall(tool=t, args={}, ok=True) for t in tools], output="done")

    result = evaluate(CASES[:1], agent, k=3, spec=SPEC)
    assert [[(v.check, v.severity, v.index) for v in r.violations] for r in result.results] == [
        [], [("forbidden", "hard", 1)], []]
    assert [r.hard for r in result.results] == [False, True, False]
    assert result.spec_digest == grading.load_spec(SPEC).digest
    assert result.gate().passed is False
    assert result.results[0].grade.trial == 0 and result.results[0].grade.version == result.version

    real = grading.grade_run

    def broken(run, spec):
        if run.trial == 2:
            raise RuntimeError("grader bug")
        return real(run, spec)

    monkeypatch.setattr(grading, "grade_run", broken)
    result = evaluate(CASES[:1], agent, k=3, spec=SPEC)
    third = result.results[2]
    assert third.run.error == "grading raised RuntimeError: grader bug"
    assert third.run.outcome.label == "error" and third.hard
    assert [(v.check, v.severity) for v in third.violations] == [("run_error", "hard")]
    assert [r.run.error for r in result.results[:2]] == [None, None]


def test_grades_stored_with_the_spec_digest_in_sqlite(tmp_path):
    from fluke.grading import RunGrade
    from fluke.ledger import open_ledger

    def agent(text, *, trial):
        if trial == 1:
            raise TimeoutError("slow")
        return Trajectory([ToolCall(tool="get_order", args={}, ok=True)], output="done")

    with open_ledger(str(tmp_path / "fluke.db")) as ledger:
        result = evaluate(CASES, agent, k=2, spec=SPEC, ledger=ledger, identity={"model": "m"})
        stored = ledger.grades(result.spec_digest)
        assert set(stored) == {r.run.hash for r in result.results}
        back = {h: RunGrade.from_dict(body) for h, body in stored.items()}
        assert sorted(g.hard for g in back.values()) == [False, False, True, True]
        # The stored run that raised carries its error: the verdict can be re-created.
        errored = [r for r in ledger.runs() if r.error]
        assert [(r.scenario, r.trial, r.error) for r in errored] == [
            ("refund", 1, "agent raised TimeoutError: slow"), ("lookup", 1, "agent raised TimeoutError: slow")]


def test_unknown_identity_key_is_refused():
    with pytest.raises(InputError, match="identity: field modle: is not an identity field"):
        evaluate(CASES, good_agent, k=1, identity={"modle": "x"})


def test_with_a_spec_a_run_that_raised_is_still_graded_on_its_path():
    def agent(text, *, trial):
        return Trajectory([ToolCall(tool="refund", args={}, ok=True)], output=None)

    def check(out):
        raise ValueError("no output")

    result = evaluate([Case("r", input="x", check=check)], agent, k=1, spec=SPEC)
    checks = sorted((v.check, v.severity) for v in result.results[0].violations)
    assert checks == [("forbidden", "hard"), ("required", "hard"), ("run_error", "hard")]


def test_ledger_given_as_a_path_is_opened_and_closed(tmp_path):
    from fluke.ledger import open_ledger

    path = str(tmp_path / "runs.db")
    first = evaluate(CASES, good_agent, k=2, ledger=path, identity={"model": "m"})
    second = evaluate(CASES, good_agent, k=3, ledger=path, identity={"model": "m"})
    assert (first.added, second.added, second.resumed) == (4, 2, 4)
    with open_ledger(path) as ledger:
        assert sorted((r.scenario, r.trial) for r in ledger.runs()) == [
            ("lookup", 0), ("lookup", 1), ("lookup", 2), ("refund", 0), ("refund", 1), ("refund", 2)]
