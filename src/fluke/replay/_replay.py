"""``replay``: re-drive the agent against the recorded tool I/O k times and measure fidelity.

A replay is faithful when it made the same calls with the same arguments in the same order
(any other request stops it at that step, with the difference) and reached the same outcome.
Fidelity is observed, never inferred from a temperature of zero or a fixed seed: the share of
faithful replays per run (Wilson interval) and overall (clustered by the run replayed when
there are several). Replays are stored as runs: the origin runs' identity with the harness
naming the replay and the digest of the runs replayed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..comparison import clustered_mean, wilson_interval
from ..runner import Case, evaluate
from ._continue import Continuation
from ._sources import LoggedRun, origin_identity

__all__ = ["ReplayOfRun", "Replays", "replay"]


@dataclass(frozen=True)
class ReplayOfRun:
    """The k replays of one run: how many were faithful, and where the first one diverged."""

    run: str
    scenario: str
    replays: int
    faithful: int
    same_calls: int
    same_outcome: int
    first_divergence: int | None
    difference: str | None
    low: float
    high: float


@dataclass(frozen=True)
class Replays:
    """Every replayed run, the overall share of faithful replays with its interval, and the
    version the replays were stored under."""

    runs: tuple[ReplayOfRun, ...]
    faithful: int
    replays: int
    low: float
    high: float
    version: str
    added: int
    resumed: int


Judged = tuple[bool, bool, "int | None", "str | None"]


def _judged(source: LoggedRun, log: dict[str, Any] | None, passed: bool | None) -> Judged:
    """(same calls and arguments, same outcome, first divergence step, the difference)."""
    recorded = source.log["calls"]
    if log is None:   # the replay itself raised before any tool answered
        return False, False, 0, "the replay raised"
    if log.get("diverged"):
        return False, passed == source.run.outcome.passed, log["diverged"]["step"], log["diverged"]["reason"]
    made = log["calls"]
    if len(made) < len(recorded):
        return (False, passed == source.run.outcome.passed, len(made),
                f"the agent stopped after {len(made)} of the {len(recorded)} recorded calls")
    return True, passed == source.run.outcome.passed, None, None


def replay(sources: Sequence[LoggedRun], agent: Callable[..., Any], tools: Any = None, *, k: int = 3,
           ledger: Any = None, executor: str = "local", workers: int | None = None,
           progress: Callable | None = None) -> Replays:
    """Replay each source run ``k`` times; store the replays in ``ledger`` (when given)."""
    ident = origin_identity([s.run for s in sources], {"verb": "replay"})
    by_key = {}
    cases = []
    for s in sources:
        condition = {**s.run.condition, "origin": s.run.hash[:16]}
        cases.append(Case(s.run.scenario, input={"log": s.log, "origin": s.run.hash}, unit=s.run.sampling_unit,
                          condition=condition, tags=tuple(s.run.tags)))
        by_key[(s.run.scenario, s.run.hash[:16])] = s
    result = evaluate(cases, Continuation(agent, tools, mode="replay"), k=k, ledger=ledger, identity=ident,
                      executor=executor, workers=workers, progress=progress)
    logs = _logs(ledger, result)
    per: dict[str, list[Judged]] = {}
    for r in result.results:
        source = by_key[(r.run.scenario, r.run.condition["origin"])]
        per.setdefault(source.run.hash, []).append(_judged(source, logs.get(r.run.hash), r.run.outcome.passed))
    rows, flags, clusters = [], [], []
    for s in sources:
        judged = per.get(s.run.hash, [])
        good = [calls and outcome for calls, outcome, _, _ in judged]
        steps = [(step, diff) for _, _, step, diff in judged if step is not None]
        first = min(steps, key=lambda sd: sd[0]) if steps else (None, None)
        low, high = wilson_interval(sum(good), len(good))
        rows.append(ReplayOfRun(s.run.hash, s.run.scenario, len(judged), sum(good), sum(c for c, _, _, _ in judged),
                                sum(o for _, o, _, _ in judged), first[0], first[1], low, high))
        flags.extend(good)
        clusters.extend([s.run.hash] * len(good))
    if len(sources) > 1:
        mean = clustered_mean([float(f) for f in flags], clusters)
        low, high = max(0.0, mean.low), min(1.0, mean.high)
    else:
        low, high = wilson_interval(sum(flags), len(flags))
    return Replays(tuple(rows), sum(flags), len(flags), low, high, result.version, result.added, result.resumed)


def _logs(ledger: Any, result: Any) -> dict[str, dict[str, Any]]:
    """The tool logs of the result's runs: fresh ones from the result, resumed ones from the ledger."""
    logs = {r.run.hash: dict(r.tool_log) for r in result.results if r.tool_log is not None}
    if ledger is not None and len(logs) < len(result.results):
        from ._sources import tool_logs

        stored = tool_logs(ledger)
        logs.update({r.run.hash: stored[r.run.hash] for r in result.results
                     if r.run.hash not in logs and r.run.hash in stored})
    return logs
