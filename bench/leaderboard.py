#!/usr/bin/env python3
"""Leaderboard benchmark: ``fluke.analysis.leaderboard`` over a synthetic ledger of N runs (no events).

13 versions × 500 scenarios, every run with a latency and a cost. Prints the time to ingest
(for context), then the median time of the leaderboard reading counts only (``costs=False``)
and with cost and latency (two aggregate queries over the stored runs).

    python bench/leaderboard.py                      # 1,000,000 runs into a SQLite file
    python bench/leaderboard.py --n 200000 --postgres-url postgresql://me@localhost/bench
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from fluke.analysis import leaderboard
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

VERSIONS = 13
SCENARIOS = 500


def runs(n: int):
    identities = [Identity(model=f"model-{v}", harness="bench") for v in range(VERSIONS)]
    for i in range(n):
        v, s, t = i % VERSIONS, (i // VERSIONS) % SCENARIOS, i // (VERSIONS * SCENARIOS)
        bar = 40 + 3 * v + (s % 7) * 5
        yield Run(scenario=f"scenario-{s}", trial=t, identity=identities[v], latency=1.0 + (i % 5),
                  cost={"usd": 0.001 * (1 + v)}, outcome=Outcome(passed=(i * 2654435761) % 100 < bar))


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--postgres-url", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    url = args.postgres_url or os.path.join(tempfile.mkdtemp(), "leaderboard.db")
    with open_ledger(url) as ledger:
        start = time.perf_counter()
        ledger.ingest(runs(args.n))
        print(f"ingest: {args.n:,} runs in {time.perf_counter() - start:.1f} s ({url.split('://')[0]})")
        counts_only = median_seconds(lambda: leaderboard(ledger, costs=False), args.repeats)
        with_costs = median_seconds(lambda: leaderboard(ledger, costs=True), args.repeats)
        print(f"leaderboard over {args.n:,} runs ({VERSIONS} versions × {SCENARIOS} scenarios, 2000 rank "
              f"replicates): {counts_only:.2f} s from counts; {with_costs:.2f} s with cost and latency "
              f"(median of {args.repeats})")


if __name__ == "__main__":
    main()
