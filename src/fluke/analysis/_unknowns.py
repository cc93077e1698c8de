"""One policy for runs whose outcome is unknown (``passed`` null), the same in every verb.

``"fail"`` (the default, as the harnesses count them): such a run is a trial that did not
pass. ``"exclude"``: it is left out, and the trials shrink. ``"failure"`` is accepted as
another spelling of ``"fail"`` (``fluke compare`` used it). Every result that counts outcomes
carries ``unknowns`` and ``unknown_policy`` in its JSON and prints :func:`unknown_note`.

>>> str(check_unknown("failure")), unknown_note(3, "exclude").plain()
('fail', '3 unknown outcomes left out (--unknown exclude)')
>>> unknown_note(0, "fail").plain()
'no unknown outcomes (one would be counted as a failure: --unknown fail)'
>>> apply_to_counts(5, 3, 1, "exclude")
(4, 3)
>>> policy = check_unknown("failure")
>>> policy is UnknownPolicy.FAIL, policy == "fail", f"--unknown {policy}", policy.apply(5, 3, 1)
(True, True, '--unknown fail', (5, 3))
"""

from __future__ import annotations

from ..policies import UNKNOWN_POLICIES, UnknownPolicy
from ._document import Line, note

__all__ = ["BOTH", "UNKNOWN_POLICIES", "UnknownPolicy", "apply_to_counts", "check_unknown", "closing_notes",
           "outcome_arrays", "unknown_fields", "unknown_note"]

#: What ``--unknown`` also takes where a verb shows both policies side by side (leaderboard, compare).
BOTH = "both"


def check_unknown(policy: UnknownPolicy | str, *, both: bool = False) -> UnknownPolicy | str:
    """The policy checked at the boundary of a verb (:meth:`UnknownPolicy.of`). With ``both``, the
    verb also takes ``"both"`` (each policy, side by side).

    >>> check_unknown("both", both=True)
    'both'
    >>> check_unknown("drop")
    Traceback (most recent call last):
    ...
    fluke.errors.UsageError: unknown='drop' must be 'fail' (count it as a failure, the default) or 'exclude' (leave
    it out)
    """
    if both and policy == BOTH:
        return BOTH
    return UnknownPolicy.of(policy)


def unknown_note(unknowns: int, policy: str, *, declared: str | None = None) -> Line:
    """The line every output prints: how many outcomes were unknown and what was done with them.

    ``declared`` names where the policy came from when it is not the ``--unknown`` option (a
    sealed rule's key, say).

    >>> unknown_note(2, "fail", declared="decision.unknown").plain()
    '2 unknown outcomes counted as failures (decision.unknown: fail)'
    """
    source = f"--unknown {policy}" if declared is None else f"{declared}: {policy}"
    if policy == BOTH:
        return note(f"{unknowns} unknown outcome{'' if unknowns == 1 else 's'} shown both ways: counted as "
                    f"failures, then left out ({source})")
    policy = UnknownPolicy.of(policy)
    if unknowns:
        return note(f"{policy.describe(unknowns)} ({source})")
    what = "left out" if policy.excludes else "counted as a failure"
    return note(f"no unknown outcomes (one would be {what}: {source})")


def closing_notes(conditional_on, unknowns: int | None = None, policy: str = "fail", *,
                  declared: str | None = None) -> list[Line]:
    """The lines a claim ends with: what it is conditional on, then, when it counted outcomes
    (``unknowns`` not None), :func:`unknown_note`. ``conditional_on`` is a phrase or a list of them
    (empty ones dropped), joined with "; " and closed with one full stop.

    >>> [n.plain() for n in closing_notes(["version 3f2a", "", "runs independent."], 2, "exclude")]
    ['Conditional on: version 3f2a; runs independent.', '2 unknown outcomes left out (--unknown exclude)']
    """
    parts = [conditional_on] if isinstance(conditional_on, str) else list(conditional_on)
    text = "; ".join(p.strip().rstrip(".") for p in parts if p and p.strip()) or "nothing yet"
    out = [note(f"Conditional on: {text}.")]
    if unknowns is not None:
        out.append(unknown_note(unknowns, policy, declared=declared))
    return out


def apply_to_counts(trials: int, passes: int, unknowns: int, policy: str) -> tuple[int, int]:
    """``(trials, passes)`` of a count row under the policy (the ledger's trials include unknowns)."""
    return check_unknown(policy).apply(trials, passes, unknowns)


def unknown_fields(unknowns: int, policy: str) -> dict:
    """The JSON keys every result that counts outcomes carries.

    >>> unknown_fields(2, "fail")
    {'unknowns': 2, 'unknown_policy': 'fail'}
    """
    return {"unknowns": int(unknowns), "unknown_policy": str(policy)}


def outcome_arrays(runs, unknown: UnknownPolicy | str = "fail"):
    """``(inputs, failed, order, unknowns)`` of an arm's runs for the fix check and consistency, under
    the policy: an unknown outcome is a failure (``"fail"``) or the run is left out (``"exclude"``).
    ``inputs`` are scenarios (with the condition), as :func:`fluke.comparison.outcome_arrays` makes them.

    >>> from fluke.record import Outcome, Run
    >>> runs = [Run(scenario="s", trial=t, outcome=Outcome(passed=p)) for t, p in enumerate([True, None])]
    >>> outcome_arrays(runs)[1].tolist(), outcome_arrays(runs, "exclude")[1].tolist(), outcome_arrays(runs)[3]
    ([False, True], [False], 1)
    """
    import numpy as np

    policy = UnknownPolicy.of(unknown)
    inputs, failed, order, unknowns = [], [], [], 0
    for run in runs:
        passed = run.outcome.passed
        unknowns += passed is None
        if not policy.keeps(passed):
            continue
        key = run.condition_key()
        inputs.append(f"{run.scenario}|{key}" if key else run.scenario)
        failed.append(not passed)
        order.append(run.trial)
    return (np.asarray(inputs, dtype=str), np.asarray(failed, dtype=bool), np.asarray(order, dtype=float),
            unknowns)
