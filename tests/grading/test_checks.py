"""Every check: what fires, at which event, with which severity; and the overrides."""

from __future__ import annotations

import pytest

from fluke.grading import first_hard_index, grade_run, load_spec

from .build import agent, call, checks, run_of, user

TOOLS = ["lookup", "policy", "refund", "escalate", "search"]


def spec(**kw):
    return load_spec({"tools": TOOLS, "ground": False, **kw})


def test_unknown_tool_once_per_name_at_its_first_call():
    g = grade_run(run_of(call("lookup"), call("teleport"), call("teleport")), spec())
    assert checks(g) == [("unknown_tool", "hard", 1)]


def test_required_needs_a_successful_call_unless_the_spec_says_otherwise():
    r = run_of(call("lookup", ok=False, error="timeout"), call("policy"))
    g = grade_run(r, spec(required=["lookup", "policy"]))
    assert checks(g) == [("required", "hard", None)]
    assert "called 1 time, never successfully" in g.violations[0].message
    assert grade_run(r, spec(required=["lookup"], failed_calls_count=True)).violations == ()
    g = grade_run(run_of(call("policy")), spec(required=["lookup"]))
    assert "never called" in g.violations[0].message


def test_forbidden_is_hard_even_when_the_call_failed():
    g = grade_run(run_of(call("lookup"), call("refund", ok=False, error="denied")), spec(forbidden=["refund"]))
    assert checks(g) == [("forbidden", "hard", 1)]


def test_before_pairs():
    s = spec(before=[["lookup", "refund"]])
    assert grade_run(run_of(call("lookup"), call("refund")), s).violations == ()
    assert checks(grade_run(run_of(call("refund"), call("lookup"), call("refund")), s)) == [("before", "hard", 0)]
    assert checks(grade_run(run_of(user("hi"), call("refund")), s)) == [("before", "hard", 1)]
    # a failed lookup does not satisfy the precondition ...
    assert checks(grade_run(run_of(call("lookup", ok=False), call("refund")), s)) == [("before", "hard", 1)]
    # ... unless failed calls count; and b never called is no violation
    s2 = spec(before=[["lookup", "refund"]], failed_calls_count=True)
    assert grade_run(run_of(call("lookup", ok=False), call("refund")), s2).violations == ()
    assert grade_run(run_of(call("policy")), s).violations == ()


def test_max_steps_is_soft_at_the_first_call_over_budget_and_counts_agent_calls_only():
    r = run_of(user("x"), call("lookup"), call("policy"), call("search", requestor="user"), call("search"))
    g = grade_run(r, spec(max_steps=2))
    assert checks(g) == [("max_steps", "soft", 4)]
    assert "3 tool calls, more than the budget of 2" in g.violations[0].message
    assert grade_run(r, spec(max_steps=3)).violations == ()


def test_repeat_only_after_a_success():
    r = run_of(call("lookup", {"id": 1}, ok=False), call("lookup", {"id": 1}), call("lookup", {"id": 1}),
               call("lookup", {"id": 2}), call("lookup", {"id": 1}))
    g = grade_run(r, spec(no_repeat=True, failing_loop=None))
    assert checks(g) == [("repeat", "soft", 2), ("repeat", "soft", 4)]
    assert grade_run(r, spec(failing_loop=None)).violations == ()   # no_repeat is opt-in


def test_failing_loop_same_call_failing_n_times_in_a_row():
    fail = dict(ok=False, error="upstream timeout")
    r = run_of(*[call("search", {"q": "a"}, **fail)] * 2, agent("retrying"), call("search", {"q": "a"}, **fail),
               call("search", {"q": "a"}, **fail))
    assert checks(grade_run(r, spec())) == [("failing_loop", "soft", 3)]          # default N = 3, once per streak
    assert checks(grade_run(r, spec(failing_loop=4))) == [("failing_loop", "soft", 4)]
    assert grade_run(r, spec(failing_loop=None)).violations == ()
    broken = run_of(call("search", {"q": "a"}, **fail), call("search", {"q": "b"}, **fail),
                    call("search", {"q": "a"}, **fail), call("lookup"), call("search", {"q": "a"}, **fail))
    assert grade_run(broken, spec(failing_loop=2)).violations == ()


