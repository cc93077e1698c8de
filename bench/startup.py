#!/usr/bin/env python3
"""Start-up of a count verb: the CPU time of ``fluke summary`` in a fresh interpreter, against the
libraries' floor, interleaved (issue 37 holds ``summary`` of a 2,000-run ledger to 0.15 s CPU).

Each round runs, one after the other in their own processes: ``fluke summary`` once per source
tree given, then the floor, ``python -c "import click, rich, sqlite3, orjson"``, and, beside it,
the floor with the rich modules a table is drawn with (``rich.console``, ``rich.table``). The CPU
time (user + system) of each process comes from ``os.wait4``; the minimum over the rounds is
printed, with the load average before and after::

    python bench/startup.py --ledger /tmp/l.db /work/main/src src      # before and after
    python bench/startup.py --ledger /tmp/l.db --rounds 20 --args "--json summary" src

A 2,000-run ledger: ``python bench/verbs.py --sizes 2000 --verbs summary`` leaves one under its
``--dir``, or ingest any 2,000 runs.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys

PYTHON = sys.executable
FLOORS = {
    "floor: click, rich, sqlite3, orjson": "import click, rich, sqlite3, orjson",
    "floor + rich.console, rich.table": "import click, rich, sqlite3, orjson, rich.console, rich.table",
    "bare interpreter": "pass",
}


def cpu_of(cmd: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of ``cmd`` run to its end, its output discarded."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"bench: {shlex.join(cmd)} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", help="source trees (each put first on PYTHONPATH)")
    ap.add_argument("--ledger", required=True, help="the ledger summary reads")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--args", default="summary", help="the verb and its options (default: summary)")
    args = ap.parse_args()
    verb = shlex.split(args.args)
    runs = {tree: [PYTHON, "-c", "from fluke.cli import main; main()", "--ledger", args.ledger, *verb]
            for tree in args.trees}
    best: dict[str, float] = {}
    # bytecode as a user has it: written on a first, uncounted round, then read from __pycache__
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for tree, cmd in runs.items():
        cpu_of(cmd, {**base, "PYTHONPATH": os.path.abspath(tree)})
    load = os.getloadavg()[0]
    for _ in range(args.rounds):
        for tree, cmd in runs.items():
            env = {**base, "PYTHONPATH": os.path.abspath(tree)}
            best[tree] = min(best.get(tree, float("inf")), cpu_of(cmd, env))
        for name, code in FLOORS.items():
            best[name] = min(best.get(name, float("inf")), cpu_of([PYTHON, "-c", code], base))
    print(f"min CPU of {args.rounds} rounds, interleaved; load {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    for name, cpu in best.items():
        label = f"fluke {args.args} ({name})" if name in runs else name
        print(f"  {cpu:6.3f} s  {label}")


if __name__ == "__main__":
    main()
