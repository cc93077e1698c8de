"""Runs to chart a planted boundary: ``plan --explore`` against even and random spreading.

The agent is :func:`fluke.simulate.planted_agent` (case × records, rates 0.97 inside the
boundary and 0.2 past it). Each replication charts it in batches until the regions (bar, floor,
prob) match the planted truth on ``--target`` of the 24 points; the figures are the mean runs
per policy with two standard errors, and the ratio to explore's, with the machine's load.

Run ``python bench/boundary.py`` (40 replications) or ``--reps 10`` for a quick look.

>>> rows = runs_to_chart(reps=2, batch=24)
>>> sorted(rows) == ["even", "explore", "random"] and all(len(v) == 2 for v in rows.values())
True
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from fluke.simulate import planted_agent, search


def runs_to_chart(*, reps: int = 40, batch: int = 12, bar: float = 0.8, floor: float = 0.5, prob: float = 0.9,
                  target: float = 0.95, seed: int = 1000) -> dict[str, list[int]]:
    """Runs each policy needed, per replication (replication i uses seed + i for every policy)."""
    agent = planted_agent()
    return {policy: [search(agent, policy, np.random.default_rng(seed + i), bar=bar, floor=floor, prob=prob,
                            target=target, batch=batch) for i in range(reps)]
            for policy in ("explore", "even", "random")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--batch", type=int, default=12)
    args = parser.parse_args()
    rows = runs_to_chart(reps=args.reps, batch=args.batch)
    base = np.mean(rows["explore"])
    print(f"load average {os.getloadavg()[0]:.2f}; {args.reps} replications, batches of {args.batch}")
    for policy, runs in rows.items():
        runs = np.asarray(runs, float)
        se = runs.std(ddof=1) / np.sqrt(len(runs))
        print(f"{policy:8s} {runs.mean():7.1f} ± {2 * se:5.1f} runs; explore / {policy} = {base / runs.mean():.2f}")


if __name__ == "__main__":
    main()
