"""``fluke replay`` and ``fluke intervene`` as analysis calls: read the recorded runs and their
tool logs from the ledger, load the suite's agent and tools, run through the runner, answer.

>>> from fluke.analysis._intervention import parse_interventions
>>> [i.action for i in parse_interventions(respond='{"account": "a"}', sets=("retry=3",))]
['respond', 'set']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..format import (fmt_num, fmt_points, fmt_points_interval, fmt_share, fmt_share_interval, plural,
                      safe)
from ._document import Column, Table, line, note
from ._result import Result

__all__ = ["InterventionResult", "ReplayResult", "intervene_runs", "parse_interventions", "replay_runs"]


def parse_interventions(*, respond: str | None = None, raise_: str | None = None, sets: Sequence[str] = (),
                        forget: Sequence[str] = (), remember: Sequence[str] = ()) -> list[Any]:
    """The interventions the command line names: ``--respond JSON``, ``--raise TEXT``,
    ``--set NAME=JSON``, ``--forget KEY``, ``--remember KEY=JSON``."""
    from ..replay import parse_intervention

    found = []
    if respond is not None:
        found.append(parse_intervention(f"respond={respond}"))
    if raise_ is not None:
        found.append(parse_intervention(f"raise={raise_}"))
    found += [parse_intervention(f"set:{text}") for text in sets]
    found += [parse_intervention(f"forget={key}") for key in forget]
    found += [parse_intervention(f"remember:{text}") for text in remember]
    return found


def _suite(suite_file: str) -> Any:
    from ..runner import load_suite

    return load_suite(suite_file)


@dataclass(frozen=True)
class ReplayResult(Result):
    """The observed reproduction fidelity of replayed runs."""

    kind = "replay"
    suite: str
    replays: Any

    def payload(self) -> dict[str, Any]:
        r = self.replays
        return {"suite": self.suite, "version": r.version, "faithful": r.faithful, "replays": r.replays,
                "fidelity": r.faithful / r.replays if r.replays else None, "low": r.low, "high": r.high,
                "added": r.added, "resumed": r.resumed,
                "runs": [{"run": x.run, "scenario": x.scenario, "replays": x.replays, "faithful": x.faithful,
                          "same_calls": x.same_calls, "same_outcome": x.same_outcome,
                          "first_divergence": x.first_divergence, "difference": x.difference,
                          "low": x.low, "high": x.high} for x in r.runs]}

    def blocks(self) -> list:
        r = self.replays
        rows = [[x.run[:12], x.scenario, fmt_share_interval(x.faithful, x.replays, x.low, x.high),
                 fmt_share(x.same_calls, x.replays), fmt_share(x.same_outcome, x.replays),
                 "—" if x.first_divergence is None else str(x.first_divergence),
                 "" if x.difference is None else safe(x.difference)[:160]] for x in r.runs]
        cols = [Column("run", key=True), Column("scenario"), Column("faithful", "right"),
                Column("same calls", "right"), Column("same outcome", "right"), Column("first divergence", "right"),
                Column("difference")]
        return [line(f"reproduction fidelity {fmt_share_interval(r.faithful, r.replays, r.low, r.high)} "
                     f"of {plural(r.replays, 'replay')} of {plural(len(r.runs), 'run')}"),
                Table(f"{plural(len(r.runs), 'run')} replayed", cols, rows, more="runs"),
                note("observed, not inferred from temperature or seeds: a replay is faithful when it made the "
                     "recorded calls with the recorded arguments and reached the recorded outcome; the first "
                     "request the recording does not hold stops it there (no stale response is served)"),
                note(f"replays stored as version {r.version[:12]}: {r.added} added, {r.resumed} already there; "
                     "interval: Wilson per run, clustered by run overall")]


@dataclass(frozen=True)
class InterventionResult(Result):
    """The effect of an intervention over continuations, beside what it rests on."""

    kind = "intervention"
    suite: str
    result: Any

    def payload(self) -> dict[str, Any]:
        r, e = self.result, self.result.effect
        arm = lambda a: {"version": a.version, "passes": a.passes, "judged": a.judged, "low": a.low,  # noqa: E731
                         "high": a.high, "refused": a.refused, "served": a.served,
                         "needed_simulator": a.needed_simulator, "continuations": a.continuations,
                         "added": a.added, "resumed": a.resumed}
        needed, total = r.needed_simulator
        return {"suite": self.suite, "interventions": [i.to_dict() for i in r.interventions],
                "intervention_digest": r.digest, "step": r.step, "n": r.n, "runs": list(r.runs),
                "coupling": r.coupling, "target": r.target, "stale_reuse": r.stale,
                "effect": {"estimate": e.estimate, "low": e.low, "high": e.high, "se": e.se,
                           "confidence_level": e.confidence_level, "variance_factor": e.variance_factor,
                           "reason": e.reason},
                "needed_simulator": needed, "continuations": total,
                "baseline": arm(r.baseline), "intervened": arm(r.intervened)}

    def blocks(self) -> list:
        r, e = self.result, self.result.effect
        needed, total = r.needed_simulator
        what = "; ".join(i.describe() for i in r.interventions)
        out = [line(f"intervention at tool call {r.step}: {safe(what)}")]
        if e.reason and e.estimate != e.estimate:
            out.append(line(f"effect on the pass rate: too small to tell ({e.reason})"))
        else:
            out.append(line(f"effect on the pass rate {fmt_points(e.estimate)} ({round(100 * e.confidence_level)}% "
                            f"interval {fmt_points_interval(e.low, e.high)})"))
            if e.reason:
                out.append(note(e.reason))
        rows = [[name, fmt_share_interval(a.passes, a.judged, a.low, a.high), str(a.refused),
                 ", ".join(f"{k} {v}" for k, v in a.served.items()) or "—", a.version[:12]]
                for name, a in (("baseline", r.baseline), ("intervened", r.intervened))]
        out.append(Table(f"{r.n} continuations per run and arm, from {plural(len(r.runs), 'recorded run')}",
                         [Column("arm", key=True), Column("pass rate", "right"), Column("refused", "right"),
                          Column("calls served by"), Column("version")], rows))
        out.append(line(f"needed the simulator: {fmt_share(needed, total)} of continuations"))
        out.append(note(f"targets the {r.target}"))
        if r.coupling == "coupled":
            factor = fmt_num(e.variance_factor, 2)
            out.append(note(f"coupling reduced the variance of the estimate by a factor of {factor} "
                            "against independent arms of the same size (measured on these draws)"))
        refused = r.baseline.refused + r.intervened.refused
        if refused:
            out.append(line(f"{plural(refused, 'continuation')} refused: a request the recording does not hold, "
                            "with no simulator declared to answer it (a recorded response is reused only where "
                            "request and state digests match)"))
        if r.stale:
            out.append(line("stale reuse FORCED: recorded responses were served for requests or states they were "
                            "not recorded for; this effect is biased and shown only to measure that bias",
                            style="bad"))
        out.append(note(f"runs {', '.join(h[:12] for h in r.runs[:5])}{' …' if len(r.runs) > 5 else ''}; "
                        f"intervention digest {r.digest[:12]}; outcomes: passed as recorded by the agent, "
                        f"a refused continuation left out; interval: normal on "
                        f"{'paired differences' if r.coupling == 'coupled' else 'two independent arms'}, "
                        "per-arm rates Wilson"))
        return out


def replay_runs(ledger: Any, suite_file: str, selectors: Sequence[str] = (), *, scenario: str | None = None,
                k: int = 3, executor: str = "local", workers: int | None = None,
                progress: Callable | None = None) -> ReplayResult:
    """Replay the selected logged runs of ``ledger`` k times with SUITE.py's agent; store the replays."""
    from ..replay import replay, select_sources

    sources = select_sources(ledger, selectors, scenario=scenario)
    suite = _suite(suite_file)
    result = replay(sources, suite.agent, suite.tools, k=k, ledger=ledger, executor=executor, workers=workers,
                    progress=progress)
    return ReplayResult(suite_file, result)


def intervene_runs(ledger: Any, suite_file: str, selectors: Sequence[str], interventions: Sequence[Any], *,
                   step: int, n: int = 200, coupling: str = "coupled", seed: int = 0, stale: bool = False,
                   scenario: str | None = None, executor: str = "local", workers: int | None = None,
                   progress: Callable | None = None) -> InterventionResult:
    """Intervene at ``step`` of the selected logged runs; n continuations per run and arm, stored."""
    from ..replay import intervene, select_sources

    sources = select_sources(ledger, selectors, scenario=scenario)
    suite = _suite(suite_file)
    result = intervene(sources, suite.agent, suite.tools, interventions, step=step, n=n, coupling=coupling,
                       seed=seed, stale=stale, ledger=ledger, executor=executor, workers=workers, progress=progress)
    return InterventionResult(suite_file, result)
