"""A declared loss table and the decision it implies: the expected loss per task of each version.

The table prices what a run can do wrong, in one unit the team chooses (say, dollars)::

    failure: 10            # a run that did not pass
    ask: 2                 # a run labelled should_ask (a person had to answer)
    severity: {hard: 500}  # a run that broke a check of this severity (added to the failure)
    spend: 1.0             # per unit of recorded cost (see ``cost``)
    cost: usd              # which cost keys: keys ending in "usd" (default), or a list of keys
    eligible: {hard: 0.01} # optional: a version whose exact upper bound on this rate exceeds it is out

A run's loss is the sum of what applies to it; a version's expected loss per task is the mean
over its scenarios of the mean loss of each scenario's runs (every scenario weighs the same, as
in ``compare``). Its interval is Student t over the scenario means. The choice is the eligible
version with the smallest expected loss; the probability that it is wrong is the posterior
probability that another eligible version's loss is smaller, under the Bayesian bootstrap over
scenarios (Dirichlet(1, …, 1) weights on the scenarios, the same draw for every version, so
versions run on the same scenarios are compared pair by pair). The bootstrap gives no weight to
a failure never seen: the severe-failure upper bounds stand beside it for that, and
``loss_at_bounds`` prices each severity at its bound.

>>> table = parse_loss_table("failure: 10\\nseverity: {hard: 100}\\nspend: 1\\n")
>>> table.failure, table.severity, table.cost
(10.0, {'hard': 100.0}, 'usd')
>>> d = decide_losses({"A": (["s1", "s2"], [4.0, 6.0]), "B": (["s1", "s2"], [1.0, 2.0])}, draws=2000)
>>> d.choice, d.p_wrong
('B', 0.0)
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
from scipy import stats

from ..errors import SpecError

_KEYS = ("name", "failure", "ask", "severity", "spend", "cost", "eligible")
SEVERITY_NAMES = ("hard", "soft", "warn")


@dataclass(frozen=True)
class LossTable:
    """What each kind of error costs (see the module docstring)."""

    failure: float = 0.0
    ask: float = 0.0
    severity: dict[str, float] = field(default_factory=dict)
    spend: float = 0.0
    cost: str | tuple[str, ...] = "usd"
    eligible: dict[str, float] = field(default_factory=dict)
    name: str = "loss table"

    def run_loss(self, passed: bool, asked: bool, severities, spend: float) -> float:
        """One run's loss; ``spend`` NaN (not recorded) charges nothing here and is counted apart.

        >>> LossTable(failure=10, ask=2, severity={"hard": 100}, spend=1).run_loss(False, False, {"hard"}, 0.5)
        110.5
        """
        total = (0.0 if passed else self.failure) + (self.ask if asked else 0.0)
        total += sum(self.severity.get(s, 0.0) for s in severities)
        if self.spend and math.isfinite(spend):
            total += self.spend * spend
        return total

    def to_dict(self) -> dict:
        return {"name": self.name, "failure": self.failure, "ask": self.ask, "severity": dict(self.severity),
                "spend": self.spend, "cost": self.cost if isinstance(self.cost, str) else list(self.cost),
                "eligible": dict(self.eligible)}


def _number(where: str, value: Any, *, rate: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise SpecError(f"loss table: {where}: {value!r} must be a number of at least 0")
    if rate and not 0 < value < 1:
        raise SpecError(f"loss table: {where}: {value!r} must lie strictly between 0 and 1 (a rate)")
    return float(value)


def _severities(where: str, value: Any, *, rate: bool = False) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise SpecError(f"loss table: {where}: must be a mapping of severity to a number, e.g. {{hard: 100}}")
    out = {}
    for key, v in value.items():
        if key not in SEVERITY_NAMES:
            close = difflib.get_close_matches(str(key), SEVERITY_NAMES, n=1)
            raise SpecError(f"loss table: {where}.{key}: not a severity" + (f" (did you mean {close[0]!r}?)" if close
                            else "") + f"; severities: {', '.join(SEVERITY_NAMES)}")
        out[str(key)] = _number(f"{where}.{key}", v, rate=rate)
    return out


def parse_loss_table(text: str | Mapping[str, Any]) -> LossTable:
    """A loss table from YAML text or a mapping, validated whole (unknown keys with "did you mean").

    >>> parse_loss_table("falure: 3")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fluke.errors.SpecError: loss table: falure: unknown key (did you mean 'failure'?); allowed: ask, cost, ...
    """
    if isinstance(text, str):
        import yaml

        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            from ..format import parse_problem

            raise SpecError(f"loss table: not valid YAML ({parse_problem(exc)})") from None
    else:
        raw = text
    if not isinstance(raw, Mapping):
        raise SpecError("loss table: must be a mapping (failure, ask, severity, spend, cost, eligible)")
    for key in raw:
        if key not in _KEYS:
            close = difflib.get_close_matches(str(key), _KEYS, n=1)
            raise SpecError(f"loss table: {key}: unknown key" + (f" (did you mean {close[0]!r}?)" if close else "")
                            + f"; allowed: {', '.join(sorted(_KEYS))}")
    cost = raw.get("cost", "usd")
    if isinstance(cost, list) and cost and all(isinstance(k, str) for k in cost):
        cost = tuple(cost)
    elif not (isinstance(cost, str) and cost):
        raise SpecError(f"loss table: cost: {cost!r} must be a key suffix such as usd, or a list of cost keys")
    table = LossTable(failure=_number("failure", raw.get("failure", 0)), ask=_number("ask", raw.get("ask", 0)),
                      severity=_severities("severity", raw.get("severity", {})),
                      spend=_number("spend", raw.get("spend", 0)), cost=cost,
                      eligible=_severities("eligible", raw.get("eligible", {}), rate=True),
                      name=str(raw.get("name", "loss table")))
    if not (table.failure or table.ask or table.spend or any(table.severity.values())):
        raise SpecError("loss table: prices nothing: give failure, ask, severity or spend a positive number")
    return table


@dataclass(frozen=True)
class VersionLoss:
    """One version's expected loss per task, its confidence interval, and whether it may be chosen."""

    version: str
    scenarios: int
    expected: float
    interval: tuple[float, float]
    eligible: bool = True
    why_not: str | None = None
    p_best: float = math.nan

    def to_dict(self) -> dict:
        finite = [x if math.isfinite(x) else None for x in self.interval]
        return {"version": self.version, "scenarios": self.scenarios, "expected_loss": self.expected,
                "interval": finite, "eligible": self.eligible, "why_not": self.why_not,
                "p_best": None if math.isnan(self.p_best) else self.p_best}


