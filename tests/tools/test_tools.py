"""fluke.tools: every call recorded (request, arguments, version, response or exception, time,
state digests before and after), and the runner storing each run's tool log beside it."""

from __future__ import annotations

import hashlib
import json

import pytest

from fluke.errors import InputError, UsageError
from fluke.runner import Trajectory, evaluate
from fluke.tools import Failure, ToolFailure, Tools


def _sha(value):   # an independent canonical digest: sorted keys, no whitespace
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Counter:
    """A declared simulator: counts calls in its state, fails the second one."""

    version = "counter/2"

    def __init__(self, tape):
        self.tape = tape

    def apply(self, request, state):
        after = {**state, "n": state["n"] + 1}
        if state["n"] == 1:
            return Failure("TimeoutError: slow"), after
        return {"echo": request.args["x"]}, after


def test_each_call_records_request_version_response_or_exception_time_and_state_digests():
    def flaky(x):
        raise ValueError(f"no {x}")

    box = Tools({"flaky": flaky}, simulator=Counter, state={"n": 0}, versions={"flaky": "0.9"})
    session = box.session(seed=1)
    assert session.call("count", x="a") == {"echo": "a"}
    with pytest.raises(ToolFailure, match="TimeoutError: slow"):
        session.call("count", x="b")
    with pytest.raises(ToolFailure, match="ValueError: no c"):
        session.call("flaky", x="c")
    r0, r1, r2 = session.records
    assert [(r.step, r.tool, r.args, r.version, r.served) for r in session.records] == [
        (0, "count", {"x": "a"}, "counter/2", "simulator"), (1, "count", {"x": "b"}, "counter/2", "simulator"),
        (2, "flaky", {"x": "c"}, "0.9", "function")]
    assert (r0.response, r0.error, r1.response, r1.error, r2.error) == (
        {"echo": "a"}, None, None, "TimeoutError: slow", "ValueError: no c")
    assert (r0.state_before, r0.state_after) == (_sha({"n": 0}), _sha({"n": 1}))
    assert (r1.state_before, r1.state_after, r2.state_before, r2.state_after) == (
        _sha({"n": 1}), _sha({"n": 2}), _sha({"n": 2}), _sha({"n": 2}))   # a function leaves the state as it was
    assert r0.request == _sha({"args": {"x": "a"}, "tool": "count"})
    assert all(r.seconds >= 0 for r in session.records)
    assert [(e.tool, e.ok, e.error) for e in session.events()] == [
        ("count", True, None), ("count", False, "TimeoutError: slow"), ("flaky", False, "ValueError: no c")]


def test_an_undeclared_tool_is_refused_by_name():
    session = Tools({"add": lambda a, b: a + b}).session()
    with pytest.raises(InputError, match="'sub' is not a declared tool"):
        session.call("sub", a=1, b=2)


def agent(text, *, rng, tools):
    reply = tools.call("echo", x=text)
    return Trajectory(tools.events(), output=reply["echo"], passed=bool(rng.random() < 2))


def test_the_runner_stores_each_runs_tool_log_in_a_real_ledger(tmp_path):
    from fluke.ledger import open_ledger
    from fluke.tools import TOOL_LOG

    with open_ledger(str(tmp_path / "t.db")) as ledger:
        result = evaluate([{"scenario": "s", "input": "hi"}], agent, k=3, ledger=ledger, identity={"model": "m"},
                          tools=Tools(simulator=Counter, state={"n": 0}))
        docs = {d.body["run"]: d.body for d in ledger.documents(TOOL_LOG)}
        stored = list(ledger.runs())
    assert sorted(docs) == sorted(r.hash for r in stored) and len(stored) == 3
    for r in result.results:
        log = docs[r.run.hash]
        assert log == {"run": r.run.hash, **r.tool_log} and log["input"] == "hi" and log["seed"] == r.run.seed
        assert [c["response"] for c in log["calls"]] == [{"echo": "hi"}]
        assert [e.tool for e in r.run.events] == ["echo"]


def agent_that_raises(text, *, tools):
    tools.call("echo", x=text)
    raise RuntimeError("the model timed out")


@pytest.mark.parametrize("executor", ["local", "processes"])
def test_an_agent_that_raises_is_stored_as_errored_with_the_calls_it_made(tmp_path, executor):
    from fluke.ledger import open_ledger
    from fluke.tools import TOOL_LOG

    with open_ledger(str(tmp_path / "t.db")) as ledger:
        evaluate([{"scenario": "s", "input": "hi"}], agent_that_raises, k=2, ledger=ledger, identity={"model": "m"},
                 tools=Tools(simulator=Counter, state={"n": 0}), executor=executor, workers=2)
        docs = {d.body["run"]: d.body for d in ledger.documents(TOOL_LOG)}
        stored = list(ledger.runs())
    assert len(stored) == 2 and all(r.error == "agent raised RuntimeError: the model timed out" for r in stored)
    assert all(r.outcome.label == "error" and r.outcome.passed is None for r in stored)
    assert sorted(docs) == sorted(r.hash for r in stored)
    for r in stored:
        log = docs[r.hash]
        assert log["input"] == "hi" and log["seed"] == r.seed
        assert [(c["tool"], c["response"]) for c in log["calls"]] == [("echo", {"echo": "hi"})]


def test_an_agent_taking_tools_without_a_declaration_is_refused_before_it_runs():
    with pytest.raises(UsageError, match="no tools are declared"):
        evaluate([{"scenario": "s", "input": "hi"}], agent, k=1)
    with pytest.raises(UsageError, match="takes no `tools` keyword"):
        evaluate([{"scenario": "s", "input": "hi"}], lambda x: ([], x), k=1, tools=Tools())


def test_an_agent_taking_any_keyword_runs_without_tools_and_gets_them_when_declared():
    def loose(text, **kwargs):
        tools = kwargs.get("tools")
        return Trajectory([], output=text if tools is None else tools.call("echo", x=text)["echo"] + "!")

    plain = evaluate([{"scenario": "s", "input": "hi"}], loose, k=1)
    given = evaluate([{"scenario": "s", "input": "hi"}], loose, k=1, tools=Tools(simulator=Counter, state={"n": 0}))
    assert plain.results[0].tool_log is None and plain.results[0].run.error is None
    assert [c["response"] for c in given.results[0].tool_log["calls"]] == [{"echo": "hi"}]
