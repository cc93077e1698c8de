#!/usr/bin/env python3
"""One fluke command run inside this process: wall time, this process's CPU time and peak RSS,
and those of its children (a verb's worker processes), from ``getrusage``.

    python bench/cpu.py --ledger /tmp/bench12/ledger-1000000.db grade --spec spec.json --no-store

Standard output of the command is discarded; the figures go to standard error. For a verb
that fans out to worker processes (``grade``) it says how the work splits between the parent
and the workers, which on a shared machine tells more than the wall time.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import time


def main() -> None:
    from fluke.cli import main as fluke

    start = time.perf_counter()
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        try:
            fluke(sys.argv[1:])
        except SystemExit:
            pass
    wall = time.perf_counter() - start
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"wall {wall:.1f} s; parent CPU {me.ru_utime + me.ru_stime:.1f} s, peak {me.ru_maxrss / 1024:.0f} MB; "
          f"workers CPU {kids.ru_utime + kids.ru_stime:.1f} s, largest worker peak {kids.ru_maxrss / 1024:.0f} MB",
          file=sys.stderr)


if __name__ == "__main__":
    main()
