"""Coverage of ``fluke intervene``'s effect interval on the simulated support agent.

From one recorded run whose account lookup (tool call 1) timed out, each repetition runs the
intervention "timeout → success" (true effect: the lookup effect, 0.10) over n continuations
with a fresh seed, coupled and fresh, and counts how often the 95% interval holds the truth;
it also prints the mean width of each and the variance ratio of their estimates against the
median measured variance factor. Each share comes with its Monte Carlo error (2 standard errors).

``python bench/intervention.py --reps 200 --n 100`` takes a few minutes on one idle core.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile

import numpy as np

from fluke.ledger import open_ledger
from fluke.replay import Intervention, intervene, select_sources
from fluke.runner import evaluate
from fluke.simulate import SUPPORT_TOOLS, support_tool_agent, support_tool_cases

TRUTH = 0.10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=int, default=100)
    args = parser.parse_args()
    with open_ledger(os.path.join(tempfile.mkdtemp(), "bench.db")) as ledger:
        recorded = evaluate(support_tool_cases(20), support_tool_agent, k=1, tools=SUPPORT_TOOLS, ledger=ledger,
                            identity={"model": "sim-support", "date": "2026-12-01"})
        run = next(r.run for r in recorded.results if r.tool_log["calls"][1]["error"])
        sources = select_sources(ledger, [run.hash])
    success = Intervention("respond", value={"account": run.scenario, "plan": "standard"})
    found: dict[str, list] = {"coupled": [], "fresh": []}
    factors = []
    for rep in range(args.reps):
        for coupling in found:
            e = intervene(sources, support_tool_agent, SUPPORT_TOOLS, [success], step=1, n=args.n,
                          coupling=coupling, seed=1000 + rep).effect
            found[coupling].append((e.estimate, e.low, e.high))
            if coupling == "coupled" and math.isfinite(e.variance_factor):
                factors.append(e.variance_factor)
    for coupling, rows in found.items():
        est, low, high = (np.array(x) for x in zip(*rows, strict=True))
        covered = float(np.mean((low <= TRUTH) & (TRUTH <= high)))
        mc = 2 * math.sqrt(covered * (1 - covered) / len(rows))
        print(f"{coupling:8s} coverage {covered:.3f} ± {mc:.3f}  mean width {100 * np.mean(high - low):.1f} points  "
              f"mean estimate {np.mean(est):+.3f}")
    ratio = np.var([r[0] for r in found["fresh"]], ddof=1) / np.var([r[0] for r in found["coupled"]], ddof=1)
    print(f"variance of fresh / coupled estimates {ratio:.2f}; median measured factor {np.median(factors):.2f}")


if __name__ == "__main__":
    main()
