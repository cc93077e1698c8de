#!/usr/bin/env python3
"""Grade the shared trajectory workload with fluke and with luckrate 0.3.0, in one process.

The workload is ../shared/bench/trajectory_workload.py (imported by path): N trajectories of
S steps with its own spec (tools, required, forbidden, before, max_steps, no_repeat,
untrusted, privileged). Both graders run the full spec with provenance and secrets on.

The inputs are frozen out of the cyclic garbage collector (gc.freeze) before either grader
runs, and a collection precedes each timed section, for both graders alike.

Not timed, reported apart: generating the workload, building fluke Runs and luckrate Steps,
and computing each Run's content hash and version hash (the ledger computes both at ingest,
not at grading).

Usage (from the repository root):
    PYTHONPATH=src python bench/grading.py                 # 10,000 x 20, 3 repeats
    PYTHONPATH=src python bench/grading.py --n 2000 --repeats 1
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT.parent / "shared" / "bench" / "trajectory_workload.py"


def load_workload():
    if not WORKLOAD.exists():
        sys.exit(f"workload generator not found at {WORKLOAD}")
    spec = importlib.util.spec_from_file_location("trajectory_workload", WORKLOAD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def to_runs(trajs):
    from fluke.record import Outcome, Run, ToolCall, UserMessage

    runs = []
    for tr in trajs:
        events = [UserMessage(text=tr["task_input"])]
        events += [ToolCall(tool=s["tool"], args=s["args"], ok=s["ok"], result=s["result"],
                            t_start=s["t_ms"] / 1000.0) for s in tr["steps"]]
        run = Run(scenario=tr["id"], events=events, outcome=Outcome(passed=tr["output_ok"]))
        _ = run.hash, run.version  # content and version hashes: computed at ingest, not grading
        runs.append(run)
    return runs


def with_gold(runs, seed, k=4):
    """Each run with gold: ``k`` of its own agent calls in order (a repeat of one of them now and
    then, and one argument changed in every fifth run), for ``reference: gold``."""
    import random

    from fluke.record import GoldCall, Run

    rng = random.Random(seed)
    out = []
    for run in runs:
        calls = [e for e in run.events if e.kind == "tool"]
        picked = sorted(rng.sample(range(len(calls)), min(k, len(calls))))
        gold = [GoldCall(tool=calls[i].tool, args=calls[i].args) for i in picked]
        if gold and rng.random() < 0.2:
            first = gold[0]
            gold[0] = GoldCall(tool=first.tool, args={**first.args, "a0": "changed"})
        if gold and rng.random() < 0.2:
            gold.append(gold[-1])
        run = Run.model_validate({**run.model_dump(), "gold": [g.model_dump() for g in gold]})
        _ = run.hash, run.version  # computed at ingest, not grading
        out.append(run)
    return out


REFERENCE_ONLY = {"reference": "gold", "ground": False, "secrets": False, "failing_loop": None}


def reference_times(runs, gold_runs, spec, repeats, grade_run, load_spec):
    """The spec workload and reference grading alone (no other check) per mode, interleaved so
    that all see the same machine load: [(label, best seconds, mean recall or None)]."""
    modes = ("superset", "in_order", "strict")
    specs = [load_spec({**REFERENCE_ONLY, "reference_mode": m}) for m in modes]
    fns = [lambda: [grade_run(r, spec) for r in runs]]
    fns += [lambda s=s: [grade_run(r, s) for r in gold_runs] for s in specs]
    rows = interleaved(repeats, *fns)
    out = [("spec workload (above)", rows[0][0], None)]
    for mode, (best, _, grades) in zip(modes, rows[1:], strict=True):
        out.append((f"reference: gold, {mode}", best, sum(g.reference.recall for g in grades) / len(grades)))
    return out


def to_steps(trajs):
    from luckrate import Step

    return [([Step(tool=s["tool"], args=s["args"], ok=s["ok"], result=s["result"], t=s["t_ms"])
              for s in tr["steps"]], tr["task_input"]) for tr in trajs]


def interleaved(repeats, *fns):
    """Run the functions in turn, ``repeats`` times; best and median wall time of each, and the
    last result. Interleaving exposes both graders to the same machine load."""
    times = [[] for _ in fns]
    outs = [None] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            outs[k] = None
            gc.collect()
            began = time.perf_counter()
            outs[k] = fn()
            times[k].append(time.perf_counter() - began)
    return [(min(t), sorted(t)[len(t) // 2], out) for t, out in zip(times, outs, strict=True)]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=20260101)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="profile fluke's grading and print the top")
    ap.add_argument("--scaling", action="store_true",
                    help="also time reference grading on 2,000 runs of 20, 40 and 80 steps (linear in length)")
    a = ap.parse_args(argv)

    from fluke.grading import gate, grade_run, load_spec, luck_rate
    from luckrate import check

    wl = load_workload()
    began = time.perf_counter()
    trajs = wl.generate(a.n, a.steps, a.seed)
    raw_spec = wl.make_spec()
    print(f"workload: {a.n} trajectories x {a.steps} steps, seed {a.seed} "
          f"(generated in {time.perf_counter() - began:.1f}s, not timed)")
    began = time.perf_counter()
    runs = to_runs(trajs)
    built_runs = time.perf_counter() - began
    began = time.perf_counter()
    steps = to_steps(trajs)
    built_steps = time.perf_counter() - began
    spec = load_spec(raw_spec)
    # The inputs are built once and never change: move them out of the cyclic garbage
    # collector's generations, for both graders alike, so that neither pays for a full
    # collection walking 10,000 runs' worth of input objects in the middle of its timing.
    del trajs
    gc.collect()
    gc.freeze()
    print(f"building fluke Runs (with content and version hashes): {built_runs:.2f}s; luckrate Steps: "
          f"{built_steps:.2f}s (not timed)")

    if a.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        [grade_run(r, spec) for r in runs]
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)

    (f_min, f_med, grades), (l_min, l_med, found) = interleaved(
        a.repeats, lambda: [grade_run(r, spec) for r in runs],
        lambda: [check(s, raw_spec, t) for s, t in steps])

    n_f = sum(len(g.violations) for g in grades)
    n_l = sum(len(v) for v in found)
    print(f"fluke    full spec, provenance + secrets on: min {f_min:.3f}s  median {f_med:.3f}s  "
          f"({n_f} violations)")
    print(f"luckrate full spec, provenance + secrets on: min {l_min:.3f}s  median {l_med:.3f}s  "
          f"({n_l} violations)")
    print(f"ratio (luckrate / fluke, best of {a.repeats}): {l_min / f_min:.1f}x")
    by_check: dict[str, int] = {}
    for g in grades:
        for v in g.violations:
            by_check[v.check] = by_check.get(v.check, 0) + 1
    print("fluke violations by check: " + ", ".join(f"{k}={v}" for k, v in sorted(by_check.items())))
    print(f"luck rate (pooled): {luck_rate(grades).pooled}; gate passed: {gate(grades).passed}")

    # The reference workload: the same runs, each with four of its own calls as gold.
    gc.unfreeze()
    gold_runs = with_gold(runs, a.seed)
    gc.collect()
    gc.freeze()
    print(f"\nreference workload: the same {a.n} runs, each with 4 gold calls "
          "(a changed argument in 1 of 5, a repeated call in 1 of 5)")
    rows = reference_times(runs, gold_runs, spec, a.repeats, grade_run, load_spec)
    base = rows[0][1]
    for label, best, recall in rows:
        extra = "" if recall is None else f"  (mean recall {recall:.3f})"
        print(f"fluke    {label:<26} min {best:.3f}s  {best / base:.2f}x the spec workload{extra}")
    both = load_spec({**raw_spec, "reference": "gold", "reference_mode": "in_order"})
    (b_min, _, _), (s_min, _, _) = interleaved(a.repeats, lambda: [grade_run(r, both) for r in gold_runs],
                                               lambda: [grade_run(r, spec) for r in gold_runs])
    print(f"fluke    full spec + reference (in_order): min {b_min:.3f}s  (the spec alone on these runs {s_min:.3f}s)")
    if a.scaling:
        for steps in (20, 40, 80):
            sub = with_gold(to_runs(wl.generate(2000, steps, a.seed)), a.seed)
            ordered = load_spec({**REFERENCE_ONLY, "reference_mode": "in_order"})
            (best, _, _), = interleaved(a.repeats, lambda: [grade_run(r, ordered) for r in sub])
            print(f"scaling: 2000 runs x {steps:>2} steps, reference in_order: {best:.3f}s "
                  f"({1e6 * best / (2000 * steps):.2f} us per event)")


if __name__ == "__main__":
    main()
