#!/usr/bin/env python3
"""Every verb against ledgers of growing size: seconds, peak RSS and the scaling exponent.

Builds (once, cached under ``--dir``) ledgers of 10k and 100k runs (1M with ``--big``) of 20
events each — the shape ``fluke export`` writes — as fluke JSONL made here with orjson and
stored by ``fluke ingest``. Two versions (``model=model-a``, ``model=model-b``) over 500
scenarios; a scenario's pass rate is fixed by its number, a failed run dies at a recorded step
(``died_at``) so the per-step analysis runs. Then times each verb in its own process::

    summary, believe, passk, compare, consistency, fixcheck, grade --spec, report,
    runs --jsonl, export

and reads that process's peak RSS from ``os.wait4`` (``ru_maxrss``, of a grandchild forked from
a small interpreter so that the bench's own memory does not count). Prints one table per
backend and the scaling exponent of each verb between consecutive sizes
(log time ratio / log size ratio: 1 is linear, 0 is flat).

    python bench/verbs.py                       # 10k and 100k on SQLite
    python bench/verbs.py --big                 # and 1M
    python bench/verbs.py --postgres postgresql://me@localhost/bench   # also PostgreSQL at 100k
    python bench/verbs.py --sizes 5000 --verbs summary,compare
    python bench/verbs.py --huge                # 10M runs without events: the count-based verbs

``grade --spec`` (with ``--no-store``, so each bench grades every run afresh) is also printed
as runs graded per second, and ``export`` beside a streaming orjson copy of the same stored
runs (each body parsed and written again, with its source: the floor an export can reach), as
the ratio of the two.

``--huge`` builds a ledger of 10,000,000 runs without events (two versions over 500 scenarios,
failed runs with a recorded ``died_at``, 2% unknown outcomes), by ``fluke ingest`` of fluke
JSONL written here with orjson, and times only the verbs that answer from the tables kept at
ingest (``summary``, ``believe``, ``passk --k 1..10``, ``passk`` with its default budgets,
``compare``, ``consistency`` from ``counts`` and ``steps``; ``fixcheck`` from ``trial_outcomes``;
``interval`` from ``unit_cells``), each with a time limit (``--huge-timeout``).
"""

from __future__ import annotations

import argparse
from itertools import pairwise
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
#: The shapes a ledger is built in (``--shape``): scenarios, and the characters of free text added to
#: each tool result. ``small`` is the shape of the figures before issue 37 (500 scenarios, 2.6 KB a
#: run), which hid what grows with the scenarios; ``wide`` has 10,000 scenarios and runs of about
#: 5 KB, as issue 37 asks the table to be measured on (``--huge`` takes 20,000 with ``wide``).
SHAPES = {"small": (500, 0), "wide": (10_000, 136)}
PAD = 0
TOOLS = ("lookup", "refund", "search")
SPEC = {"tools": list(TOOLS), "required": ["lookup"], "before": [["lookup", "refund"]]}


