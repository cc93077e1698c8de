"""The two-sided p-value of a t statistic: the test that goes with a t interval.

A contrast (or any estimate) reported with a standard error and Student t on ``df`` degrees
of freedom has a matching test of "the true value is zero"; its p-value is computed here, once,
so every surface prints the same number.

>>> round(t_test_pvalue(0.2, 0.0577, 2), 3)
0.074
"""

from __future__ import annotations

import math

from scipy import special

__all__ = ["t_test_pvalue"]


def t_test_pvalue(estimate: float, standard_error: float, df: float) -> float:
    """P(|T| ≥ |estimate / standard_error|) for T ~ Student t on ``df`` degrees of freedom.

    NaN (undefined) when the standard error is zero or not finite, or ``df`` is below 1:
    there is then no test, and no number is better than a made-up one.

    >>> t_test_pvalue(0.0, 0.1, 9)
    1.0
    >>> t_test_pvalue(0.3, 0.0, 9)
    nan
    """
    if not (math.isfinite(standard_error) and standard_error > 0 and math.isfinite(estimate) and df >= 1):
        return float("nan")
    return float(2.0 * special.stdtr(df, -abs(estimate / standard_error)))
