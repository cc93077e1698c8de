"""The died_at rule: recorded failure step, else first hard violation, else last event; passes censored."""

from fluke.comparison import outcome_arrays, survival_data
from fluke.record import AgentMessage, Outcome, Run, ToolCall, UserMessage

EVENTS = [UserMessage(text="hi"), ToolCall(tool="lookup", ok=True), ToolCall(tool="refund", ok=False),
          AgentMessage(text="sorry")]


def _run(trial, passed, died_at=None):
    return Run(scenario="s", trial=trial, events=EVENTS, outcome=Outcome(passed=passed, died_at=died_at))


def test_died_at_rule_in_order_of_precedence():
    recorded = _run(0, False, died_at=2)
    graded = _run(1, False)
    plain = _run(2, False)
    passing = _run(3, True)
    unknown = _run(4, None)
    hard = {graded.hash: 1, recorded.hash: 3}      # a recorded died_at wins over a violation
    data = survival_data([recorded, graded, plain, passing, unknown], hard_index=hard)
    assert data.time.tolist() == [2, 1, 3, 3]
    assert data.died.tolist() == [True, True, True, False]
    assert data.label.tolist() == ["refund", "lookup", "agent", "agent"]
    assert data.unknown == 1
    assert data.died_from == {"died_at": 1, "hard violation": 1, "last event": 1, "censored": 1}
    # without a spec the graded run falls back to its last event
    assert survival_data([graded]).time.tolist() == [3]


def test_outcome_arrays_key_inputs_by_scenario_and_condition():
    runs = [Run(scenario="s", trial=1, condition={"noise": "high"}, outcome=Outcome(passed=False)),
            Run(scenario="s", trial=0, outcome=Outcome(passed=True)),
            Run(scenario="t", outcome=Outcome(passed=None))]
    inputs, failed, order = outcome_arrays(runs)
    assert inputs.tolist() == ["s|noise=high", "s"]
    assert failed.tolist() == [True, False] and order.tolist() == [1.0, 0.0]
