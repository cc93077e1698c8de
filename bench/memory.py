"""Peak RSS and CPU of the count verbs (or the report) on one ledger, for source trees in turn.

Each verb runs once per source tree (``PYTHONPATH``), one tree after the other for each verb,
so that "before" and "after" meet the same load; the figures are :func:`verbs.measure`'s (the
verb's own process tree, CPU from ``wait4``). Issue 37's memory rows in docs/ledger.md were
measured this way:

    python bench/memory.py --ledger /tmp/huge/bare-ledger-wide-10000000.db --sources OLD/src,src
    python bench/memory.py --ledger ledger-wide-1000000.db --sources OLD/src,src --report report.html

(``OLD/src`` a copy of main's sources, e.g. ``git archive main src | tar -x -C OLD``). Verbs that
would write to the ledger are run with ``--no-record``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import verbs as V  # noqa: E402  (the bench's own measure and verb commands)


def commands(ledger: str, report: str | None) -> dict[str, list[str]]:
    if report:
        return {"report": V.fluke("--ledger", ledger, "report", "--out", report, "--version", "model=model-a",
                                  "--version", "model=model-b")}
    every = V.verbs(ledger, Path("spec.json"), Path("."))
    chosen = {verb: cmd for verb, cmd in every.items() if verb in V.HUGE}
    chosen["passk default"] = chosen["passk"]
    chosen["passk"] = [*chosen["passk"], "--k", "1..10"]
    return chosen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ledger", required=True)
    ap.add_argument("--sources", required=True, help="comma-separated source trees (each put on PYTHONPATH)")
    ap.add_argument("--report", metavar="HTML", help="time the report of both versions, written here, instead")
    ap.add_argument("--timeout", type=float, default=1800.0)
    a = ap.parse_args()
    saved = os.environ.get("PYTHONPATH")
    try:
        for verb, cmd in commands(a.ledger, a.report).items():
            for src in a.sources.split(","):
                os.environ["PYTHONPATH"] = src
                t = V.measure(cmd, timeout=a.timeout)
                print(f"{verb:14} {src:30} wall {t[0]:7.2f} s  CPU {t.cpu:7.2f} s  peak {t[1]:5.0f} MB  "
                      f"tree {t.tree_mb:5.0f} MB  exit {t[2]}  load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


if __name__ == "__main__":
    main()
