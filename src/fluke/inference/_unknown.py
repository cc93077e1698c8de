"""Unknown outcomes (``passed: null``: a crashed harness, a parse error) under one declared policy.

``"fail"`` (the default, as the harnesses count them): an unknown outcome is a run that did
not pass. ``"exclude"``: it is left out, and the trials shrink. Every verb applies the policy
here and prints how many unknowns there were and what was done with them.

>>> r = apply_unknown_policy([True, None, False, None])
>>> r.passed.tolist(), r.keep.tolist(), r.describe()
([1.0, 0.0, 0.0, 0.0], [True, True, True, True], '2 unknown outcomes counted as failures')
>>> apply_unknown_policy([True, None], "exclude").describe()
'1 unknown outcome left out'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from ..policies import UNKNOWN_POLICIES, UnknownPolicy

__all__ = ["UNKNOWN_POLICIES", "UnknownOutcomes", "UnknownPolicy", "apply_unknown_policy", "counts_with_unknowns",
           "check_unknown_policy"]


def check_unknown_policy(policy: UnknownPolicy | str) -> UnknownPolicy:
    """The policy, checked once at the boundary (:meth:`fluke.policies.UnknownPolicy.of`).

    >>> check_unknown_policy("drop")
    Traceback (most recent call last):
    ...
    fluke.errors.UsageError: unknown='drop' must be 'fail' (count it as a failure, the default) or 'exclude' (leave
    it out)
    """
    return UnknownPolicy.of(policy)


@dataclass(frozen=True, eq=False)
class UnknownOutcomes:
    """What the policy did: ``passed`` (0/1 floats) for the ``keep`` rows, and how many were unknown."""

    passed: np.ndarray
    keep: np.ndarray
    unknowns: int
    policy: UnknownPolicy

    def describe(self) -> str:
        """One phrase for every output: how many unknowns and what was done with them."""
        return self.policy.describe(self.unknowns)




def apply_unknown_policy(passed, policy: UnknownPolicy | str = "fail") -> UnknownOutcomes:
    """Apply the policy to per-run outcomes: True/False/None (or 1/0/NaN).

    The returned ``passed`` holds the kept rows only (all rows under ``"fail"``); ``keep``
    is the mask over the input, for aligning other per-run arrays (scenarios, units).

    >>> r = apply_unknown_policy(np.array([1.0, np.nan, 0.0]), "exclude")
    >>> r.passed.tolist(), r.keep.tolist(), r.unknowns
    ([1.0, 0.0], [True, False, True], 1)
    """
    policy = check_unknown_policy(policy)
    values = np.asarray(passed, dtype=object).reshape(-1)
    unknown = np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in values], dtype=bool)
    known = np.zeros(values.size)
    if (~unknown).any():
        known[~unknown] = np.asarray([float(bool(v)) for v in values[~unknown]])
    if policy.excludes:
        return UnknownOutcomes(known[~unknown], ~unknown, int(unknown.sum()), policy)
    return UnknownOutcomes(np.where(unknown, 0.0, known), np.ones(values.size, bool), int(unknown.sum()), policy)


def counts_with_unknowns(successes, trials, unknowns=None, policy: UnknownPolicy | str = "fail"):
    """Counts per scenario after the policy: ``trials`` are the known outcomes, ``unknowns`` the rest.

    Returns (successes, trials, total unknowns) as arrays and an int: under ``"fail"`` the
    unknowns join the trials as failures; under ``"exclude"`` they are left out.

    >>> counts_with_unknowns([3, 5], [4, 5], [1, 2])[1].tolist()
    [5.0, 7.0]
    >>> counts_with_unknowns([3, 5], [4, 5], [1, 2], "exclude")[1].tolist()
    [4.0, 5.0]
    """
    policy = check_unknown_policy(policy)
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if unknowns is None:
        return k, n, 0
    u = np.broadcast_to(np.asarray(unknowns, dtype=float), n.shape)
    if np.any(~np.isfinite(u) | (u < 0) | (u != np.round(u))):
        raise UsageError(f"unknowns={np.asarray(unknowns).tolist()} must be whole counts, at least 0")
    total = int(u.sum())
    trials_after, _ = policy.apply(n + u, k, u)     # the unknowns join the trials, then leave them if excluded
    return k, trials_after, total
