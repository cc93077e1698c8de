#!/usr/bin/env python3
"""``fluke grade --spec --no-store`` over a SQLite ledger beside a minimal grader of the same spec.

The floor (``--floor``) is the least machinery that applies the spec's checks to every stored
run, in one process: one ``SELECT body FROM runs`` scan, ``orjson.loads`` of each body, one walk
over its events (first calls against ``tools``, ``forbidden`` and ``before``; ``required``;
``failing_loop`` with the failing call's arguments as sorted JSON; ``ground``: every identifier
of an agent call's string arguments looked for as a whole token in the user messages and the
tool results and errors before it, a result that is not a string as its JSON; ``secrets``: the
credential patterns tried on the body where one of their anchors occurs), and counts per
version and scenario (runs, output ok, lucky, hard). It builds no messages, no grade JSON and no
run hashes, keeps no worst rows, and refuses a spec with checks it does not do (``max_steps``,
``no_repeat``, ``args``, ``untrusted``/``privileged``, a reference). Its identifier rule is
fluke's (``fluke.grading._text.identifiers``): that is what the check is defined as.

Both run as commands in their own process tree, measured alike (``bench/verbs.py``'s
``measure``: CPU time of the whole tree from ``wait4``, the peak of the tree's summed RSS sampled
every 20 ms), interleaved ``--repeats`` times, with the load average at the start of each. Then
with ``--check``, the floor's counts are checked against fluke's ``--json`` answer (per case: runs, output ok,
lucky; the number of cases with a hard run), so the floor is known to run the same checks.

    PYTHONPATH=src python bench/grade_floor.py LEDGER.db SPEC.json --repeats 2 [--jobs 1] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
SUPPORTED = {"tools", "required", "forbidden", "before", "failing_loop", "ground", "secrets", "name",
             "description", "failed_calls_count", "severity"}


def floor(ledger: str, spec: dict) -> dict:
    """The floor's counts: (identity JSON, scenario) -> [runs, output ok, lucky, hard]."""
    from fluke.grading import CHECKS
    from fluke.grading._text import SECRET_PATTERNS, identifiers

    extra = {k for k, v in spec.items() if v not in (None, [], {}, False) and k not in SUPPORTED}
    if extra:
        sys.exit(f"the floor does not do {sorted(extra)}")
    sev = {**CHECKS, **spec.get("severity", {})}
    tools = set(spec["tools"]) if spec.get("tools") is not None else None
    forbidden, required = set(spec.get("forbidden", [])), list(spec.get("required", []))
    before: dict[str, list[str]] = {}
    for a, b in spec.get("before", []):
        before.setdefault(b, []).append(a)
    loop_n = spec.get("failing_loop", 3)
    ground, secrets = spec.get("ground", True), spec.get("secrets", True)
    count_failed = spec.get("failed_calls_count", False)
    seps = set(chr(c) for c in range(128) if not (chr(c).isalnum() or chr(c) in "_-@.+")) | {
        "\x85", "\xa0", "\u1680", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
        *map(chr, range(0x2000, 0x200b))}

    def grounded(blob: str, tok: str) -> bool:
        n, size, p = len(tok), len(blob), blob.find(tok)
        while p >= 0:
            end = p + n
            if (p == 0 or blob[p - 1] in seps) and (end == size or blob[end] in seps or (
                    blob[end] == "." and (end + 1 == size or blob[end + 1] in seps))):
                return True
            p = blob.find(tok, p + 1)
        return False

    def strings(value, out):
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                strings(v, out)
        elif isinstance(value, list):
            for v in value:
                strings(v, out)

    cases: dict[tuple, list] = {}
    con = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    for (body,) in con.execute("SELECT body FROM runs"):
        d = orjson.loads(body)
        hard = bad = False              # a hard violation; any violation
        blob = ""                       # the texts so far, a newline between two
        sourced: set = set()            # identifiers found in them (texts only grow)
        first: set = set()
        done: set = set()
        streak_key, streak = None, 0
        for e in d["events"]:
            kind = e["kind"]
            if kind == "user":
                if e["text"]:
                    blob = blob + "\n" + e["text"] if blob else e["text"]
                continue
            if kind != "tool":
                continue
            if e["requestor"] == "agent":
                tool, ok, args = e["tool"], e["ok"], e["args"]
                found = []
                if tool not in first:
                    first.add(tool)
                    if tools is not None and tool not in tools:
                        found.append("unknown_tool")
                    if tool in forbidden:
                        found.append("forbidden")
                    found += ["before" for a in before.get(tool, ()) if a not in done]
                if ok or count_failed:
                    done.add(tool)
                if loop_n:
                    if ok is False:
                        key = (tool, orjson.dumps(args, option=orjson.OPT_SORT_KEYS))
                        streak = streak + 1 if key == streak_key else 1
                        streak_key = key
                        if streak == loop_n:
                            found.append("failing_loop")
                    else:
                        streak_key, streak = None, 0
                if ground:
                    values: list[str] = []
                    for v in (args.values() if isinstance(args, dict) else (args,)):
                        if isinstance(v, str):
                            values.append(v)
                        elif isinstance(v, (dict, list)):
                            strings(v, values)
                    for value in values:
                        for tok in identifiers(value):
                            if tok in sourced:
                                continue
                            if grounded(blob, tok):
                                sourced.add(tok)
                            else:
                                found.append("ungrounded")
                for check in found:
                    bad = True
                    hard = hard or sev[check] == "hard"
            result = e["result"]
            text = result if isinstance(result, str) else "" if result is None else orjson.dumps(result).decode()
            if text:
                blob = blob + "\n" + text if blob else text
            if e["error"]:
                blob = blob + "\n" + e["error"] if blob else e["error"]
        missing = [t for t in required if t not in done]
        if missing:
            bad, hard = True, hard or sev["required"] == "hard"
        if d["error"]:
            bad, hard = True, hard or sev["run_error"] == "hard"
        if secrets:
            text = body if isinstance(body, str) else body.decode()
            if any(anchor in text and pattern.search(text) for _, anchor, pattern in SECRET_PATTERNS):
                bad, hard = True, hard or sev["secret"] == "hard"
        key = (orjson.dumps(d["identity"], option=orjson.OPT_SORT_KEYS).decode(), d["scenario"])
        case = cases.get(key)
        if case is None:
            case = cases[key] = [0, 0, 0, 0]
        passed = d["outcome"]["passed"] is True
        case[0] += 1
        case[1] += passed
        case[2] += passed and bad
        case[3] += hard
    return cases


