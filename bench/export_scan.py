#!/usr/bin/env python3
"""``export_runs`` of the 200 τ-bench airline runs with and without the secret scan, for one source tree.

Prints the best of five exports each way, what the quick test (``may_hold_secret``) costs a run and
how many runs it flags. Run it once per tree, interleaved, and give the load average beside it:

    python bench/export_scan.py /work/main/src; python bench/export_scan.py src

With ``--ledger FILE`` it times the command instead, as issue 37 states its goal (``fluke export``
with the scan at most 1.5 times ``fluke export --no-scan``): each tree's ``fluke export`` both ways
in its own process, interleaved, ``--rounds`` times, the CPU time (user + system) of each from
``os.wait4``; prints the minimum of each and their ratio per tree, with the load average. The
ledger: ``python bench/verbs.py --shape wide --sizes 100000 --verbs export`` leaves one under its
``--dir``::

    python bench/export_scan.py --ledger /tmp/fluke-bench-verbs/ledger-wide-100000.db /work/main/src src
"""

import io
import os
import subprocess
import sys
import tempfile
import time


def cli(argv: list[str]) -> None:
    """``--ledger FILE [--rounds N] TREE...``: the CPU of ``fluke export`` with and without the scan."""
    ledger = argv[argv.index("--ledger") + 1]
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    trees = [a for i, a in enumerate(argv) if not a.startswith("--") and argv[i - 1] not in ("--ledger", "--rounds")]
    out = os.path.join(tempfile.mkdtemp(), "export.jsonl")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    best: dict[tuple[str, bool], float] = {}
    load = os.getloadavg()[0]
    for _ in range(rounds):
        for tree in trees:
            for scan in (False, True):
                cmd = [sys.executable, "-c", "from fluke.cli import main; main()", "--ledger", ledger, "export",
                       "-o", out, *([] if scan else ["--no-scan"])]
                proc = subprocess.Popen(cmd, env={**env, "PYTHONPATH": os.path.abspath(tree)},
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                _, status, usage = os.wait4(proc.pid, 0)
                if os.waitstatus_to_exitcode(status) != 0:
                    sys.exit(f"bench: {' '.join(cmd)} failed")
                key = (tree, scan)
                best[key] = min(best.get(key, float("inf")), usage.ru_utime + usage.ru_stime)
    print(f"min CPU of {rounds} rounds, interleaved; load {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    for tree in trees:
        print(f"  {tree}: export {best[tree, True]:.2f} s, --no-scan {best[tree, False]:.2f} s, "
              f"ratio {best[tree, True] / best[tree, False]:.2f}")
    for tree in trees:   # the quick test alone, a run, on each engine the tree has
        done = subprocess.run([sys.executable, "-c", GATE, ledger], env={**env, "PYTHONPATH": os.path.abspath(tree)},
                              capture_output=True, text=True)
        print(f"  {tree}: quick test {done.stdout.strip() or done.stderr.strip()[-200:]}")


#: The quick test (``may_hold_secret``) on the first 5,000 stored bodies, best of three, per engine.
GATE = """
import sys, time
from fluke import _redact
from fluke.ledger import open_ledger
with open_ledger(sys.argv[1], create=False) as ledger:
    bodies = [b if isinstance(b, bytes) else b.encode() for b, _ in ledger.run_bodies(limit=5000)]
out = []
for engine in ("automaton", "hyperscan") if hasattr(_redact, "ENGINE") else (None,):
    if engine:
        _redact.ENGINE = engine
    best, flagged = float("inf"), 0
    for _ in range(3):
        start = time.process_time()
        flagged = sum(map(_redact.may_hold_secret, bodies))
        best = min(best, time.process_time() - start)
    out.append(f"{engine or 'the one engine'} {best / len(bodies) * 1e6:.1f} us a run ({flagged} flagged)")
size = sum(map(len, bodies)) / len(bodies)
print("; ".join(out) + f"; {len(bodies)} bodies of {size / 1000:.1f} KB")
"""


if "--ledger" in sys.argv:
    cli(sys.argv[1:])
    sys.exit(0)

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
from fluke import _redact  # noqa: E402

gates = []
for engine in ("automaton", "hyperscan") if hasattr(_redact, "ENGINE") else (None,):
    if engine:   # each engine forced in turn (by default the automaton scans a process's first 4 MiB)
        _redact.ENGINE = engine
    for _ in range(3):   # the first pass builds the engine and compiles the rules its keywords name
        start = time.process_time()
        flagged = sum(1 for body in bodies if may_hold_secret(body))
        gate = (time.process_time() - start) / len(bodies)
    gates.append(f"{gate * 1e6:.0f} us CPU a run{f' on the {engine}' if engine else ''}")
print(f"{sys.argv[1:] or ['src']}: {len(bodies)} runs; export {best[False] * 1e3:.0f} ms without the scan, "
      f"{best[True] * 1e3:.0f} ms with it; quick test {', '.join(gates)}, {flagged} flagged; "
      f"load {os.getloadavg()[0]:.1f}")
