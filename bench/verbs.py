#!/usr/bin/env python3
"""Every verb against ledgers of growing size: seconds, peak RSS and the scaling exponent.

Builds (once, cached under ``--dir``) ledgers of 10k and 100k runs (1M with ``--big``) of 20
events each — the shape ``fluke export`` writes — as fluke JSONL made here with orjson and
stored by ``fluke ingest``. Two versions (``model=model-a``, ``model=model-b``) over 500
scenarios; a scenario's pass rate is fixed by its number, a failed run dies at a recorded step
(``died_at``) so the per-step analysis runs. Then times each verb in its own process::

    summary, believe, passk, compare, consistency, fixcheck, grade --spec, report,
    runs --jsonl, export

and reads that process's peak RSS from ``os.wait4`` (``ru_maxrss``). Prints one table per
backend and the scaling exponent of each verb between consecutive sizes
(log time ratio / log size ratio: 1 is linear, 0 is flat).

    python bench/verbs.py                       # 10k and 100k on SQLite
    python bench/verbs.py --big                 # and 1M
    python bench/verbs.py --postgres postgresql://me@localhost/bench   # also PostgreSQL at 100k
    python bench/verbs.py --sizes 5000 --verbs summary,compare
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson

SCENARIOS = 500
EVENTS = 20
TOOLS = ("lookup", "refund", "search")
SPEC = {"tools": list(TOOLS), "required": ["lookup"], "before": [["lookup", "refund"]]}


def _run(i: int) -> dict:
    """Run ``i``: version a or b by parity, scenario and trial from ``i``, 20 events."""
    model = "model-a" if i % 2 == 0 else "model-b"
    k = i // 2
    scenario, trial = k % SCENARIOS, k // SCENARIOS
    rate = 0.35 + 0.6 * ((scenario * 37) % 100) / 100 - (0.03 if model == "model-b" else 0.0)
    passed = ((i * 2654435761) % 1000) / 1000 < rate
    events = [{"kind": "user", "text": f"please refund order W{k:07d}"}]
    for j in range(EVENTS - 2):
        events.append({"kind": "tool", "tool": TOOLS[j % 3], "args": {"order_id": f"W{k:07d}", "step": j},
                       "call_id": f"c{j}", "ok": True, "result": {"status": "ok", "n": j}})
    events.append({"kind": "agent", "text": "done"})
    died = None if passed else 1 + (i * 7919) % (EVENTS - 2)
    return {"format_version": 1, "scenario": f"scn-{scenario}", "trial": trial,
            "identity": {"model": model, "harness": "bench", "world": "synthetic", "date": "2026-01-01"},
            "events": events,
            "outcome": {"passed": passed, "reward": 1.0 if passed else 0.0, "died_at": died}}


def write_jsonl(path: Path, n: int) -> None:
    with open(path, "wb") as out:
        for start in range(0, n, 10_000):
            out.write(b"\n".join(orjson.dumps(_run(i)) for i in range(start, min(n, start + 10_000))) + b"\n")


def fluke(*args: str) -> list[str]:
    return [sys.executable, "-m", "fluke.cli", *args]


def measure(cmd: list[str], stdout=subprocess.DEVNULL, timeout: float = 900) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit code) of one command in its own process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return float("inf"), usage.ru_maxrss / 1024, -9
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if code not in (0, 1):
        print(f"  ! {' '.join(cmd[3:])}: exit {code}: {err.strip().splitlines()[-1:] }", file=sys.stderr)
    return seconds, usage.ru_maxrss / 1024, code


def verbs(ledger: str, spec: Path, work: Path) -> dict[str, list[str]]:
    a, b = "model=model-a", "model=model-b"
    base = ["--ledger", ledger]
    return {
        "summary": fluke(*base, "summary"),
        "believe": fluke(*base, "believe", "--version", a),
        "passk": fluke(*base, "passk", "--version", a),
        "compare": fluke(*base, "compare", a, b, "--no-record"),
        "consistency": fluke(*base, "consistency", a, b),
        "fixcheck": fluke(*base, "fixcheck", a, b),
        "grade --spec": fluke(*base, "grade", "--spec", str(spec)),
        "report": fluke(*base, "report", "--out", str(work / "report.html"), "--version", a, "--version", b),
        "runs --jsonl": fluke(*base, "runs", "--jsonl"),
        "export": fluke(*base, "export", "-o", str(work / "export.jsonl"), "--no-scan"),
    }


def build(url: str, n: int, work: Path) -> None:
    data = work / f"runs-{n}.jsonl"
    if not data.exists():
        write_jsonl(data, n)
    s, mb, code = measure(fluke("--ledger", url, "ingest", "--format", "fluke", str(data)), timeout=3600)
    print(f"  ingest {n:,} runs into {url}: {s:.1f} s, {mb:.0f} MB (exit {code})", flush=True)
    if code != 0:
        sys.exit(f"bench: could not build the {n:,}-run ledger")


def exponent(t1: float, t2: float, n1: int, n2: int) -> float:
    if not (math.isfinite(t1) and math.isfinite(t2)) or t1 <= 0:
        return float("nan")
    return math.log(t2 / t1) / math.log(n2 / n1)


def table(name: str, sizes: list[int], rows: dict[str, dict[int, tuple]]) -> None:
    print(f"\n{name}")
    head = "".join(f"{f'{n:,} runs':>22}" for n in sizes)
    pairs = list(zip(sizes, sizes[1:]))
    print(f"{'verb':<14}{head}" + "".join(f"{f'exp {a // 1000}k→{b // 1000}k':>16}" for a, b in pairs))
    for verb, got in rows.items():
        cells = "".join(f"{got[n][0]:>9.2f} s {got[n][1]:>7.0f} MB" if n in got else f"{'—':>22}" for n in sizes)
        exps = "".join(f"{exponent(got[a][0], got[b][0], a, b):>16.2f}" if a in got and b in got else f"{'—':>16}"
                       for a, b in pairs)
        print(f"{verb:<14}{cells}{exps}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=os.environ.get("FLUKE_BENCH_DIR", "/tmp/fluke-bench-verbs"))
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated run counts")
    ap.add_argument("--big", action="store_true", help="add 1,000,000 runs")
    ap.add_argument("--postgres", metavar="URL", help="also PostgreSQL (the largest size up to 100k)")
    ap.add_argument("--verbs", default=None, help="comma-separated subset of the verbs")
    ap.add_argument("--json", metavar="FILE", help="also write the figures here")
    a = ap.parse_args()
    work = Path(a.dir)
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "spec.json"
    spec.write_text(json.dumps(SPEC))
    sizes = [int(x) for x in a.sizes.split(",")] + ([1_000_000] if a.big else [])
    chosen = None if a.verbs is None else a.verbs.split(",")
    backends = [("SQLite", lambda n: str(work / f"ledger-{n}.db"), sizes)]
    if a.postgres:
        backends.append(("PostgreSQL", lambda n: a.postgres, [max(n for n in sizes if n <= 100_000)]))
    figures = {}
    for name, url_of, these in backends:
        rows: dict[str, dict[int, tuple]] = {}
        for n in these:
            url = url_of(n)
            if name == "PostgreSQL" or not Path(url).exists():
                build(url, n, work)
            for verb, cmd in verbs(url, spec, work).items():
                if chosen and verb not in chosen:
                    continue
                rows.setdefault(verb, {})[n] = measure(cmd)
                s, mb, code = rows[verb][n]
                print(f"  {name} {n:,} {verb}: {s:.2f} s {mb:.0f} MB (exit {code})", flush=True)
        table(name, these, rows)
        figures[name] = {v: {str(n): list(t) for n, t in got.items()} for v, got in rows.items()}
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
