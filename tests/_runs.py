"""Generated runs shaped like an eval suite's, shared by the tests that hold two paths to one answer.

:func:`generated` mixes what the count tables must carry faithfully: unknown outcomes, recorded
failure steps, failed tool calls, conditions, units, rewards, costs and latencies, over three
models and twelve scenarios. Tests compare two computations on these runs (the counts against
every run streamed, SQLite against Parquet and DuckDB), so the runs need not mean anything; the
seed makes each test's ledger the same on every machine.

>>> runs = generated(200, seed=1)
>>> len(runs), sorted({r.identity.model for r in runs})
(200, ['m1', 'm2', 'x3'])
>>> any(r.outcome.passed is None for r in runs) and any(r.outcome.died_at is not None for r in runs)
True
"""

from __future__ import annotations

import random

from click.testing import CliRunner

from fluke.cli import group
from fluke.record import AgentMessage, Identity, Outcome, Run, ToolCall, UserMessage


def generated(n: int, *, seed: int) -> list[Run]:
    """``n`` runs from ``seed``: model m1 passes 70% of the time, m2 and x3 55%, one in ten unknown."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        model = rng.choice(["m1", "m2", "x3"])
        events = [UserMessage(text="help")]
        for j in range(rng.randrange(1, 6)):
            events.append(rng.choice([AgentMessage(text="ok"), ToolCall(tool=f"tool{j}", ok=rng.random() < 0.6)]))
        bad = 0.3 if model == "m1" else 0.45
        passed = None if rng.random() < 0.1 else rng.random() > bad
        died = rng.choice([None, rng.randrange(len(events))]) if passed is False else None
        scenario = f"case{rng.randrange(12)}"
        out.append(Run(scenario=scenario, trial=i, identity=Identity(model=model),
                       unit=f"family{scenario[-1]}" if rng.random() < 0.5 else None,
                       condition={"noise": rng.choice(["none", "typos"])} if rng.random() < 0.5 else {},
                       cost={"usd": round(rng.random(), 3)} if rng.random() < 0.7 else {},
                       latency=rng.random() * 9 if rng.random() < 0.8 else None,
                       events=events, outcome=Outcome(passed=passed, died_at=died,
                                                      reward=rng.random() if rng.random() < 0.6 else None)))
    return out


def cli_json(ledger: str, *args: str) -> tuple[int, str]:
    """``fluke --ledger LEDGER --json ARGS...`` in this process: the exit code and standard output (all output
    on failure)."""
    result = CliRunner().invoke(group, ["--ledger", ledger, "--json", *args])
    return result.exit_code, result.stdout if result.exit_code == 0 else result.output
