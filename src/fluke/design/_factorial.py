"""Factorial policy designs: every policy on every environment, contrasts paired within it.

Two factors with two levels each (memory off/on × retry budget 1/3) give four policies. Each
sampled environment runs all four from the same snapshot, in an order drawn at random and
recorded (:func:`factorial_plan`). :func:`factorial_contrasts` then forms, inside each
environment, each factor's effect at each level of the other, the main effects (their
average) and the interaction (the difference of the two), and gives each an interval with the
environment as the sampling unit: Student t over the G environment contrasts, G − 1 df.

>>> import numpy as np
>>> env = np.repeat(["e1", "e2", "e3"], 4)
>>> mem = np.tile([0, 0, 1, 1], 3); retry = np.tile([1, 3, 1, 3], 3)
>>> y = 0.2 + 0.1 * mem + np.repeat([0.0, 0.1, -0.1], 4) + np.tile([0.0, 0.01, 0.0, -0.01], 3)
>>> fc = factorial_contrasts(y, env, {"memory": mem, "retry": retry})
>>> round(fc["memory"].statistic, 3), round(fc["memory x retry"].statistic, 3)
(0.09, -0.02)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import special

from ..errors import UsageError, UsageTypeError
from ..inference import check_level, check_values, cluster_codes

__all__ = ["Contrast", "FactorialContrasts", "FactorialPlan", "factorial_contrasts",
           "factorial_plan", "paired_interval"]


@dataclass(frozen=True)
class Contrast:
    """One paired contrast with an interval clustered by environment."""

    name: str
    statistic: float
    standard_error: float
    low: float
    high: float
    df: int
    environments: int

    @property
    def excludes_zero(self) -> bool:
        return bool(self.low > 0 or self.high < 0)


def paired_interval(name: str, differences, *, confidence_level: float = 0.95) -> Contrast:
    """Student t interval over one paired difference per environment (G − 1 df).

    >>> c = paired_interval("a − b", [0.1, 0.3, 0.2])
    >>> round(c.statistic, 2), c.df
    (0.2, 2)
    """
    d = check_values(differences)
    level = check_level(confidence_level)
    g = d.size
    stat = float(d.mean())
    if g < 2:
        return Contrast(name, stat, float("nan"), float("nan"), float("nan"), 0, g)
    se = float(d.std(ddof=1) / np.sqrt(g))
    t = float(special.stdtrit(g - 1, 0.5 + level / 2))
    return Contrast(name, stat, se, stat - t * se, stat + t * se, g - 1, g)


@dataclass(frozen=True)
class FactorialContrasts:
    """Main effects, simple effects and the interaction of a 2 × 2 factorial design."""

    factors: tuple[str, str]
    levels: dict[str, tuple[Any, Any]]
    contrasts: tuple[Contrast, ...]
    cell_means: dict[str, float]
    environments: int
    dropped: int
    confidence_level: float
    conditional_on: str = field(default="")

    def __getitem__(self, name: str) -> Contrast:
        for c in self.contrasts:
            if c.name == name:
                return c
        raise KeyError(f"{name!r} is not a contrast here; there are: "
                       + ", ".join(c.name for c in self.contrasts))


def _two_levels(name: str, column: np.ndarray, declared) -> tuple[Any, Any]:
    present = list(dict.fromkeys(column.tolist()))
    if declared is not None:
        lo, hi = declared
        extra = set(present) - {lo, hi}
        if extra:
            raise UsageError(f"factor {name!r} has levels {sorted(map(str, extra))} beyond the "
                             f"declared ({lo!r}, {hi!r})")
        return lo, hi
    if len(present) != 2:
        raise UsageError(f"factor {name!r} has {len(present)} levels {present}; a 2 x 2 design "
                         "needs exactly two (declare them with levels=)")
    return tuple(sorted(present, key=lambda v: (str(type(v)), v)))


def factorial_contrasts(values, environments, factors: Mapping[str, Sequence], *,
                        levels: Mapping[str, tuple] | None = None,
                        confidence_level: float = 0.95) -> FactorialContrasts:
    """Paired contrasts of a 2 × 2 design, clustered by environment.

    ``factors`` maps each of the two factor names to its column (one level per row);
    ``levels`` may declare each factor's (low, high) order. Several runs of one policy in
    one environment are averaged first. Environments missing a policy are dropped (counted
    in ``dropped``): a paired contrast needs all four cells.
    """
    y = check_values(values)
    level = check_level(confidence_level)
    if len(factors) != 2:
        raise UsageError(f"factors has {len(factors)} entries {list(factors)}; give exactly two")
    (a_name, a_col), (b_name, b_col) = factors.items()
    a_col, b_col = np.asarray(a_col, dtype=object), np.asarray(b_col, dtype=object)
    for name, col in ((a_name, a_col), (b_name, b_col)):
        if col.shape != y.shape:
            raise UsageError(f"factor {name!r} has {col.size} entries; values has {y.size}")
    levels = dict(levels or {})
    a_lv = _two_levels(a_name, a_col, levels.get(a_name))
    b_lv = _two_levels(b_name, b_col, levels.get(b_name))
    a = (a_col == a_lv[1]).astype(np.int64)
    b = (b_col == b_lv[1]).astype(np.int64)
    env, _ = cluster_codes(environments, y.size)
    g = int(env.max()) + 1
    slot = env * 4 + a * 2 + b
    sums = np.bincount(slot, weights=y, minlength=4 * g).reshape(g, 4)
    counts = np.bincount(slot, minlength=4 * g).reshape(g, 4)
    complete = (counts > 0).all(axis=1)
    m = sums[complete] / counts[complete]       # columns: a0b0, a0b1, a1b0, a1b1
    a_at_b0, a_at_b1 = m[:, 2] - m[:, 0], m[:, 3] - m[:, 1]
    b_at_a0, b_at_a1 = m[:, 1] - m[:, 0], m[:, 3] - m[:, 2]

    def lv(v):
        return str(v).lower() if isinstance(v, bool) else str(v)

    diffs = [
        (a_name, (a_at_b0 + a_at_b1) / 2),
        (b_name, (b_at_a0 + b_at_a1) / 2),
        (f"{a_name} at {b_name}={lv(b_lv[0])}", a_at_b0),
        (f"{a_name} at {b_name}={lv(b_lv[1])}", a_at_b1),
        (f"{b_name} at {a_name}={lv(a_lv[0])}", b_at_a0),
        (f"{b_name} at {a_name}={lv(a_lv[1])}", b_at_a1),
        (f"{a_name} x {b_name}", a_at_b1 - a_at_b0),
    ]
    contrasts = tuple(paired_interval(name, d, confidence_level=level) if d.size else
                      Contrast(name, float("nan"), float("nan"), float("nan"), float("nan"), 0, 0)
                      for name, d in diffs)
    cells = {}
    for j, (ai, bi) in enumerate(itertools.product((0, 1), (0, 1))):
        key = f"{a_name}={lv(a_lv[ai])}, {b_name}={lv(b_lv[bi])}"
        cells[key] = float(m[:, j].mean()) if m.size else float("nan")
    ge = int(complete.sum())
    return FactorialContrasts(
        (a_name, b_name), {a_name: a_lv, b_name: b_lv}, contrasts, cells, ge, g - ge, level,
        conditional_on=(f"{ge} environments as the independent sampling unit (t on {ge - 1} df); "
                        f"effects of {a_name} ({lv(a_lv[0])} -> {lv(a_lv[1])}) and {b_name} "
                        f"({lv(b_lv[0])} -> {lv(b_lv[1])}) averaged with equal weight per environment"))


@dataclass(frozen=True)
class FactorialPlan:
    """Which policy runs in which environment, in which (randomised) order. Recorded."""

    factors: dict[str, tuple]
    policies: tuple[dict, ...]
    order: dict[str, tuple[int, ...]]

    def schedule(self) -> list[tuple[str, int, dict]]:
        """(environment, position, policy) in the order the runs are to be made."""
        return [(env, pos, self.policies[p]) for env, idx in self.order.items()
                for pos, p in enumerate(idx)]

    def as_dict(self) -> dict:
        """A JSON-ready record of the plan (store it with the runs)."""
        return {"factors": {k: list(v) for k, v in self.factors.items()},
                "policies": list(self.policies),
                "order": {env: list(idx) for env, idx in self.order.items()}}


def factorial_plan(factors: Mapping[str, Sequence], environments: Sequence[str], *,
                   rng: np.random.Generator) -> FactorialPlan:
    """Every combination of factor levels, run in each environment in a random order.

    >>> import numpy as np
    >>> plan = factorial_plan({"memory": [False, True], "retry": [1, 3]}, ["e1", "e2"],
    ...                       rng=np.random.default_rng(0))
    >>> len(plan.policies), sorted(plan.order["e1"])
    (4, [0, 1, 2, 3])
    """
    if not isinstance(rng, np.random.Generator):
        raise UsageTypeError("rng must be a numpy Generator, e.g. np.random.default_rng(2026)")
    if not factors:
        raise UsageError("factors is empty: declare at least one factor and its levels")
    for name, lv in factors.items():
        if len(lv) < 2 or len(set(map(repr, lv))) != len(lv):
            raise UsageError(f"factor {name!r} has levels {list(lv)}; it needs two or more distinct")
    envs = [str(e) for e in environments]
    if len(set(envs)) != len(envs) or not envs:
        raise UsageError("environments must be a non-empty list of distinct identifiers")
    names = list(factors)
    policies = tuple(dict(zip(names, combo, strict=True)) for combo in itertools.product(*factors.values()))
    perms = np.argsort(rng.random((len(envs), len(policies))), axis=1)
    order = {env: tuple(int(p) for p in row) for env, row in zip(envs, perms, strict=True)}
    return FactorialPlan({k: tuple(v) for k, v in factors.items()}, policies, order)