@dataclass(frozen=True)
class Decision:
    """The versions' expected losses, the choice the table implies and P(that choice is wrong)."""

    losses: tuple[VersionLoss, ...]
    choice: str | None
    p_wrong: float
    draws: int
    confidence_level: float
    reason: str | None = None

    def to_dict(self) -> dict:
        return {"losses": [v.to_dict() for v in self.losses], "choice": self.choice,
                "p_wrong": None if math.isnan(self.p_wrong) else self.p_wrong, "draws": self.draws,
                "confidence_level": self.confidence_level, "reason": self.reason,
                "posterior": "Bayesian bootstrap over scenarios (Dirichlet(1, …, 1) weights, shared by the versions)"}


def decide_losses(per_scenario: Mapping[str, tuple[Any, Any]], *,
                  eligible: Mapping[str, str | None] | None = None, draws: int = 4000,
                  confidence_level: float = 0.95, rng: np.random.Generator | None = None) -> Decision:
    """Choose among versions by expected loss (see the module docstring).

    ``per_scenario`` maps a version to ``(scenario names, mean loss of that scenario's runs)``;
    ``eligible`` maps a version to None (it may be chosen) or the reason it may not.

    >>> d = decide_losses({"A": (["a", "b", "c"], [1.0, 3.0, 2.0]), "B": (["a", "b", "c"], [1.5, 2.5, 2.5])})
    >>> d.choice, [round(v.expected, 3) for v in d.losses], 0 < d.p_wrong < 0.5
    ('A', [2.0, 2.167], True)
    """
    if draws < 100:
        raise SpecError(f"draws={draws} must be at least 100")
    rng = np.random.default_rng(20261201) if rng is None else rng
    eligible = dict(eligible or {})
    names = sorted({str(s) for scen, _ in per_scenario.values() for s in scen})
    at = {s: i for i, s in enumerate(names)}
    weights = rng.dirichlet(np.ones(len(names)), size=int(draws)) if names else np.zeros((int(draws), 0))
    versions = list(per_scenario)
    sampled = np.full((int(draws), len(versions)), np.nan)
    rows = []
    tail = (1 - confidence_level) / 2
    for j, v in enumerate(versions):
        scen, loss = per_scenario[v]
        idx = np.array([at[str(s)] for s in scen], dtype=int)
        y = np.asarray(loss, dtype=float)
        g = y.size
        mean = float(y.mean()) if g else math.nan
        if g >= 2 and np.std(y) > 0:
            half = float(stats.t.ppf(1 - tail, g - 1) * np.std(y, ddof=1) / math.sqrt(g))
            interval = (mean - half, mean + half)
        else:
            interval = (math.nan, math.nan)
        if g:
            w = weights[:, idx]
            sampled[:, j] = (w @ y) / w.sum(axis=1)
        why = eligible.get(v)
        rows.append(VersionLoss(v, g, mean, interval, why is None, why))
    ok = [j for j, r in enumerate(rows) if r.eligible and r.scenarios]
    if not ok:
        return Decision(tuple(rows), None, math.nan, int(draws), confidence_level,
                        "no version is eligible: each breaks a bound of the table's eligible section")
    best = min(ok, key=lambda j: (rows[j].expected, versions[j]))
    winners = np.array(ok)[np.argmin(sampled[:, ok], axis=1)]
    p_best = {j: float(np.mean(winners == j)) for j in ok}
    rows = [VersionLoss(r.version, r.scenarios, r.expected, r.interval, r.eligible, r.why_not,
                        p_best.get(j, math.nan)) for j, r in enumerate(rows)]
    return Decision(tuple(rows), versions[best], 1.0 - p_best[best], int(draws), confidence_level)
