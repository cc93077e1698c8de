"""``fluke demo``: the main job on the embedded default (a SQLite ledger, a simulated agent).

For now the demo records a small simulated support-agent suite at two versions into a
SQLite ledger and prints the summary; the full analysed demo with its report replaces it.
"""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from ..ledger import open_ledger
from ..record import Identity, Outcome, Run, ToolCall, UserMessage
from ._common import Context, console, emit_json, json_option, pass_context

_STEPS = ("lookup_customer", "lookup_order", "check_policy", "issue_refund")


def demo_runs(*, scenarios: int = 12, k: int = 8, seed: int = 7) -> list[Run]:
    """A small suite: a support agent at v1 and at v2, where v2 fails ``check_policy`` twice as often.

    >>> runs = demo_runs(scenarios=2, k=3)
    >>> len(runs), sorted({r.identity.model for r in runs})
    (12, ['support-agent-v1', 'support-agent-v2'])
    """
    rng = np.random.default_rng(seed)
    runs = []
    for name, rates in (("support-agent-v1", (0.03, 0.03, 0.05, 0.03)),
                        ("support-agent-v2", (0.03, 0.03, 0.10, 0.03))):
        identity = Identity(model=name, harness="fluke-demo", world="support-sim", date="2026-11-30")
        fails = rng.random((scenarios, k, len(_STEPS))) < np.asarray(rates)
        for s in range(scenarios):
            for t in range(k):
                events = [UserMessage(text=f"Please refund order ORD-{1000 + s}.")]
                died = None
                for step, tool in enumerate(_STEPS):
                    ok = not fails[s, t, step]
                    events.append(ToolCall(tool=tool, args={"order_id": f"ORD-{1000 + s}"}, call_id=f"c{step}",
                                           ok=ok, result="ok" if ok else None, error=None if ok else "rejected"))
                    if not ok:
                        died = len(events) - 1
                        break
                runs.append(Run(scenario=f"refund/{s}", trial=t, identity=identity, events=events,
                                outcome=Outcome(passed=died is None, reward=float(died is None),
                                                label="complete" if died is None else "fail", died_at=died)))
    return runs


@click.command()
@click.option("--out", type=click.Path(file_okay=False), default="fluke-demo", show_default=True,
              help="Folder for the demo ledger.")
@json_option
@pass_context
def demo(ctx: Context, out: str) -> None:
    """Run the main job on the embedded default: simulate, record, summarise.

    \b
    Example:
      fluke demo --out /tmp/fluke-demo
    """
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    url = str(folder / "fluke.db")
    with open_ledger(url) as ledger:
        result = ledger.ingest(demo_runs())
        rows = ledger.counts()
        labels = {v.version: v.identity.label() for v in ledger.versions()}
    totals: dict[str, list[int]] = {}
    for r in rows:
        totals.setdefault(labels[r.version], [0, 0])
        totals[labels[r.version]][0] += r.trials
        totals[labels[r.version]][1] += r.passes
    if ctx.as_json:
        emit_json("demo", {"ledger": url, "added": result.added,
                           "versions": {k: {"trials": n, "passes": p} for k, (n, p) in totals.items()}})
        return
    out_ = console()
    out_.print(f"recorded {result.added} new runs into {url}")
    for label, (n, p) in totals.items():
        out_.print(f"  {label}: {p} of {n} runs passed")
    out_.print(f"next: fluke --ledger {url} summary")
