#!/usr/bin/env python3
"""Did the runs make every gold action, and does that agree with the benchmark's own score?

Grades recorded τ-bench and τ²-bench runs with the spec ``reference: gold`` (superset mode:
every gold action made, with exactly its arguments, successfully; other calls allowed) and
puts, per task, the share of runs that made every gold action beside the file's own reward.
Then the agreement table over runs, and each disagreement with what explains it:

* τ-bench scores the final database (and, for a few tasks, the answer text), not the calls:
  a missed call that changes nothing (a look-up, ``calculate``, a hand-off summary) can still
  score 1, and an extra write (a second cancellation) scores 0 although every gold action was
  made. Each disagreement is put in one of those classes by looking at the calls.
* τ²-bench also records its own action check (``reward_info.action_checks``): fluke's verdict
  is compared with it as well.

Usage (from the repository root):
    PYTHONPATH=src python examples/gold_agreement.py            # both benchmarks
    PYTHONPATH=src python examples/gold_agreement.py --tau2-only
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from fluke.adapters import read_file
from fluke.grading import grade_run, load_spec

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TAU = DATA / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
TAU2 = sorted((DATA / "tau2-bench").glob("**/*airline*.json"))
#: The airline tools that change the database; every other tool only reads (or hands off).
WRITES = frozenset({"book_reservation", "cancel_reservation", "update_reservation_flights",
                    "update_reservation_baggages", "update_reservation_passengers", "send_certificate"})
SPEC = {"reference": "gold", "ground": False, "secrets": False}


@dataclass
class Agreement:
    """Per task (runs, made every gold action, reward 1), the 2x2 table, the disagreements."""

    tasks: dict[str, list[int]] = field(default_factory=dict)
    table: Counter = field(default_factory=Counter)          # (made_all, reward_passed) -> runs
    why: Counter = field(default_factory=Counter)            # explanation -> runs
    cases: list[tuple[str, int, str]] = field(default_factory=list)
    own: Counter = field(default_factory=Counter)            # (made_all, benchmark action check)


def _explain(run, grade, record: dict) -> str:
    made_all = grade.reference.complete
    missed = [run.gold[x].tool for x in range(len(run.gold)) if x not in {p for p, _ in grade.reference.pairs}]
    if not made_all:
        if not WRITES.intersection(missed):
            return "reward 1, missed only calls that change no state (" + ", ".join(sorted(set(missed))) + ")"
        return "reward 1, a gold write made with other arguments that left the same state"
    used = {i for _, i in grade.reference.pairs}
    extra = [e.tool for i, e in enumerate(run.events)
             if e.kind == "tool" and e.ok and e.tool in WRITES and i not in used]
    if extra:
        return "reward 0, an extra successful write changed the state (" + ", ".join(sorted(set(extra))) + ")"
    info = (record.get("info") or {}).get("reward_info") or (record.get("reward_info") or {})
    if not info or info.get("info") is None and "reward_breakdown" not in info:
        return "reward 0, the benchmark recorded no reward details for this run"
    if "r_outputs" in (info.get("info") or {}):
        return "reward 0, the answer lacked an output the task requires"
    failed = [k for k, v in (info.get("reward_breakdown") or {}).items() if v < 1]
    if not failed:
        return f"reward 0, the run ended with {record.get('termination_reason')} before it was scored in full"
    return "reward 0, a check other than the calls failed (" + ", ".join(failed) + ")"


def agreement(files: list[Path], *, tau2: bool) -> Agreement:
    """Grade every run of ``files`` with ``reference: gold`` and tally against the rewards."""
    spec = load_spec(SPEC)
    out = Agreement()
    for path in files:
        doc = json.loads(path.read_text())
        records = doc["simulations"] if tau2 else doc
        for run, record in zip(read_file(path), records):
            grade = grade_run(run, spec)
            made_all, passed = bool(grade.reference.complete), run.outcome.reward == 1.0
            row = out.tasks.setdefault(run.scenario, [0, 0, 0])
            row[0] += 1
            row[1] += made_all
            row[2] += passed
            out.table[made_all, passed] += 1
            if tau2:
                checks = record["reward_info"].get("action_checks")
                own = None if checks is None else all(c["action_match"] for c in checks)
                out.own[made_all, own] += 1
            if made_all != passed:
                reason = _explain(run, grade, record)
                out.why[reason] += 1
                out.cases.append((run.scenario, run.trial, reason))
    return out


def render(title: str, a: Agreement, *, per_task: bool = True) -> str:
    lines = [f"## {title}", ""]
    if per_task:
        lines += ["| task | runs | made every gold action | reward 1 |", "|---|---|---|---|"]
        lines += [f"| {t} | {n} | {m}/{n} | {p}/{n} |" for t, (n, m, p) in a.tasks.items()]
        lines.append("")
    t = a.table
    lines += ["| | reward 1 | reward 0 |", "|---|---|---|",
              f"| made every gold action | {t[True, True]} | {t[True, False]} |",
              f"| missed one | {t[False, True]} | {t[False, False]} |", "",
              f"agree on {t[True, True] + t[False, False]} of {sum(t.values())} runs; disagreements:"]
    lines += [f"- {n} × {why}" for why, n in a.why.most_common()]
    if a.own:
        o = a.own
        lines += ["", "against the benchmark's own action check (reward_info.action_checks):",
                  f"agree {o[True, True] + o[False, False]}, disagree {o[True, False] + o[False, True]}, "
                  f"no check recorded {o[True, None] + o[False, None]} "
                  f"(of which fluke says every gold action made: {o[True, None]})"]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tau2-only", action="store_true")
    ap.add_argument("--cases", action="store_true", help="list every disagreeing run")
    a = ap.parse_args(argv)
    if not a.tau2_only:
        tau = agreement([TAU], tau2=False)
        print(render("τ-bench, gpt-4o, airline (50 tasks × 4 trials)", tau))
        if a.cases:
            print("\n".join(f"  {s} trial {k}: {why}" for s, k, why in tau.cases))
        print()
    for path in TAU2:
        one = agreement([path], tau2=True)
        print(render(f"τ²-bench airline: {path.name}", one, per_task=False))
        if a.cases:
            print("\n".join(f"  {s} trial {k}: {why}" for s, k, why in one.cases))
        print()


if __name__ == "__main__":
    main()
