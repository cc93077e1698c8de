"""The effect of an intervention on the pass rate over continuations, and what coupling bought.

Pure arithmetic over 0/1 outcomes. **Coupled** arms pair continuation c of the baseline with
continuation c of the intervened arm (the same tape draws): the estimate is the mean of the
paired differences and its variance var(d)/n. **Fresh** arms are independent: var(y₁)/n₁ +
var(y₀)/n₀. The variance factor is what pairing bought, measured on the coupled draws
themselves: (var(y₁) + var(y₀)) / var(d), the variance an independent design of the same size
would have had over the variance the coupled one has (both marginals are the same).

>>> e = continuation_effect([0, 0, 1, 1, 0, 1], [1, 0, 1, 1, 1, 1], coupled=True)
>>> round(e.estimate, 3), round(e.variance_factor, 2), e.n
(0.333, 1.75, 6)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import special

from ..inference import check_level

__all__ = ["ContinuationEffect", "continuation_effect"]


@dataclass(frozen=True)
class ContinuationEffect:
    """Intervened minus baseline pass rate, its interval (normal, at ``confidence_level``) and
    standard error, the two rates, ``n`` continuations per arm, whether the arms were
    ``coupled``, and (coupled only) the measured ``variance_factor``."""

    estimate: float
    low: float
    high: float
    se: float
    baseline: float
    intervened: float
    n: int
    coupled: bool
    variance_factor: float
    confidence_level: float
    reason: str | None = None


def _var(x: np.ndarray) -> float:
    return float(x.var(ddof=1)) if x.size > 1 else float("nan")


def continuation_effect(baseline: Sequence[int], intervened: Sequence[int], *, coupled: bool,
                        confidence_level: float = 0.95) -> ContinuationEffect:
    """The effect from outcomes of the two arms (paired by position when ``coupled``)."""
    check_level(confidence_level, "confidence_level")
    y0 = np.asarray(baseline, dtype=float)
    y1 = np.asarray(intervened, dtype=float)
    if coupled and y0.size != y1.size:
        raise ValueError(f"coupled arms pair continuations: {y0.size} baseline against {y1.size} intervened")
    nan = float("nan")
    if min(y0.size, y1.size) < 2:
        return ContinuationEffect(nan, nan, nan, nan, nan, nan, int(min(y0.size, y1.size)), coupled, nan,
                                  confidence_level, "too small to tell: fewer than 2 continuations per arm")
    estimate = float(y1.mean() - y0.mean())
    factor = nan
    if coupled:
        d = y1 - y0
        se = math.sqrt(_var(d) / d.size)
        spread = _var(y1) + _var(y0)
        factor = spread / _var(d) if _var(d) > 0 else (math.inf if spread > 0 else nan)
    else:
        se = math.sqrt(_var(y1) / y1.size + _var(y0) / y0.size)
    z = float(special.ndtri(0.5 + confidence_level / 2))
    reason = None if se > 0 else "every continuation agreed: the normal interval has no width; run more"
    return ContinuationEffect(estimate, estimate - z * se, estimate + z * se, se, float(y0.mean()),
                              float(y1.mean()), int(min(y0.size, y1.size)), coupled, factor, confidence_level,
                              reason)
