"""The died_at rule: recorded failure step, else first hard violation, else the failed call the run
ends on; any other failed run has no known step (left out, counted). Passes are censored."""

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
    rejected = Run(scenario="s", trial=5, events=EVENTS[:3], outcome=Outcome(passed=False))
    hard = {graded.hash: 1, recorded.hash: 3}      # a recorded died_at wins over a violation
    data = survival_data([recorded, graded, plain, passing, unknown, rejected], hard_index=hard)
    # the plain failure ends on an agent message: no known failure step, so it is left out
    assert data.time.tolist() == [2, 1, 3, 2]
    assert data.died.tolist() == [True, True, False, True]
    assert data.label.tolist() == ["refund", "lookup", "agent", "refund"]
    assert data.unknown == 1 and data.unknown_step == 1
    assert data.died_from == {"died_at": 1, "hard violation": 1, "failed call": 1, "unknown step": 1,
                              "censored": 1}
    # without a spec the graded run has no known step either
    assert survival_data([graded]).time.tolist() == [] and survival_data([graded]).unknown_step == 1


def test_the_old_last_event_rule_is_still_there_on_request():
    plain, passing = _run(2, False), _run(3, True)
    data = survival_data([plain, passing], unknown_step="last event")
    assert data.time.tolist() == [3, 3] and data.died.tolist() == [True, False]
    assert data.died_from == {"died_at": 0, "hard violation": 0, "last event": 1, "censored": 1}


def test_outcome_arrays_key_inputs_by_scenario_and_condition():
    runs = [Run(scenario="s", trial=1, condition={"noise": "high"}, outcome=Outcome(passed=False)),
            Run(scenario="s", trial=0, outcome=Outcome(passed=True)),
            Run(scenario="t", outcome=Outcome(passed=None))]
    inputs, failed, order = outcome_arrays(runs)
    assert inputs.tolist() == ["s|noise=high", "s"]
    assert failed.tolist() == [True, False] and order.tolist() == [1.0, 0.0]
