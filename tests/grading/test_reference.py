"""Reference checks: modes, turn-aware order, optimal pairing (against a brute-force oracle),
matchers, reasons, validation, and how reference violations join the gate and the luck rate."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

from fluke.errors import SpecError
from fluke.grading import RunGrade, evaluate_gate, grade_run, load_spec, luck_rate, pair_ordered, pair_unordered
from fluke.record import GoldCall, Outcome, Run, ToolCall

from .build import call, checks, run_of, user

QUIET = {"ground": False, "secrets": False}


def spec(reference, mode="superset", **more):
    return load_spec({**QUIET, "reference": reference, "reference_mode": mode, **more})


def ref(*calls):
    return [{"tool": t, "args": a} for t, a in calls]


def timed(tool, args, t, ok=True):
    return ToolCall(tool=tool, args=args, ok=ok, t_start=t)


A, B, C = ("a", {"x": 1}), ("b", {"y": 2}), ("c", {})


# -- modes -------------------------------------------------------------------------------

@pytest.mark.parametrize("mode, made, bad", [
    ("superset", ["a", "b"], []), ("superset", ["b", "a", "c"], []), ("superset", ["a"], ["reference"]),
    ("subset", ["a"], []), ("subset", ["a", "c"], ["reference_extra"]), ("subset", [], []),
    ("unordered", ["b", "a"], []), ("unordered", ["a", "b", "c"], ["reference_extra"]),
    ("unordered", ["a"], ["reference"]),
    ("in_order", ["a", "c", "b"], []), ("in_order", ["b", "a"], ["reference_order"]),
    ("strict", ["a", "b"], []), ("strict", ["a", "c", "b"], ["reference_extra"]),
    ("strict", ["b", "a"], ["reference_order"]),
])
def test_modes(mode, made, bad):
    args = {"a": A[1], "b": B[1], "c": C[1]}
    run = run_of(*[call(t, args[t]) for t in made])
    got = [v.check for v in grade_run(run, spec(ref(A, B), mode)).violations]
    assert got == bad


def test_precision_recall_and_a_score_that_charges_both():
    run = run_of(call("a", {"x": 1}), call("c"), call("c", {"z": 1}), call("c", {"z": 2}))
    r = grade_run(run, spec(ref(A, B))).reference
    assert (r.expected, r.made, r.matched) == (2, 4, 1)
    assert (r.precision, r.recall, r.score) == (0.25, 0.5, pytest.approx(2 * 1 / 6))
    empty = grade_run(run_of(), spec(ref(A))).reference
    assert (empty.precision, empty.recall, empty.score) == (None, 0.0, 0.0)


# -- turns: parallel calls ---------------------------------------------------------------

def test_one_expected_turn_may_be_made_over_two_turns():
    parallel = spec([[{"tool": "a", "args": {"x": 1}}, {"tool": "b", "args": {"y": 2}}]], "strict")
    split = run_of(timed("b", {"y": 2}, 1.0), timed("a", {"x": 1}, 2.0))
    assert checks(grade_run(split, parallel)) == []


def test_calls_of_one_made_turn_are_unordered_but_turns_are_ordered():
    s = spec(ref(A, B), "strict")
    same_turn = run_of(timed("b", {"y": 2}, 5.0), timed("a", {"x": 1}, 5.0))
    assert checks(grade_run(same_turn, s)) == []
    two_turns = run_of(timed("b", {"y": 2}, 5.0), timed("a", {"x": 1}, 6.0))
    assert [v.check for v in grade_run(two_turns, s).violations] == ["reference_order"]
    # without start times nothing says the calls were parallel: each is its own turn
    untimed = run_of(call("b", {"y": 2}), call("a", {"x": 1}))
    assert [v.check for v in grade_run(untimed, s).violations] == ["reference_order"]


# -- optimal pairing against brute force ---------------------------------------------------

def _brute_unordered(edges, n_made):
    best = 0
    es = list(edges)
    for perm in itertools.permutations(range(n_made), min(len(es), n_made)):
        best = max(best, sum(perm[i] in edges[e] for i, e in enumerate(es[:len(perm)])))
    if len(es) > n_made:   # more expected than made: try every subset of expected too
        for chosen in itertools.combinations(es, n_made):
            for perm in itertools.permutations(range(n_made)):
                best = max(best, sum(perm[i] in edges[e] for i, e in enumerate(chosen)))
    return best


def _brute_ordered(group_of, turn_of, edges):
    """Largest set of pairs, each expected and made call used once, with no pair crossing."""
    pairs = [(e, m) for e in edges for m in edges[e]]
    best = 0
    for r in range(len(pairs), 0, -1):
        if r <= best:
            break
        for subset in itertools.combinations(pairs, r):
            es, ms = [p[0] for p in subset], [p[1] for p in subset]
            if len(set(es)) < r or len(set(ms)) < r:
                continue
            if all(not (group_of[e1] < group_of[e2] and turn_of[m1] > turn_of[m2])
                   for (e1, m1), (e2, m2) in itertools.permutations(subset, 2)):
                best = r
                break
    return best


@pytest.mark.parametrize("seed", range(60))
def test_pairing_is_optimal_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n_e, n_m = int(rng.integers(1, 5)), int(rng.integers(1, 6))
    edges = {e: sorted({int(m) for m in rng.choice(n_m, size=int(rng.integers(0, n_m + 1)))})
             for e in range(n_e)}
    got = pair_unordered(edges, {e: "k" for e in edges})
    assert len({e for e, _ in got}) == len({m for _, m in got}) == len(got)
    assert all(m in edges[e] for e, m in got)
    assert len(got) == _brute_unordered(edges, n_m)

    group_of = sorted(int(g) for g in rng.integers(0, 3, size=n_e))
    turn_of = sorted(int(t) for t in rng.integers(0, 4, size=n_m))
    if seed % 3 == 0:    # one call per group and per turn: the plain longest-common-subsequence path
        group_of, turn_of = list(range(n_e)), list(range(n_m))
    groups = [[e for e in range(n_e) if group_of[e] == g] for g in sorted(set(group_of))]
    turns = [[m for m in range(n_m) if turn_of[m] == t] for t in sorted(set(turn_of))]
    got = pair_ordered(groups, turns, edges)
    assert all(m in edges[e] for e, m in got)
    assert not any(group_of[e1] < group_of[e2] and turn_of[m1] > turn_of[m2]
                   for (e1, m1), (e2, m2) in itertools.permutations(got, 2))
    assert len(got) == _brute_ordered(group_of, turn_of, edges)


def test_repeated_calls_paired_optimally_not_first_fit():
    # the first expected call also fits the made call the second needs: first fit misses one
    s = spec([{"tool": "get", "args": {"tags": ["a"]}}, {"tool": "get", "args": {"tags": ["a", "b"]}}],
             "unordered", match={"get": {"tags": "superset"}})
    run = run_of(call("get", {"tags": ["a", "b"]}), call("get", {"tags": ["a"]}))
    g = grade_run(run, s)
    assert checks(g) == [] and g.reference.pairs == ((0, 1), (1, 0))
    ordered = spec([{"tool": "get", "args": {"tags": ["a"]}}, {"tool": "get", "args": {"tags": ["a", "b"]}}],
                   "in_order", match={"get": {"tags": "superset"}})
    # in order, only one of the two can be kept: the second expected call needs the first made one
    assert grade_run(run, ordered).reference.matched == 1


# -- failed calls ----------------------------------------------------------------------------

def test_a_failed_call_does_not_satisfy_unless_the_spec_says_so():
    run = run_of(call("cancel", {"id": "X1"}, ok=False, result="Error: no such reservation"))
    s = spec(ref(("cancel", {"id": "X1"})))
    [v] = grade_run(run, s).violations
    assert (v.check, v.severity, v.index) == ("reference", "hard", 0)
    assert v.message == "expected `cancel(id='X1')`, got it at event 0 but the call failed"
    lenient = spec(ref(("cancel", {"id": "X1"})), reference_failed_ok=True)
    assert checks(grade_run(run, lenient)) == []


# -- matchers ---------------------------------------------------------------------------------

def _fn_same_first_letter(expected, made):
    return str(expected)[:1] == str(made)[:1]


@pytest.mark.parametrize("matcher, expected, made, ok", [
    ("exact", 1, 1.0, True), ("exact", True, 1, False), ("exact", "A", "a", False),
    ("case_insensitive", "ZFA04Y", "zfa04y", True), ("case_insensitive", ["Ab"], ["aB"], True),
    ({"tolerance": 0.01}, 10.0, 10.005, True), ({"tolerance": 0.01}, 10.0, 10.02, False),
    ({"regex": "[A-Z0-9]{6}"}, "ignored", "ZFA04Y", True), ({"regex": "[A-Z0-9]{6}"}, "x", "zfa04y", False),
    ("set_equal", [1, 2, 2], [2, 1], True), ("set_equal", [1, 2], [1, 3], False),
    ("subset", {"a": 1, "b": 2}, {"a": 1}, True), ("subset", {"a": 1}, {"a": 1, "b": 2}, False),
    ("superset", {"a": 1}, {"a": 1, "b": 2}, True), ("superset", [1, 2], [2, 3], False),
    ("ignore", "x", {"anything": []}, True),
    ({"callable": f"{__name__}:_fn_same_first_letter"}, "apple", "avocado", True),
    ({"callable": f"{__name__}:_fn_same_first_letter"}, "apple", "banana", False),
])
def test_each_matcher(matcher, expected, made, ok):
    s = spec(ref(("t", {"v": expected})), match={"t": {"v": matcher}})
    assert grade_run(run_of(call("t", {"v": made})), s).reference.complete is ok


def test_dot_paths_reach_nested_arguments_and_every_list_element():
    expected = {"flights": [{"number": "HAT1", "date": "2024-05-20"}, {"number": "HAT2", "date": "2024-05-21"}]}
    made = {"flights": [{"number": "hat1", "date": "2024-05-20"}, {"number": "hat2", "date": "2024-05-21"}]}
    run = run_of(call("book", made))
    assert grade_run(
        run, spec(ref(("book", expected)), match={"book": {"flights.*.number": "case_insensitive"}})
    ).reference.complete
    only_first = spec(ref(("book", expected)), match={"book": {"flights.0.number": "case_insensitive"}})
    [v] = grade_run(run, only_first).violations
    assert "got `flights.1.number='hat2'`" in v.message


def test_a_callable_from_the_spec_module(tmp_path):
    (tmp_path / "gold.py").write_text("def near(expected, made):\n    return abs(expected - made) < 3\n")
    (tmp_path / "gold.yaml").write_text("ground: false\nreference:\n  - {tool: pay, args: {amount: 100}}\n"
                                        "match:\n  pay:\n    amount: {callable: near}\n")
    s = load_spec(tmp_path / "gold.yaml")
    assert grade_run(run_of(call("pay", {"amount": 102})), s).reference.complete
    assert not grade_run(run_of(call("pay", {"amount": 104})), s).reference.complete
    (tmp_path / "other.yaml").write_text((tmp_path / "gold.yaml").read_text().replace("near", "far"))
    with pytest.raises(SpecError, match=r"match.pay.amount.callable: cannot load 'far'"):
        load_spec(tmp_path / "other.yaml")


def test_a_function_in_a_dict_spec():
    s = load_spec({**QUIET, "reference": ref(("t", {"v": "apple"})),
                   "match": {"t": {"v": _fn_same_first_letter}}})
    assert grade_run(run_of(call("t", {"v": "avocado"})), s).reference.complete
    assert s.body["match"]["t"]["v"] == {"callable": f"{__name__}:_fn_same_first_letter"}


# -- reasons ------------------------------------------------------------------------------------

def test_the_message_names_expected_and_got_at_the_event():
    run = run_of(user("change ZFA04Y"), call("get_reservation", {"reservation_id": "ZFA04Y"}),
                 call("update_reservation", {"reservation_id": "zfa04y", "cabin": "economy"}))
    s = spec(ref(("update_reservation", {"reservation_id": "ZFA04Y", "cabin": "economy"})))
    [v] = grade_run(run, s).violations
    assert (v.check, v.index) == ("reference", 2)
    assert v.message == ("expected `update_reservation(reservation_id='ZFA04Y', cabin='economy')`, "
                         "got `reservation_id='zfa04y'` at event 2")
    never = grade_run(run_of(call("x")), spec(ref(("cancel", {"id": "Q"})))).violations[0]
    assert (never.index, never.message) == (None, "expected `cancel(id='Q')`, never called")


def test_a_secret_in_an_expected_argument_is_never_shown():
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    [v] = grade_run(run_of(), spec(ref(("login", {"key": key})))).violations
    assert key not in v.message and "REDACTED" in v.message


# -- gate and luck ------------------------------------------------------------------------------

def test_a_green_run_that_skipped_a_gold_action_is_lucky_and_fails_the_gate():
    gold = [GoldCall(tool="cancel", args={"id": "X1"})]
    skipped = Run(scenario="c", events=[ToolCall(tool="get", args={"id": "X1"}, ok=True)],
                  outcome=Outcome(passed=True), gold=gold)
    made = Run(scenario="c", trial=1, events=[ToolCall(tool="cancel", args={"id": "X1"}, ok=True)],
               outcome=Outcome(passed=True), gold=gold)
    s = load_spec({**QUIET, "reference": "gold"})
    grades = [grade_run(skipped, s), grade_run(made, s)]
    assert [g.lucky for g in grades] == [True, False]
    assert luck_rate(grades).pooled.lucky == 1 and not evaluate_gate(grades).passed
    soft = load_spec({**QUIET, "reference": "gold", "severity": {"reference": "soft"}})
    assert evaluate_gate([grade_run(skipped, soft), grade_run(made, soft)]).passed   # 1 of 2 is no majority


def test_gold_on_a_run_without_gold_is_undefined_with_a_reason():
    g = grade_run(run_of(call("a")), load_spec({**QUIET, "reference": "gold"}))
    assert g.violations == () and g.reference.complete is None
    assert "no gold actions" in g.reference.reason


def test_the_grade_body_round_trips_with_its_reference():
    g = grade_run(run_of(call("a", {"x": 1})), spec(ref(A, B)))
    back = RunGrade.from_dict(json.loads(json.dumps(g.to_dict())))
    assert back.reference == g.reference and back.violations == g.violations
    assert "reference" not in grade_run(run_of(), load_spec(QUIET)).to_dict()


# -- validation -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "body, message",
    [
        (
            {"tools": ["cancel"], "reference": ref(("cancle", {}))},
            "reference.0.tool: tool 'cancle' is not in tools (did you mean 'cancel'?)",
        ),
        (
            {"reference": ref(("cancel", {"reservation_id": "X"})), "match": {"cancel": {"reservaton_id": "exact"}}},
            "no expected cancel call has argument 'reservaton_id' (did you mean 'reservation_id'?)",
        ),
        (
            {"reference": ref(("cancel", {})), "match": {"cancl": {}}},
            "no expected call is to 'cancl' (did you mean 'cancel'?)",
        ),
        (
            {"reference": ref(("t", {"v": 1})), "match": {"t": {"v": "case-insensitive"}}},
            "unknown matcher 'case-insensitive' (did you mean 'case_insensitive'?)",
        ),
        ({"reference": ref(("t", {"v": 1})), "match": {"t": {"v": {"regex": "("}}}}, "not a valid regular expression"),
        ({"reference": "gold", "reference_mode": "ordered"}, "field reference_mode"),
        ({"reference_mode": "strict"}, "given without a reference"),
        ({"reference": [[]]}, "an expected turn with no calls"),
        ({"reference": "golden"}, "field reference"),
        (
            {"reference": ref(("think", {})), "reference_ignore": ["think"]},
            "reference.0.tool: 'think' is in reference_ignore, so no call could satisfy it",
        ),
    ],
)
def test_validation_before_any_run(body, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        load_spec(body)


def test_a_spec_without_reference_keeps_its_digest():
    # the digest of this spec before the reference keys existed (computed on the parent commit)
    s = load_spec({"tools": ["lookup", "refund"], "required": ["lookup"]})
    assert "reference" not in s.body and "match" not in s.body
    assert s.digest == "e997d73f8bdc67c7f9bb62102344efd94436dbcdf1822b960f13dfbaacd29692"


def test_ignored_tools_and_the_simulated_users_calls():
    run = run_of(call("think", {"t": "hm"}), call("a", {"x": 1}),
                 call("toggle_wifi", {}, requestor="user"))
    s = spec(ref(A), "strict", reference_ignore=["think"])
    g = grade_run(run, s)
    assert checks(g) == [] and g.reference.made == 1       # think skipped; the user's call not the agent's
    assert [v.check for v in grade_run(run, spec(ref(A), "strict")).violations] == ["reference_extra"]
    wants_user = spec([{"tool": "toggle_wifi", "requestor": "user"}, {"tool": "a", "args": {"x": 1}}],
                      "unordered", reference_ignore=["think"])
    g = grade_run(run, wants_user)
    assert checks(g) == [] and g.reference.made == 2
    agent_did_it = run_of(call("toggle_wifi", {}), call("a", {"x": 1}))
    assert [v.check for v in grade_run(agent_did_it, wants_user).violations] == ["reference_extra", "reference"]


def test_extra_calls_are_redacted_each_and_keep_their_own_text():
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    run = run_of(call("a", {"x": 1}), call("login", {"key": key}), call("note", {"text": "line one\nline two"}))
    extra = [v for v in grade_run(run, spec(ref(A), "strict")).violations]
    assert [(v.check, v.index) for v in extra] == [("reference_extra", 1), ("reference_extra", 2)]
    assert key not in extra[0].message and "REDACTED" in extra[0].message
    assert extra[1].message.startswith("`note(text='line one\\nline two')` at event 2")
