"""What ``compare`` adds for a decision: cheaper and not worse (``margin``), and subgroups (``groups``).

Kept apart from :mod:`fluke.analysis._compare`, which calls these when asked. The margin reads
the comparison's own interval for B − A (the stratified test inverted, paired by scenario) and
streams both arms' runs once for the spend difference paired by scenario; the subgroups need
only the counts per scenario × condition cell that the comparison already has.

>>> from fluke.analysis._margin_subgroups import group_of
>>> group_of("group=rushed,lang=fr", "group"), group_of("lang=fr", "group"), group_of("lang=fr", "condition")
('rushed', '(none)', 'lang=fr')
"""

from __future__ import annotations

from typing import Any

from ..policies import UnknownPolicy


def group_of(condition: str, key: str) -> str:
    """The group a cell's condition key puts it in: the value of ``key``, or the whole key for ``"condition"``."""
    if key == "condition":
        return condition or "(none)"
    for pair in condition.split(","):
        k, _, v = pair.partition("=")
        if k == key:
            return v
    return "(none)"


def arm_cells(arm, unknown: UnknownPolicy | str) -> dict[tuple[str, str], tuple[int, int]]:
    """``{(scenario, condition): (passes, trials)}`` of an arm, from its counts or its streamed runs."""
    if arm.counted is not None:
        return arm.counted.pass_counts(unknown)[0]
    policy = UnknownPolicy.of(unknown)
    out: dict[tuple[str, str], list[int]] = {}
    for r in arm.runs:
        passed = r.outcome.passed
        if not policy.keeps(passed):
            continue
        cell = out.setdefault((r.scenario, r.condition_key()), [0, 0])
        cell[0] += passed is True
        cell[1] += 1
    return {k: (p, n) for k, (p, n) in out.items()}


def subgroups(arm_a, arm_b, key: str, *, unknown: str = "fail", alpha: float = 0.05, harm: float = 0.0):
    """B against A per group of cells (:func:`fluke.decisions.subgroup_contrasts`), cells both arms ran."""
    from ..decisions import subgroup_contrasts

    a, b = arm_cells(arm_a, unknown), arm_cells(arm_b, unknown)
    shared = sorted(set(a) & set(b))
    return subgroup_contrasts([group_of(c, key) for _, c in shared], [a[k][0] for k in shared],
                              [a[k][1] for k in shared], [b[k][0] for k in shared], [b[k][1] for k in shared],
                              alpha=alpha, harm=harm)


def margin_check(ledger, arm_a, arm_b, interval, margin: float, *, cost: Any = "usd", unknown: str = "fail",
                 scenario: str | None = None, condition: str | None = None, confidence_level: float = 0.95):
    """Not worse by ``margin`` points (from the comparison's interval) and cheaper (spend paired by scenario),
    with each arm's cost per success: ``(NonInferiority, (CostPerSuccess of A, of B))``."""
    from ..decisions import cost_per_success, not_worse, paired_cost_difference
    from ._spend import read_spend

    spent = [read_spend(ledger, list(arm.versions), cost=cost, unknown=unknown, scenario=scenario,
                        condition=condition) for arm in (arm_a, arm_b)]
    diff = paired_cost_difference(spent[0].scenario, spent[0].spend, spent[1].scenario, spent[1].spend,
                                  confidence_level=confidence_level)
    each = tuple(cost_per_success(s.spend, s.passed, s.scenario.astype(str), confidence_level=confidence_level)
                 for s in spent)
    return not_worse(interval, margin, cost=diff), each
