"""How often the change check resets a scenario that did not change: measured, by simulation.

The running account's rule (reset where P(changed) ≥ ``reset_at``) looks again at every
version, so over a long history an unchanged scenario is flagged now and then by chance.
:func:`reset_rate` simulates unchanged histories at a declared θ and batch size and counts
them, so the account can print how often its resets are expected to be false.

>>> r = reset_rate(0.9, 10, 20, odds=4, rng=np.random.default_rng(1), histories=500)
>>> 0 < r.per_version < 0.2, r.any_reset > r.per_version
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError, UsageTypeError
from ._beta import UNIFORM, Prior
from ._carry import EarlierVersion, belief_from_counts

__all__ = ["ResetRate", "reset_rate"]


@dataclass(frozen=True)
class ResetRate:
    """Under no change: the share of checks that reset, and of histories with any reset."""

    theta: float
    trials: int
    versions: int
    odds: float
    delta: float
    reset_at: float
    histories: int
    per_version: float
    per_version_se: float
    any_reset: float
    any_reset_se: float

    def describe(self) -> str:
        return (f"under no change (θ = {self.theta:g}, {self.trials} runs per version, δ = {self.delta:g}, "
                f"prior odds {self.odds:g}:1), P(changed) ≥ {self.reset_at:g} at {100 * self.per_version:.1f}% "
                f"of checks, and {100 * self.any_reset:.1f}% of {self.versions}-version histories reset at least "
                f"once (simulation of {self.histories} histories; ± {100 * self.any_reset_se:.1f} points)")


def reset_rate(theta: float, trials: int, versions: int, *, odds: float, rng: np.random.Generator,
               delta: float = 1.0, reset_at: float = 0.5, prior: Prior = UNIFORM,
               histories: int = 2000) -> ResetRate:
    """Simulate ``histories`` unchanged scenarios over ``versions`` versions of ``trials`` runs each.

    Each history is run through :func:`belief_from_counts` exactly as the account runs a real one.
    """
    if not isinstance(rng, np.random.Generator):
        raise UsageTypeError("rng must be a numpy Generator, e.g. np.random.default_rng(2026)")
    if not 0 <= theta <= 1:
        raise UsageError(f"theta={theta} must lie between 0 and 1")
    if int(trials) != trials or trials < 1:
        raise UsageError(f"trials={trials} must be a whole number of at least 1")
    if int(versions) != versions or versions < 2:
        raise UsageError(f"versions={versions} must be at least 2 (a change check needs an earlier version)")
    if int(histories) != histories or histories < 10:
        raise UsageError(f"histories={histories} must be at least 10")
    if not 0 < reset_at <= 1:
        raise UsageError(f"reset_at={reset_at} must be in (0, 1]")
    n = np.full(int(histories), float(trials))
    k = rng.binomial(int(trials), theta, size=(int(versions), int(histories))).astype(float)
    earlier = [EarlierVersion(f"v{t}", k[t], n) for t in range(int(versions) - 1)]
    b = belief_from_counts(k[-1], n, prior=prior, earlier=earlier, delta=delta, odds=odds)
    flagged = b.resets(reset_at)[1:]
    per = float(flagged.mean())
    anyr = float(flagged.any(axis=0).mean())
    checks = flagged.size
    return ResetRate(float(theta), int(trials), int(versions), float(odds), float(delta), float(reset_at),
                     int(histories), per, float(np.sqrt(per * (1 - per) / checks)), anyr,
                     float(np.sqrt(anyr * (1 - anyr) / histories)))
