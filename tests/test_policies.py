"""The unknown-outcome policy is one type with one list of names, read the same way by every layer."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from fluke.errors import UsageError
from fluke.policies import UNKNOWN_POLICIES, UnknownPolicy
from fluke.record import Outcome, Run

SRC = Path(__file__).resolve().parents[1] / "src" / "fluke"


def test_every_package_names_the_one_list_and_the_one_type():
    import fluke.analysis as analysis
    import fluke.comparison as comparison
    import fluke.inference as inference

    assert UNKNOWN_POLICIES == ("fail", "exclude")
    assert analysis.UNKNOWN_POLICIES is inference.UNKNOWN_POLICIES is comparison.UNKNOWN_POLICIES is UNKNOWN_POLICIES
    assert analysis.UnknownPolicy is inference.UnknownPolicy is UnknownPolicy


def test_the_cli_offers_the_policies_and_their_one_alias():
    from fluke.cli import group

    compare = group.get_command(None, "compare")
    summary = group.get_command(None, "summary")
    choices = {c: [p for p in c.params if p.name == "unknown"][0].type.choices for c in (compare, summary)}
    assert list(choices[summary]) == ["fail", "exclude", "failure"]
    assert list(choices[compare]) == ["fail", "exclude", "failure", "both"]


@pytest.mark.parametrize("spelling, policy", [("fail", UnknownPolicy.FAIL), ("failure", UnknownPolicy.FAIL),
                                              ("exclude", UnknownPolicy.EXCLUDE),
                                              (UnknownPolicy.EXCLUDE, UnknownPolicy.EXCLUDE)])
def test_each_spelling_reads_as_its_policy(spelling, policy):
    assert UnknownPolicy.of(spelling) is policy


@pytest.mark.parametrize("bad", ["success", "drop", "", None, 1])
def test_anything_else_is_a_usage_error_naming_the_argument(bad):
    with pytest.raises(UsageError) as caught:
        UnknownPolicy.of(bad, argument="unknown_policy")
    assert caught.value.argument == "unknown_policy" and f"unknown_policy={bad!r}" in str(caught.value)


def test_apply_on_numbers_and_arrays_agrees_with_counting_runs():
    rng = np.random.default_rng(7)
    outcomes = rng.choice([True, False, None], size=(40, 12), p=[0.5, 0.3, 0.2])
    trials = np.full(40, 12)
    passes = (outcomes == True).sum(axis=1)          # noqa: E712 (elementwise on an object array)
    unknowns = np.array([sum(o is None for o in row) for row in outcomes])
    for policy in UnknownPolicy:
        kept = np.array([sum(policy.keeps(o) for o in row) for row in outcomes])
        got_trials, got_passes = policy.apply(trials, passes, unknowns)
        assert got_trials.tolist() == kept.tolist() and got_passes is passes
        assert [policy.apply(int(t), int(k), int(u))[0] for t, k, u in zip(trials, passes, unknowns, strict=True)] \
            == kept.tolist()


def test_comparison_counts_under_the_old_spelling_as_under_the_new():
    """``"failure"`` (compare's old name) once printed as "left out" in the report's phrase."""
    from fluke.comparison import compare_pass_counts, pass_counts

    runs = [Run(scenario=f"s{i % 4}", trial=i, outcome=Outcome(passed=[True, False, None][i % 3])) for i in range(24)]
    old, new = pass_counts(runs, unknown_policy="failure"), pass_counts(runs, unknown_policy="fail")
    assert old == new and new[1] == 8
    trials = sum(n for _, n in new[0].values())
    assert trials == 24                                   # the 8 unknowns stay, as failures
    found = compare_pass_counts(new[0], new[0], unknown=(8, 8), unknown_policy="failure")
    assert found.unknown_policy is UnknownPolicy.FAIL
    assert "16 unknown outcomes counted as failures" in found.conditional_on()
    excluded = pass_counts(runs, unknown_policy="exclude")
    assert sum(n for _, n in excluded[0].values()) == 16


def test_no_layer_spells_the_exclude_rule_out_again():
    """Every ``x == "exclude"`` test of a policy went through the type (``excludes``, ``keeps``, ``apply``)."""
    hits = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and any(
                    isinstance(c, ast.Constant) and c.value == "exclude" for c in [node.left, *node.comparators]):
                hits.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert hits == []


def test_the_inconclusive_policy_is_one_type_for_tests_and_gates():
    from fluke.analysis import parse_gate_rule
    from fluke.errors import SpecError
    from fluke.policies import INCONCLUSIVE_POLICIES, InconclusivePolicy
    from fluke.testing._expect import check_inconclusive

    assert INCONCLUSIVE_POLICIES == ("warn", "fail", "pass")
    assert [p.lets_pass for p in InconclusivePolicy] == [True, False, True]
    assert check_inconclusive("fail") is InconclusivePolicy.FAIL
    with pytest.raises(UsageError) as caught:
        check_inconclusive("ignore", where="fluke_on_inconclusive")
    assert caught.value.argument == "fluke_on_inconclusive"
    for name in INCONCLUSIVE_POLICIES:
        assert parse_gate_rule(f"gate: true\nspec: s.yaml\non_inconclusive: {name}\n")["on_inconclusive"] == name
    with pytest.raises(SpecError, match="on_inconclusive"):
        parse_gate_rule("gate: true\nspec: s.yaml\non_inconclusive: maybe\n")
