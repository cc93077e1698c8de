"""A simulated agent with a planted boundary over two axes, and the search that charts it.

The agent handles account requests. The axis ``case`` (categorical) says what is odd about
the request: nothing (``unique``), two customers share the name (``same_name``), the order
identifier is missing (``missing_id``), or the caller lacks permission (``no_permission``).
Only at ``unique`` is the right outcome to complete; at the others it is to ask (or to obtain
authorisation, or stop), recorded as the label ``should_ask``. The axis ``records`` (ordered)
is how many records the lookup returns: past a limit that depends on the case, the agent
loses track and proceeds wrongly (label ``fail``).

The planted truth: at each point the agent does the right thing with probability
``works_rate`` up to the case's limit and ``fails_rate`` past it. :func:`search` charts the
space by a run policy (``explore``: :func:`fluke.boundary.plan_exploration` re-planned after every
batch; ``even``: the fewest-runs point next; ``random``) and counts the runs until the chart's
regions match the truth on a share ``target`` of the points.

>>> agent = planted_agent()
>>> agent.space.size, agent.truth_region(("unique", "20")), agent.truth_region(("same_name", "10"))
(24, 'works', 'fails')
>>> runs = agent.runs_at(("same_name", "1"), 3, np.random.default_rng(0))
>>> runs[0].condition, sorted({r.outcome.label for r in runs})
({'case': 'same_name', 'records': 1}, ['should_ask'])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..boundary import Space, plan_exploration, regions_of
from ..errors import UsageError
from ..record import AgentMessage, Identity, Outcome, Run, Source, ToolCall, UserMessage

__all__ = ["PlantedAgent", "planted_agent", "search", "POLICIES"]

#: The space the agent is charted on.
SPACE = {"name": "account desk", "axes": {
    "case": {"levels": ["unique", "same_name", "missing_id", "no_permission"]},
    "records": {"levels": [1, 2, 5, 10, 20, 50], "ordered": True}}}
#: The most records each case still handles (the planted boundary).
LIMITS = {"unique": 20, "same_name": 5, "missing_id": 10, "no_permission": 2}
POLICIES = ("explore", "even", "random")


@dataclass(frozen=True)
class PlantedAgent:
    """The agent's space, its planted limits and rates, and a way to draw its runs."""

    space: Space
    limits: dict[str, int] = field(default_factory=lambda: dict(LIMITS))
    works_rate: float = 0.97
    fails_rate: float = 0.2
    version: str = "account-desk-v1"

    def rate(self, point: tuple[str, ...]) -> float:
        case, records = point
        return self.works_rate if int(records) <= self.limits[case] else self.fails_rate

    def truth_region(self, point: tuple[str, ...]) -> str:
        """'works' below the case's limit, 'fails' past it (the rates sit outside [floor, bar])."""
        return "works" if int(point[1]) <= self.limits[point[0]] else "fails"

    def rates(self) -> np.ndarray:
        return np.array([self.rate(p) for p in self.space.points()])

    def runs_at(self, point: tuple[str, ...], n: int, rng: np.random.Generator, *, first_trial: int = 0,
                scenario: str | None = None) -> list[Run]:
        """``n`` runs at ``point``: the right move (complete, or ask) with the point's rate, else a wrong one."""
        case, records = point
        out = []
        for t in range(first_trial, first_trial + n):
            right = bool(rng.random() < self.rate(point))
            events: list = [UserMessage(text=f"Please update the account ({case}, {records} records on file)."),
                            ToolCall(tool="lookup_account", args={"records": int(records)}, call_id=f"c{t}", ok=True,
                                     result={"matches": int(records)})]
            if right and case == "unique":
                events.append(ToolCall(tool="update_account", args={"record": 0}, call_id=f"u{t}", ok=True))
                label, text = "complete", "Done: the account is updated."
            elif right:
                label, text = "should_ask", "Before I change anything: which account do you mean, and may I?"
            else:
                events.append(ToolCall(tool="update_account", args={"record": int(rng.integers(int(records)))},
                                       call_id=f"u{t}", ok=True))
                label, text = "fail", "Done: I updated an account."
            events.append(AgentMessage(text=text))
            out.append(Run(scenario=scenario or f"account/{case}", trial=t, unit=scenario or f"account/{case}",
                           condition={"case": case, "records": int(records)}, identity=Identity(model=self.version),
                           events=events, outcome=Outcome(passed=right, reward=float(right), label=label,
                                                          died_at=None if right else len(events) - 2),
                           tags=[f"kind:{'regression' if case == 'unique' else 'frontier'}"],
                           source=Source(adapter="fluke.simulate.boundary")))
        return out

    def suite(self, trials: int, *, seed: int = 0, skip: tuple[tuple[str, ...], ...] = ()) -> list[Run]:
        """``trials`` runs at every point but those in ``skip`` (named, not run)."""
        rng = np.random.default_rng(seed)
        return [r for p in self.space.points() if p not in skip for r in self.runs_at(p, trials, rng)]


def planted_agent(**overrides) -> PlantedAgent:
    """The agent over :data:`SPACE` with the planted :data:`LIMITS` (rates and limits may be overridden)."""
    return PlantedAgent(Space.from_mapping(SPACE), **overrides)


def search(agent: PlantedAgent, policy: str, rng: np.random.Generator, *, bar: float = 0.8, floor: float = 0.5,
           prob: float = 0.9, target: float = 0.95, batch: int = 12, max_runs: int = 20_000) -> int:
    """Runs until the chart matches the planted regions on ``target`` of the points, following ``policy``.

    Each batch of ``batch`` runs is placed by the policy from the counts so far, then drawn from the
    agent's rates (only pass or fail matters to the regions, so the draws are Bernoulli).

    >>> agent = planted_agent()
    >>> search(agent, "explore", np.random.default_rng(1)) < search(agent, "even", np.random.default_rng(1))
    True
    """
    if policy not in POLICIES:
        raise UsageError(f"policy {policy!r} is not one of {', '.join(POLICIES)}")
    points = agent.space.points()
    truth = np.array([agent.truth_region(p) for p in points], dtype=object)
    rates = agent.rates()
    n = len(points)
    passes = np.zeros(n, dtype=int)
    runs = np.zeros(n, dtype=int)
    spent = 0
    while spent < max_runs:
        if policy == "explore":
            add = np.array(plan_exploration(passes, runs, budget=batch, bar=bar, floor=floor, prob=prob).runs)
        elif policy == "even":
            add = np.zeros(n, dtype=int)
            for _ in range(batch):
                add[int(np.argmin(runs + add))] += 1   # argmin takes the first of equals
        else:
            add = np.bincount(rng.integers(n, size=batch), minlength=n)
        passes += rng.binomial(add, rates)
        runs += add
        spent += batch
        if np.mean(regions_of(passes, runs, bar, floor, prob) == truth) >= target:
            return spent
    return spent
