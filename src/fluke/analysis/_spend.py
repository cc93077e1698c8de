"""What ``decide`` and ``compare --margin`` need of each run, read as it streams: outcome, spend, time, severity.

One pass over a version's stored runs keeps, per run, its scenario, condition, whether it
passed (an unknown outcome under the declared policy), whether it asked (label ``should_ask``),
its spend (the sum of the cost keys chosen; NaN when the run carries none of them, never zero),
its latency and tokens (NaN when not recorded) and, under a grading spec, the severities of
the checks it broke. Nothing else of a run is held.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "sp.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, cost={"usd": 0.5} if t else {}, latency=2.0,
...                        outcome=Outcome(passed=t > 0)) for t in range(3)])
>>> arrays = read_spend(ledger, ledger.versions()[0].version)
>>> arrays.spend.tolist(), arrays.passed.tolist(), arrays.unknown_spend
([nan, 0.5, 0.5], [0.0, 1.0, 1.0], 1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..policies import UnknownPolicy

#: Cost keys that count a run's tokens when ``total_tokens`` is absent.
TOKEN_KEYS = ("input_tokens", "output_tokens")


@dataclass(frozen=True)
class SpendArrays:
    """One entry per run of a version (see the module docstring)."""

    scenario: np.ndarray
    condition: np.ndarray
    passed: np.ndarray
    asked: np.ndarray
    spend: np.ndarray
    latency: np.ndarray
    tokens: np.ndarray
    severities: tuple[frozenset, ...] | None
    unknown_outcomes: int
    cost_keys: tuple[str, ...]

    @property
    def runs(self) -> int:
        return int(self.passed.size)

    @property
    def unknown_spend(self) -> int:
        return int(np.isnan(self.spend).sum())


def _spend(cost: dict, choose) -> float:
    keys = choose(list(cost))
    values = [cost[k] for k in keys if isinstance(cost[k], (int, float)) and not isinstance(cost[k], bool)]
    return float(sum(values)) if values else math.nan


def _tokens(cost: dict) -> float:
    if isinstance(cost.get("total_tokens"), (int, float)):
        return float(cost["total_tokens"])
    found = [cost[k] for k in TOKEN_KEYS if isinstance(cost.get(k), (int, float))]
    return float(sum(found)) if found else math.nan


def cost_chooser(cost: str | tuple[str, ...] | list[str] = "usd"):
    """Which of a run's cost keys make its spend: those ending in ``cost`` (a string) or those named.

    >>> cost_chooser("usd")(["agent_usd", "user_usd", "input_tokens"]), cost_chooser(["agent_usd"])(["agent_usd", "x"])
    (['agent_usd', 'user_usd'], ['agent_usd'])
    """
    if isinstance(cost, str):
        return lambda keys: [k for k in keys if k == cost or k.endswith(cost)]
    wanted = set(cost)
    return lambda keys: [k for k in keys if k in wanted]


def read_spend(ledger, version: str | list[str], *, cost: Any = "usd", spec: Any = None,
               unknown: UnknownPolicy | str = "fail", scenario: str | None = None,
               condition: str | None = None) -> SpendArrays:
    """Stream the runs of ``version`` and keep what a decision needs (see the module docstring).

    ``cost`` chooses the spend's keys (:func:`cost_chooser`); ``spec`` a loaded grading spec whose
    severities each run's violations are counted under; ``unknown`` is ``"fail"`` (an unknown
    outcome counts as a failure) or ``"exclude"`` (its run is left out).
    """
    import orjson

    from ..record import condition_key

    choose = cost_chooser(cost)
    policy = UnknownPolicy.of(unknown)
    rows: list[tuple] = []
    severities: list[frozenset] | None = None if spec is None else []
    unknowns = 0
    keys: set[str] = set()
    for body, _source in ledger.run_bodies(version=version, scenario=scenario, condition=condition):
        doc = orjson.loads(body)
        outcome = doc.get("outcome") or {}
        passed = outcome.get("passed")
        unknowns += passed is None
        if not policy.keeps(passed):
            continue
        run_cost = doc.get("cost") or {}
        keys.update(choose(list(run_cost)))
        latency = doc.get("latency")
        rows.append((doc["scenario"], condition_key(doc.get("condition") or {}), 1.0 if passed is True else 0.0,
                     outcome.get("label") == "should_ask", _spend(run_cost, choose),
                     float(latency) if isinstance(latency, (int, float)) else math.nan, _tokens(run_cost)))
        if severities is not None:
            from ..grading import grade_run
            from ..record import Run

            grade = grade_run(Run.model_validate(doc), spec)
            severities.append(frozenset(v.severity for v in grade.violations))
    cols = list(zip(*rows, strict=True)) if rows else [()] * 7
    return SpendArrays(np.array(cols[0], dtype=object), np.array(cols[1], dtype=object),
                       np.array(cols[2], dtype=float), np.array(cols[3], dtype=bool), np.array(cols[4], dtype=float),
                       np.array(cols[5], dtype=float), np.array(cols[6], dtype=float),
                       None if severities is None else tuple(severities), unknowns, tuple(sorted(keys)))
