#!/usr/bin/env python3
"""``export_runs`` of the 200 τ-bench airline runs with and without the secret scan, for one source tree.

Prints the best of five exports each way, what the quick test (``may_hold_secret``) costs a run and
how many runs it flags. Run it once per tree, interleaved, and give the load average beside it:

    python bench/export_scan.py /work/main/src; python bench/export_scan.py src
"""

import io
import os
import sys
import tempfile
import time

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "src")

from fluke.adapters import read_file  # noqa: E402
from fluke.ledger import export_runs, open_ledger  # noqa: E402
from fluke.record import may_hold_secret  # noqa: E402

# The real path: a run's source path holding "secret" (this worktree's name) would flag every run.
RUNS = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "tau-bench",
                                     "historical_trajectories", "gpt-4o-airline.json"))

runs = list(read_file(RUNS))
with open_ledger(os.path.join(tempfile.mkdtemp(), "l.db")) as ledger:
    ledger.ingest(runs)
    best: dict[bool, float] = {}
    for _ in range(5):
        for scan in (False, True):
            buf = io.BytesIO()
            start = time.perf_counter()
            export_runs(ledger, buf, scan=scan)
            best[scan] = min(best.get(scan, float("inf")), time.perf_counter() - start)
bodies = buf.getvalue().splitlines()
start = time.perf_counter()
flagged = sum(1 for body in bodies if may_hold_secret(body))
gate = (time.perf_counter() - start) / len(bodies)
print(f"{sys.argv[1:] or ['src']}: {len(bodies)} runs; export {best[False] * 1e3:.0f} ms without the scan, "
      f"{best[True] * 1e3:.0f} ms with it; quick test {gate * 1e6:.0f} us a run, {flagged} flagged; "
      f"load {os.getloadavg()[0]:.1f}")
