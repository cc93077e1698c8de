"""The judge as a declared, hashed object; blinded views; the fake and callable judges."""

import pytest

from fluke.errors import InputError
from fluke.judging import CallableJudge, JudgeConfig, blind_view, judge_runs, load_judge
from fluke.record import AgentMessage, Identity, Outcome, Run, ToolCall, UserMessage

BASE = dict(model="gpt-4o-mini", prompt="Did the agent resolve the request? PASS or FAIL.", rubric="refund = pass")


@pytest.mark.parametrize("change", [{"prompt": BASE["prompt"] + " "}, {"rubric": "refund=pass"},
                                    {"references": ["policy.md"]}, {"temperature": 0.1}, {"replicates": 3},
                                    {"aggregation": "all"}, {"tie": "unknown"}, {"model": "gpt-4o"},
                                    {"endpoint": "python"}, {"target": {"url": "http://127.0.0.1:1/v1"}}])
def test_every_field_that_could_change_a_verdict_changes_the_digest(change):
    a = JudgeConfig(**BASE)
    b = JudgeConfig(**{**BASE, **change})
    assert a.digest != b.digest
    ident = Identity(model="agent")
    assert a.judged(ident).version != b.judged(ident).version


def test_a_copy_with_one_character_more_is_another_judge():
    a = JudgeConfig(**BASE)
    first = a.digest
    b = a.model_copy(update={"prompt": a.prompt + "."})
    assert b.digest != first and a.digest == first
    ident = Identity(model="agent")
    _ = ident.version
    assert a.judged(ident).version != ident.version != b.judged(ident).version


def test_the_same_judge_declared_twice_has_one_digest():
    assert JudgeConfig(**BASE).digest == load_judge(dict(BASE)).digest


def test_a_bad_judge_file_names_the_file_and_field(tmp_path):
    path = tmp_path / "judge.yaml"
    path.write_text("model: m\nprompt: p\nreplicates: 0\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_judge(str(path))
    assert str(path) in str(err.value) and "field replicates" in str(err.value)


def test_the_judge_sees_no_policy_label():
    run = Run(scenario="refund/1", condition={"arm": "treatment-x"}, tags=["beta-cohort"],
              identity=Identity(model="claude-sonnet", policy="strict-policy"),
              events=[UserMessage(text="hi"), AgentMessage(text="I am claude-sonnet on strict-policy", agent="bot-a"),
                      ToolCall(tool="refund", args={"note": "treatment-x"}, ok=True, t_start=1.0)],
              outcome=Outcome(passed=True))
    view = blind_view(run)
    text = str(view)
    for secret in ("claude-sonnet", "strict-policy", "treatment-x", "beta-cohort", "bot-a", "passed", "t_start"):
        assert secret not in text
    assert view["transcript"][2]["tool"] == "refund" and view["transcript"][1]["text"].count("[hidden]") == 2


def test_a_python_callable_judges_k_times_and_the_tie_rule_decides():
    runs = [Run(scenario=f"s{i}", events=[AgentMessage(text="refund sent" if i % 2 else "no")]) for i in range(4)]
    calls = []

    def label(view):
        calls.append(view["run"])
        return len(calls) % 2 == 0 or "refund" in str(view["transcript"])   # flips on the "no" runs

    config = JudgeConfig(model="rule", prompt="p", endpoint="python", replicates=2, tie="unknown")
    result = judge_runs(runs, config, CallableJudge(label))
    assert len(calls) == 8
    assert [j.label for j in result.judgments] == [None, True, None, True]   # 1 of 2 on the "no" runs: a tie
    judged = result.judged_runs()
    assert all(r.identity.grader["judge"] == config.digest for r in judged)
    assert {r.identity.version for r in judged} != {r.identity.version for r in runs}