def _draw(i: int) -> float:
    """A uniform draw in [0, 1) fixed by ``i`` (the splitmix64 finaliser), so that every trial of a
    scenario draws afresh: a multiplicative hash taken modulo 1000 depended on ``i mod 1000``
    alone, and each scenario then passed every trial or none."""
    z = (i * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return ((z ^ (z >> 31)) >> 11) / 2**53


def _run(i: int) -> dict:
    """Run ``i``: version a or b by parity, scenario and trial from ``i``, 20 events."""
    model = "model-a" if i % 2 == 0 else "model-b"
    k = i // 2
    scenario, trial = k % SCENARIOS, k // SCENARIOS
    rate = 0.35 + 0.6 * ((scenario * 37) % 100) / 100 - (0.03 if model == "model-b" else 0.0)
    passed = _draw(i) < rate
    events = [{"kind": "user", "text": f"please refund order W{k:07d}"}]
    note = (f"order W{k:07d} line {i % 97}: " + "refund approved after the lookup matched the receipt; " * 3)[:PAD]
    for j in range(EVENTS - 2):
        result = {"status": "ok", "n": j, "note": note} if PAD else {"status": "ok", "n": j}
        events.append({"kind": "tool", "tool": TOOLS[j % 3], "args": {"order_id": f"W{k:07d}", "step": j},
                       "call_id": f"c{j}", "ok": True, "result": result})
    events.append({"kind": "agent", "text": "done"})
    died = None if passed else 1 + (i * 7919) % (EVENTS - 2)
    return {"format_version": 1, "scenario": f"scn-{scenario}", "trial": trial,
            "identity": {"model": model, "harness": "bench", "world": "synthetic", "date": "2026-01-01"},
            "events": events,
            "outcome": {"passed": passed, "reward": 1.0 if passed else 0.0, "died_at": died}}


def _bare_run(i: int) -> dict:
    """Run ``i`` of the huge ledger: as :func:`_run` but without events, and 2% unknown outcomes."""
    run = _run_outcome(i)
    run["events"] = []
    return run


def _run_outcome(i: int) -> dict:
    model = "model-a" if i % 2 == 0 else "model-b"
    k = i // 2
    scenario, trial = k % SCENARIOS, k // SCENARIOS
    rate = 0.35 + 0.6 * ((scenario * 37) % 100) / 100 - (0.03 if model == "model-b" else 0.0)
    draw = _draw(i)
    passed = None if _draw(i + (1 << 40)) < 0.02 else draw < rate     # 2% unknown, spread over scenarios
    return {"format_version": 1, "scenario": f"scn-{scenario}", "trial": trial,
            "identity": {"model": model, "harness": "bench", "world": "synthetic", "date": "2026-01-01"},
            "outcome": {"passed": passed, "reward": None if passed is None else float(passed),
                        "died_at": 1 + (i * 7919) % (EVENTS - 2) if passed is False else None}}


def use_shape(name: str, *, huge: bool = False) -> None:
    """Build and name the ledgers in shape ``name`` of :data:`SHAPES` from now on."""
    global SCENARIOS, PAD, SHAPE
    SCENARIOS, PAD = SHAPES[name]
    if huge and name == "wide":
        SCENARIOS = 20_000
    SHAPE = name


SHAPE = "small"


def _tag() -> str:
    """The shape in a file's name ('' for the small shape, whose files keep their old names)."""
    return "" if SHAPE == "small" else f"-{SHAPE}"


def write_jsonl(path: Path, n: int, make=None) -> None:
    make = make or _run
    with open(path, "wb") as out:
        for start in range(0, n, 10_000):
            out.write(b"\n".join(orjson.dumps(make(i)) for i in range(start, min(n, start + 10_000))) + b"\n")


#: A streaming copy of a SQLite ledger's runs with orjson: every stored body parsed, its source
#: added, written as one JSON line. The floor ``fluke export`` is measured against.
COPY = """
import sqlite3, sys, orjson
conn = sqlite3.connect(sys.argv[1])
cur = conn.execute("SELECT body, source FROM runs ORDER BY ingest, rowid")
with open(sys.argv[2], "wb") as out:
    while rows := cur.fetchmany(512):
        for body, source in rows:
            doc = orjson.loads(body)
            doc["source"] = None if source is None else orjson.loads(source)
            out.write(orjson.dumps(doc) + b"\\n")
"""


def fluke(*args: str) -> list[str]:
    return [sys.executable, "-m", "fluke.cli", *args]


#: Runs a command in a grandchild forked from this small interpreter and writes, to the file named
#: first, its peak RSS (KiB), the peak of the summed RSS of it and every process under it (KiB,
#: sampled every 20 ms from /proc: a verb's worker processes count), and the CPU seconds of the
#: whole tree (``wait4`` counts the descendants the command waited for). A child started straight
#: from the bench would report the bench's own peak: Linux keeps the parent's high-water mark
#: across fork and exec.
PEAK = """
import os, signal, sys, threading, time
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGKILL))
tree = [0]
def tree_rss(root):
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, StopIteration, ValueError):
            pass
    return total
def sample():
    while True:
        tree[0] = max(tree[0], tree_rss(pid))
        time.sleep(0.02)
threading.Thread(target=sample, daemon=True).start()
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(f"{usage.ru_maxrss} {max(tree[0], usage.ru_maxrss)} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


class Took(tuple):
    """``(seconds, peak RSS in MB, exit code)``, with ``cpu`` (CPU seconds of the whole process tree)
    and ``tree_mb`` (the peak of the tree's summed RSS) beside them."""

    cpu: float = float("nan")
    tree_mb: float = float("nan")


def _took(seconds: float, code: int, text: str) -> Took:
    rss, tree, cpu = (text.split() + ["0", "0", "nan"])[:3]
    took = Took((seconds, float(rss) / 1024, code))
    took.cpu, took.tree_mb = float(cpu), float(tree) / 1024
    return took


def measure(cmd: list[str], stdout=subprocess.DEVNULL, timeout: float = 900) -> Took:
    """(seconds, peak RSS in MB, exit code) of one command in its own process, with its CPU time
    and the peak RSS of its process tree (:class:`Took`).

    The peak is the command's own (see :data:`PEAK`), not inflated by the bench's memory.
    """
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".rss") as peak:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", PEAK, peak.name, *cmd], stdout=stdout,
                                stderr=subprocess.PIPE)
        try:
            _, err_bytes = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.communicate()
            return _took(float("inf"), -9, peak.read())
        seconds, code = time.perf_counter() - start, proc.returncode
        took = _took(seconds, code, peak.read())
    err = err_bytes.decode(errors="replace")
    if code not in (0, 1):
        print(f"  ! {' '.join(cmd[3:])}: exit {code}: {err.strip().splitlines()[-1:] }", file=sys.stderr)
    return took


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
        # --no-store: every run grades afresh (a stored grade is read back, not regraded, so a
        # second bench on the same ledger would time the read-back)
        "grade --spec": fluke(*base, "grade", "--spec", str(spec), "--no-store"),
        "report": fluke(*base, "report", "--out", str(work / "report.html"), "--version", a, "--version", b),
        "runs --jsonl": fluke(*base, "runs", "--jsonl"),
        "export": fluke(*base, "export", "-o", str(work / "export.jsonl"), "--no-scan"),
        # with the secret scan (the default): issue 37 holds it to 1.5x export --no-scan
        "export --scan": fluke(*base, "export", "-o", str(work / "export-scan.jsonl")),
        "interval": fluke(*base, "interval", "--version", a),
        "leaderboard": fluke(*base, "leaderboard"),
    }


