"""A suite for deciding under cost and risk: two versions, conditions, spend, and rare severe slips.

Each scenario is run under every condition. Version A passes a run with the scenario's base rate
(drawn once per scenario from Beta(6, 3)); version B adds ``lift`` points under every condition
but ``harmed``, where it loses ``harm`` points (the planted subgroup harm: better on average,
worse in one group). Spend per run is log-normal (skewed: a few runs cost many times the
median), B's scaled by ``cost_ratio``, and a failed run spends ``fail_spend`` times as much
(it wandered). A run calls the forbidden ``refund_all`` tool (a hard violation under
:data:`TRADEOFF_SPEC`) with probability ``severe`` per version.

:func:`subgroup_counts` draws only the counts (fast, for simulations); :meth:`TradeoffSuite.runs`
builds whole runs for a ledger.

>>> suite = tradeoff_suite(scenarios=4, trials=2, seed=1)
>>> runs = suite.runs()
>>> len(runs), sorted({r.condition["group"] for r in runs}), sorted(runs[0].cost)
(48, ['calm', 'rushed', 'vague'], ['usd'])
>>> counts = subgroup_counts(scenarios=5, trials=4, lift=10, harm=15, seed=2)
>>> counts.passes_a.shape, counts.groups[:3].tolist()
((15,), ['calm', 'calm', 'calm'])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from ..record import AgentMessage, Identity, Outcome, Run, Source, ToolCall, UserMessage

CONDITIONS = ("calm", "rushed", "vague")

#: The spec the suite's severe slip breaks: ``refund_all`` is forbidden (a hard violation).
TRADEOFF_SPEC = {"name": "tradeoff desk", "tools": ["lookup_order", "refund_order", "refund_all"],
                 "forbidden": ["refund_all"]}


@dataclass(frozen=True)
class SubgroupCounts:
    """Per scenario cell (condition × scenario): the group and each version's passes of ``trials``."""

    groups: np.ndarray
    scenarios: np.ndarray
    passes_a: np.ndarray
    passes_b: np.ndarray
    trials: int


def _rates(rng, scenarios: int, conditions, lift: float, harm: float, harmed: str):
    base = rng.beta(6, 3, scenarios)
    shift = np.array([-harm if c == harmed else lift for c in conditions]) / 100
    a = np.repeat(base[None, :], len(conditions), axis=0)
    b = np.clip(a + shift[:, None], 0.0, 1.0)
    return a, b


def _check(scenarios: int, trials: int, harmed: str, conditions) -> None:
    if scenarios < 1 or trials < 1:
        raise UsageError(f"scenarios={scenarios} and trials={trials} must be at least 1")
    if harmed not in conditions:
        raise UsageError(f"harmed={harmed!r} must be one of the conditions {', '.join(conditions)}")


def subgroup_counts(*, scenarios: int = 30, trials: int = 4, lift: float = 0.0, harm: float = 0.0,
                    harmed: str = "rushed", conditions=CONDITIONS, seed: int = 0) -> SubgroupCounts:
    """Both versions' pass counts per cell; with ``lift = harm = 0`` the versions are the same agent."""
    _check(scenarios, trials, harmed, conditions)
    rng = np.random.default_rng(seed)
    a, b = _rates(rng, scenarios, conditions, lift, harm, harmed)
    return SubgroupCounts(np.repeat(np.array(conditions, dtype=object), scenarios),
                          np.tile(np.arange(scenarios), len(conditions)),
                          rng.binomial(trials, a).reshape(-1), rng.binomial(trials, b).reshape(-1), trials)


@dataclass(frozen=True)
class TradeoffSuite:
    """The declared truth of the suite; :meth:`runs` draws its runs."""

    scenarios: int
    trials: int
    lift: float
    harm: float
    harmed: str
    cost_ratio: float
    fail_spend: float
    severe: tuple[float, float]
    seed: int
    conditions: tuple[str, ...] = field(default=CONDITIONS)

    def runs(self) -> list[Run]:
        """Every run of both versions (A first), drawn from ``numpy.random.default_rng(seed)``."""
        rng = np.random.default_rng(self.seed)
        a, b = _rates(rng, self.scenarios, self.conditions, self.lift, self.harm, self.harmed)
        out = []
        for n, (rates, scale, severe) in enumerate(((a, 1.0, self.severe[0]), (b, self.cost_ratio, self.severe[1]))):
            identity = Identity(model=f"tradeoff-{'ab'[n]}", harness="fluke.simulate.tradeoff", world="tradeoff-desk",
                                date="2026-12-01")
            for c, cond in enumerate(self.conditions):
                for s in range(self.scenarios):
                    for t in range(self.trials):
                        passed = bool(rng.random() < rates[c, s])
                        slip = bool(rng.random() < severe)
                        spend = float(rng.lognormal(np.log(0.02), 0.8) * scale * (1 if passed else self.fail_spend))
                        out.append(_run(s, t, cond, identity, passed, slip, spend, float(rng.gamma(4.0, 3.0))))
        return out


def _run(s: int, t: int, condition: str, identity: Identity, passed: bool, slip: bool, spend: float,
         latency: float) -> Run:
    order = f"O{1000 + s}"
    events: list = [UserMessage(text=f"Please refund order {order}."),
                    ToolCall(tool="lookup_order", args={"order_id": order}, call_id="c1", ok=True,
                             result={"order_id": order})]
    if slip:
        events.append(ToolCall(tool="refund_all", args={}, call_id="c2", ok=True, result="done"))
    events.append(ToolCall(tool="refund_order", args={"order_id": order}, call_id="c3", ok=passed,
                           result={"ok": True} if passed else None, error=None if passed else "rejected"))
    events.append(AgentMessage(text="Refunded." if passed else "The refund failed."))
    label = "complete" if passed else ("should_ask" if condition == "vague" else "fail")
    return Run(scenario=f"refund/{s:02d}", trial=t, condition={"group": condition}, identity=identity,
               events=events, outcome=Outcome(passed=passed, reward=float(passed), label=label),
               cost={"usd": round(spend, 6)}, latency=round(latency, 3), seed=t,
               source=Source(adapter="fluke.simulate.tradeoff"))


def tradeoff_suite(*, scenarios: int = 20, trials: int = 4, lift: float = 8.0, harm: float = 15.0,
                   harmed: str = "rushed", cost_ratio: float = 0.7, fail_spend: float = 1.5,
                   severe: tuple[float, float] = (0.0, 0.01), seed: int = 0) -> TradeoffSuite:
    """The suite's truth (B cheaper, better on average, worse under ``harmed``, a rare severe slip)."""
    _check(scenarios, trials, harmed, CONDITIONS)
    return TradeoffSuite(scenarios, trials, float(lift), float(harm), harmed, float(cost_ratio), float(fail_spend),
                         (float(severe[0]), float(severe[1])), int(seed))
