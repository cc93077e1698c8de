"""Perturbation suites: declared variants applied to every policy; which contrasts survive.

A suite is a fixed list of variants declared before confirmation (a rephrased task, a slower
tool, a degraded retriever). Every policy runs under every variant. For each variant the
contrast of each policy against the baseline is paired by environment. Under each variant
the contrast is in one of three states, from its interval there alone:

* *survives*: the interval excludes zero, on the side the nominal estimate is on;
* *reversed*: the interval excludes zero on the other side;
* *not significant*: the interval holds zero. That is a statement about the runs under that
  variant (too few to tell), not evidence that the effect went away.

The worst case is the least favourable variant of the suite. With declared ``weights`` over
variants the suite also reports the weighted *share of variants where the contrast is not
significant*. It is not a failure probability: with the same true effect under every
variant it is simply one minus the power (0.74 in a suite of ten environments).

>>> import numpy as np
>>> env = np.tile(np.repeat(["e1", "e2", "e3", "e4"], 2), 2)
>>> pol = np.tile(["base", "new"], 8)
>>> var = np.repeat(["nominal", "slow tool"], 8)
>>> y = np.where(pol == "new", 0.3, 0.0) + np.tile([0.0, 0.01, 0.02, 0.0, 0.01, 0.0, 0.0, 0.02], 2)
>>> y = y - np.where((var == "slow tool") & (pol == "new"), 0.2, 0.0)
>>> suite = perturbation_suite(y, env, pol, var, baseline="base")
>>> [(r.variant, r.status) for r in suite.rows]
[('nominal', 'survives'), ('slow tool', 'survives')]
>>> suite.worst["new"].variant, suite.share_not_significant is None
('slow tool', True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..errors import UsageError
from ..inference import check_level, check_values, cluster_codes
from ._factorial import Contrast, paired_interval

__all__ = ["PerturbationRow", "PerturbationSuite", "perturbation_suite"]


@dataclass(frozen=True)
class PerturbationRow:
    """One policy-versus-baseline contrast under one variant."""

    variant: str
    policy: str
    contrast: Contrast
    survives: bool
    status: str = "survives"      # "survives", "reversed" or "not significant"


@dataclass(frozen=True)
class PerturbationSuite:
    """Which contrasts survive each variant, the worst case, and (with weights) the share not significant."""

    baseline: str
    nominal: str
    rows: tuple[PerturbationRow, ...]
    worst: dict[str, PerturbationRow]
    share_not_significant: dict[str, float] | None
    reason: str | None
    conditional_on: str


def perturbation_suite(values, environments, policies, variants, *, baseline: str,
                       nominal: str | None = None, weights: Mapping[str, float] | None = None,
                       confidence_level: float = 0.95) -> PerturbationSuite:
    """Contrast every policy with ``baseline`` under every declared variant, paired by environment.

    ``nominal`` names the unperturbed variant (default: the first seen); its estimate sets the
    direction a surviving contrast must keep. With ``weights`` (variant -> weight) the
    weighted share of variants where the contrast's interval holds zero is reported
    (``share_not_significant``); it measures power under the variants, not failure.
    """
    y = check_values(values)
    level = check_level(confidence_level)
    pol = np.asarray(policies).astype(str)
    var = np.asarray(variants).astype(str)
    for name, col in (("policies", pol), ("variants", var)):
        if col.shape != y.shape:
            raise UsageError(f"{name} has {col.size} entries; values has {y.size}")
    env, _ = cluster_codes(environments, y.size)
    g = int(env.max()) + 1
    pol_names = list(dict.fromkeys(pol.tolist()))
    var_names = list(dict.fromkeys(var.tolist()))
    if baseline not in pol_names:
        raise UsageError(f"baseline={baseline!r} is not among the policies {pol_names}")
    nominal = var_names[0] if nominal is None else nominal
    if nominal not in var_names:
        raise UsageError(f"nominal={nominal!r} is not among the variants {var_names}")
    seen = set(zip(var.tolist(), pol.tolist(), strict=True))
    missing = [(v, p) for v in var_names for p in pol_names if (v, p) not in seen]
    if missing:
        v, p = missing[0]
        raise UsageError(f"variant {v!r} was not applied to policy {p!r}: a suite applies every "
                         "declared variant to every policy")
    if weights is not None:
        unknown = set(weights) - set(var_names)
        if unknown or any(not (w >= 0) for w in weights.values()) or sum(weights.values()) <= 0:
            raise UsageError(f"weights={dict(weights)} must give non-negative weights, not all "
                             f"zero, to the variants {var_names}")

    p_code = np.array([pol_names.index(p) for p in pol.tolist()])
    v_code = np.array([var_names.index(v) for v in var.tolist()])
    shape = (len(var_names), g, len(pol_names))
    slot = np.ravel_multi_index((v_code, env, p_code), shape)
    size = int(np.prod(shape))
    sums = np.bincount(slot, weights=y, minlength=size).reshape(shape)
    counts = np.bincount(slot, minlength=size).reshape(shape)
    b = pol_names.index(baseline)
    contrasts: dict[tuple[str, str], Contrast] = {}
    for vi, v in enumerate(var_names):
        for pi, p in enumerate(pol_names):
            if pi == b:
                continue
            ok = (counts[vi, :, pi] > 0) & (counts[vi, :, b] > 0)
            d = sums[vi, ok, pi] / counts[vi, ok, pi] - sums[vi, ok, b] / counts[vi, ok, b]
            contrasts[(v, p)] = paired_interval(f"{p} - {baseline}", d, confidence_level=level)

    rows, worst = [], {}
    for p in pol_names:
        if p == baseline:
            continue
        sign = 1.0 if contrasts[(nominal, p)].statistic >= 0 else -1.0
        for v in var_names:
            c = contrasts[(v, p)]
            above, below = bool(c.low > 0), bool(c.high < 0)
            survives = above if sign > 0 else below
            status = "survives" if survives else ("reversed" if (above or below) else "not significant")
            row = PerturbationRow(v, p, c, survives, status)
            rows.append(row)
            if p not in worst or sign * c.statistic < sign * worst[p].contrast.statistic:
                worst[p] = row
    share, reason = None, None
    if weights is None:
        reason = ("a fixed suite supports sensitivity and worst-case statements only; declare weights "
                  "over variants to get the weighted share of variants where a contrast is not significant "
                  "(a statement about power, not a failure probability)")
    else:
        total = sum(weights.get(v, 0.0) for v in var_names)
        share = {p: sum(weights.get(r.variant, 0.0) for r in rows
                        if r.policy == p and r.status == "not significant") / total
                 for p in pol_names if p != baseline}
    return PerturbationSuite(
        baseline, nominal, tuple(rows), worst, share, reason,
        conditional_on=(f"the {len(var_names)} declared variants {var_names}; environments as "
                        f"the sampling unit; {level:.0%} intervals"
                        + ("" if weights is None else "; the declared weights as the sampling law")))