#: The verbs timed on the huge ledger: those that answer from the tables kept at ingest.
HUGE = ("summary", "believe", "passk", "compare", "consistency", "fixcheck", "interval", "leaderboard")


def build(url: str, n: int, work: Path, *, bare: bool = False) -> None:
    data = work / (f"bare{_tag()}-{n}.jsonl" if bare else f"runs{_tag()}-{n}.jsonl")
    if not data.exists():
        start = time.perf_counter()
        write_jsonl(data, n, _bare_run if bare else None)
        print(f"  wrote {n:,} runs of fluke JSONL in {time.perf_counter() - start:.1f} s", flush=True)
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
    head = "".join(f"{f'{n:,} runs (wall, CPU, peak)':>34}" for n in sizes)
    pairs = list(pairwise(sizes))
    print(f"{'verb':<14}{head}" + "".join(f"{f'exp {a // 1000}k→{b // 1000}k':>16}" for a, b in pairs))
    for verb, got in rows.items():
        cells = "".join(f"{got[n][0]:>9.2f} s {getattr(got[n], 'cpu', math.nan):>8.2f} s {got[n][1]:>7.0f} MB"
                        if n in got else f"{'—':>34}" for n in sizes)
        exps = "".join(f"{exponent(got[a][0], got[b][0], a, b):>16.2f}" if a in got and b in got else f"{'—':>16}"
                       for a, b in pairs)
        print(f"{verb:<14}{cells}{exps}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=os.environ.get("FLUKE_BENCH_DIR", "/tmp/fluke-bench-verbs"))
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated run counts")
    ap.add_argument("--big", action="store_true", help="add 1,000,000 runs")
    ap.add_argument("--postgres", metavar="URL", help="also PostgreSQL (the largest size up to 100k); "
                    "'auto' starts a throwaway server (fluke.testing.ThrowawayPostgres) for the run")
    ap.add_argument("--verbs", default=None, help="comma-separated subset of the verbs")
    ap.add_argument("--huge", action="store_true", help="only the count-based verbs on 10,000,000 runs without events")
    ap.add_argument("--huge-size", type=int, default=10_000_000, help="runs in the --huge ledger (10,000,000)")
    ap.add_argument("--huge-timeout", type=float, default=300.0, help="seconds allowed each verb under --huge")
    ap.add_argument("--json", metavar="FILE", help="also write the figures here")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="small",
                    help="small: 500 scenarios, 2.6 KB runs; wide: 10,000 scenarios (20,000 under --huge), 5 KB runs")
    a = ap.parse_args()
    use_shape(a.shape, huge=a.huge)
    work = Path(a.dir)
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "spec.json"
    spec.write_text(json.dumps(SPEC))
    if a.huge:
        huge(work, a.huge_timeout, None if a.verbs is None else a.verbs.split(","), a.huge_size)
        return
    sizes = [int(x) for x in a.sizes.split(",")] + ([1_000_000] if a.big else [])
    chosen = None if a.verbs is None else a.verbs.split(",")
    backends = [("SQLite", lambda n: str(work / f"ledger{_tag()}-{n}.db"), sizes)]
    server = None
    if a.postgres == "auto":
        from fluke.testing import ThrowawayPostgres

        server = ThrowawayPostgres()
        a.postgres = server.url
    if a.postgres:
        backends.append(("PostgreSQL", lambda n: a.postgres, [max(n for n in sizes if n <= 100_000)]))
    try:
        figures = run_backends(backends, work, spec, chosen)
    finally:
        if server is not None:
            server.stop()
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=2))


