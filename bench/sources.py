#!/usr/bin/env python3
"""One fluke command under several source trees, interleaved: wall time, CPU time of the process tree,
peak RSS (its own and its tree's), from :func:`verbs.measure`. The load average is printed last.

    python bench/sources.py /work/main/src,src 2 --ledger L.db leaderboard
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verbs  # noqa: E402


def main() -> None:
    srcs, reps, args = sys.argv[1].split(","), int(sys.argv[2]), sys.argv[3:]
    for _ in range(reps):
        for src in srcs:
            os.environ["PYTHONPATH"] = str(Path(src).resolve())
            t = verbs.measure(verbs.fluke(*args))
            print(f"{src}: {t[0]:.2f} s wall, {t.cpu:.2f} s CPU, {t[1]:.0f} MB (tree {t.tree_mb:.0f} MB), "
                  f"exit {t[2]}", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