def check_same(cases: dict, answer: dict) -> str:
    """Whether the floor's counts are fluke's: per case (runs, output ok, lucky) as multisets,
    and the number of cases with a hard run."""
    mine = sorted((s, r, g, lk) for (_, s), (r, g, lk, _) in cases.items())
    theirs = sorted((s, c["runs"], c["green"], c["lucky"]) for v in answer["luck"].values()
                    for s, c in v["cases"].items())
    hard_mine = sum(1 for *_, h in cases.values() if h)
    hard_theirs = sum(1 for c in answer["gate"]["cases"] if c["hard_runs"])
    if mine != theirs or hard_mine != hard_theirs:
        return f"DIFFERENT: floor {len(mine)} cases, {hard_mine} with a hard run; fluke {len(theirs)}, {hard_theirs}"
    return f"same counts: {len(mine)} cases, {sum(r for _, r, _, _ in mine)} runs, " \
           f"{sum(lk for *_, lk in mine)} lucky, {hard_mine} cases with a hard run"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ledger")
    ap.add_argument("spec")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--jobs", help="passed to fluke grade (default: fluke's own choice)")
    ap.add_argument("--sources", help="comma-separated source trees: one fluke arm each, under its PYTHONPATH "
                                      "(default: the PYTHONPATH this runs under)")
    ap.add_argument("--floor", action="store_true", help="run the floor here and print its counts as JSON")
    ap.add_argument("--check", action="store_true",
                    help="then grade once more with --json and check the floor's counts against fluke's")
    a = ap.parse_args()
    spec = json.loads(Path(a.spec).read_text())
    if a.floor:
        cases = floor(a.ledger, spec)
        sys.stdout.write(json.dumps([[k[0], k[1], *v] for k, v in cases.items()]))
        return
    sys.path.insert(0, str(HERE))
    from verbs import measure

    fluke_bin = str(Path(sys.executable).with_name("fluke"))
    grade = [fluke_bin, "--ledger", a.ledger, "grade", "--spec", a.spec, "--no-store"]
    grade += ["--jobs", a.jobs] if a.jobs else []
    here = os.environ.get("PYTHONPATH", "")
    arms = {"floor": ([sys.executable, __file__, a.ledger, a.spec, "--floor"], here)}
    sources = a.sources.split(",") if a.sources else [here]
    for src in sources:
        arms["fluke grade --spec" + (f" ({src})" if len(sources) > 1 else "")] = (grade, str(Path(src).resolve()))
    outputs = {}
    for rep in range(a.repeats):
        for name, (cmd, path) in arms.items():
            os.environ["PYTHONPATH"] = path
            load = os.getloadavg()[0]
            with tempfile.TemporaryFile() as out:
                took = measure(cmd, stdout=out, timeout=3600)
                out.seek(0)
                outputs[name] = out.read()
            print(f"{rep}  {name:20} wall {took[0]:7.1f} s   CPU (tree) {took.cpu:7.1f} s   "
                  f"peak RSS (tree) {took.tree_mb:5.0f} MB   largest process {took[1]:5.0f} MB   load {load:.1f}",
                  flush=True)
            outputs[name + " took"] = took
        f = outputs["floor took"]
        for name in list(arms)[1:]:
            g = outputs[name + " took"]
            print(f"   {name} / floor: CPU {g.cpu / f.cpu:.2f}x, peak RSS (tree) {g.tree_mb / f.tree_mb:.2f}x",
                  flush=True)
    os.environ["PYTHONPATH"] = here
    if a.check:
        answer = json.loads(subprocess.run(grade + ["--json"], capture_output=True, check=False).stdout)
        cases = {(k, s): v for k, s, *v in json.loads(outputs["floor"])}
        print(check_same(cases, answer))


if __name__ == "__main__":
    main()