def run_backends(backends, work: Path, spec: Path, chosen) -> dict:
    """Build each backend's ledgers (once) and time every verb on them; the figures by backend."""
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
                took = rows.setdefault(verb, {})[n] = measure(cmd)
                s, mb, code = took
                print(f"  {name} {n:,} {verb}: {s:.2f} s, {took.cpu:.2f} s CPU, {mb:.0f} MB "
                      f"(tree {took.tree_mb:.0f} MB) (exit {code}){rate(verb, n, s)}", flush=True)
            if name == "SQLite" and (not chosen or "export" in chosen):
                copy = measure([sys.executable, "-c", COPY, url, str(work / "copy.jsonl")])
                if copy[2] != 0:
                    sys.exit("bench: the streaming orjson copy failed")
                rows.setdefault("orjson copy", {})[n] = copy
                ratio = rows["export"][n][0] / copy[0] if "export" in rows else float("nan")
                print(f"  {name} {n:,} streaming orjson copy: {copy[0]:.2f} s {copy[1]:.0f} MB; "
                      f"export / copy = {ratio:.2f}", flush=True)
        table(name, these, rows)
        if "grade --spec" in rows:
            print("grade --spec: " + ", ".join(f"{n:,} runs at {n / t[0]:,.0f} runs/s"
                                               for n, t in rows["grade --spec"].items()))
        if "export" in rows and "orjson copy" in rows:
            print("export / streaming orjson copy: " + ", ".join(
                f"{rows['export'][n][0] / rows['orjson copy'][n][0]:.2f} at {n:,}" for n in rows["export"]
                if n in rows["orjson copy"]))
        figures[name] = {v: {str(n): [*t, getattr(t, "cpu", None), getattr(t, "tree_mb", None)]
                             for n, t in got.items()} for v, got in rows.items()}
    return figures


def rate(verb: str, n: int, seconds: float) -> str:
    return f" = {n / seconds:,.0f} runs/s" if verb == "grade --spec" and seconds > 0 else ""


def huge(work: Path, timeout: float, chosen: list[str] | None, n: int = 10_000_000) -> None:
    """The count-based verbs on ``n`` runs without events."""
    url = str(work / f"bare-ledger{_tag()}-{n}.db")
    if not Path(url).exists():
        build(url, n, work, bare=True)
    rows: dict[str, dict[int, tuple]] = {}
    commands = verbs(url, work / "spec.json", work)
    commands["passk default"] = commands["passk"]          # the default budgets: 1, 2, 5, …, 10,000
    commands["passk"] = [*commands["passk"], "--k", "1..10"]
    for verb, cmd in commands.items():
        if verb.split()[0] not in HUGE or (chosen and verb not in chosen):
            continue
        took = measure(cmd, timeout=timeout)
        rows[verb] = {n: took}
        s, mb, code = took
        shown = f"{s:.2f} s, {took.cpu:.2f} s CPU" if math.isfinite(s) else f"> {timeout:.0f} s (stopped)"
        print(f"  SQLite {n:,} (no events, {SCENARIOS:,} scenarios) {verb}: {shown} {mb:.0f} MB (exit {code})",
              flush=True)
    table(f"SQLite, {n:,} runs without events", [n], rows)


if __name__ == "__main__":
    main()