def test_argument_rules_allowed_values_and_patterns_on_nested_paths():
    s = spec(args={"refund": {"cabin": {"allowed": ["economy", "business"]},
                              "order.id": {"pattern": "ORD-[0-9]{5}"}}})
    ok = run_of(call("refund", {"cabin": "economy", "order": {"id": "ORD-00213"}}))
    assert grade_run(ok, s).violations == ()
    bad = run_of(call("refund", {"cabin": "first", "order": {"id": "ORD-213x"}}))
    g = grade_run(bad, s)
    assert checks(g) == [("args", "hard", 0), ("args", "hard", 0)]
    assert "refund.cabin='first' is not one of the allowed values" in g.violations[0].message
    assert grade_run(run_of(call("refund", {})), s).violations == ()   # absent argument: no rule applies


def test_secrets_are_found_and_never_printed():
    key = "AKIA" + "ABCDEFGHIJ234567"
    slack = "xoxb-" + "1234567890-abcdefghij"
    r = run_of(user("hi"), call("search", {"q": f"use {slack}"}, result=f"creds: {key}"),
               agent(f"here you go: {key}"))
    g = grade_run(r, spec())
    assert checks(g) == [("secret", "warn", 1), ("secret", "warn", 1), ("secret", "warn", 2)]
    messages = " ".join(v.message for v in g.violations)
    assert key not in messages and slack not in messages
    assert "AWS access key id in the result of search" in messages
    assert "Slack token in the arguments of search" in messages
    assert grade_run(r, spec(secrets=False)).violations == ()


def test_run_error_is_hard_and_redacted():
    g = grade_run(run_of(call("lookup"), error="crash with key AKIAABCDEFGHIJ234567"), spec())
    assert checks(g) == [("run_error", "hard", None)]
    assert "AKIAABCDEFGHIJ234567" not in g.violations[0].message and "[REDACTED:aws-key-id]" in g.violations[0].message


@pytest.mark.parametrize("check, severity", [("forbidden", "warn"), ("forbidden", "soft")])
def test_severity_override_changes_the_grade(check, severity):
    g = grade_run(run_of(call("refund")), spec(forbidden=["refund"], severity={check: severity}))
    assert checks(g) == [("forbidden", severity, 0)]
    assert g.hard is False and g.path_ok is False


def test_grade_fields_and_first_hard_index():
    r = run_of(user("x"), call("refund"), call("teleport"), call("policy"), passed=True)
    g = grade_run(r, spec(forbidden=["refund"], required=["lookup"], before=[["lookup", "policy"]]))
    assert g.run_hash == r.hash and g.scenario == "s" and g.output_ok is True
    assert g.hard and not g.path_ok
    assert [v.index for v in g.violations] == [1, 2, 3, None]     # sorted by event, unindexed last
    assert first_hard_index(g) == 1
    clean = grade_run(run_of(call("lookup"), passed=None), spec())
    assert clean.path_ok and not clean.hard and clean.output_ok is None and first_hard_index(clean) is None


def test_grade_round_trips_through_its_stored_body():
    from fluke.grading import RunGrade

    g = grade_run(run_of(call("refund"), call("refund"), call("refund")),
                  spec(forbidden=["refund"], max_steps=1, no_repeat=True))
    assert RunGrade.from_dict(g.to_dict()) == g
    assert RunGrade.from_dict(g.to_dict()).soft_checks == {"max_steps", "repeat"}


def test_every_secret_shape_is_found_in_a_result():
    # One example of each shape the check knows; each must be reported, once, never shown.
    examples = {
        "AWS access key id": "AKIA" + "ABCDEFGHIJ234567",
        "GitHub token": "ghp_" + "a1B2" * 9,
        "GitHub fine-grained token": "github_pat_" + "A1" * 30,
        "PyPI token": "pypi-AgEIcHlwaS5vcmc" + "x" * 20,
        "Slack token": "xoxb-" + "1234567890-abcdefghij",
        "OpenAI key": "sk-" + "a" * 24,
        "Google API key": "AIza" + "b" * 35,
        "private key block": "-----BEGIN RSA PRIVATE KEY-----",
        "bearer token": "Bearer " + "c" * 24,
    }
    for label, secret in examples.items():
        g = grade_run(run_of(call("search", {"q": "x"}, result=f"found: {secret} ok")), spec())
        assert [v.message for v in g.violations] == [f"possible {label} in the result of search (not shown)"], label
