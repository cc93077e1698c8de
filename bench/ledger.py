#!/usr/bin/env python3
"""Ledger benchmark: ingest N synthetic runs (no events) into SQLite and PostgreSQL.

Prints, per backend: runs per second through ``Ledger.ingest`` (from built Run objects),
runs per second end to end through ``fluke ingest`` of a fluke JSONL file (parse, validate,
hash, store), the ledger's size (after a checkpoint, for SQLite), and the time of the count
query (trials and passes per scenario × version) over all N runs.

The count query reads the ``counts`` table the ledger keeps at ingest. As a check, the same
counts are also computed from the stored runs themselves (a full scan, timed and printed)
and must agree. For SQLite the CPU time per run of this process (building rows) and of the
process (building and storing rows) is printed too.

``--file-ingest N`` times only ``fluke ingest FILE`` end to end (a fresh process each time:
start-up, parse, validate, hash, store) of the JSONL file, best of N, with the load average.
It decided issue 11 point 6: at commit 9b72db9 the same measurement with and without the
SQLite writer process (then switched off by ``FLUKE_LEDGER_WRITER=0``), interleaved, found
it no faster (docs/ledger.md), so the writer process was removed.

    python bench/ledger.py                 # 1,000,000 runs; PostgreSQL via a throwaway server
    python bench/ledger.py --n 200000 --postgres-url postgresql://me@localhost/bench
    python bench/ledger.py --no-postgres
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

from fluke.adapters import read_file
from fluke.ledger import open_ledger
from fluke.record import AgentMessage, Identity, Outcome, Run, ToolCall, UserMessage, condition_key

VERSIONS = 8
SCENARIOS = 500


def build_runs(n: int, *, offset: int = 0, events: int = 0) -> list[Run]:
    identities = [Identity(model=f"model-{v}", harness="bench", world="synthetic") for v in range(VERSIONS)]

    def trajectory(i: int) -> list:
        calls = [ToolCall(tool="lookup", args={"order": f"W{i:07d}", "step": j}, call_id=f"c{j}", ok=True,
                          result={"status": "ok", "items": [j, j + 1]}) for j in range(max(events - 2, 0))]
        return ([UserMessage(text=f"please refund order W{i:07d}")] + calls + [AgentMessage(text="done")])[:events]

    return [Run(scenario=f"scenario-{i % SCENARIOS}", trial=i // SCENARIOS, identity=identities[i % VERSIONS],
                events=trajectory(i) if events else [],
                outcome=Outcome(passed=(i * 2654435761) % 100 < 70, reward=None))
            for i in range(offset, offset + n)]


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def count_query_seconds(ledger, repeats: int = 3) -> tuple[float, int]:
    times, rows = [], 0
    for _ in range(repeats):
        seconds, result = timed(ledger.counts)
        times.append(seconds)
        rows = len(result)
    return statistics.median(times), rows


def size_of(url: str, ledger) -> int:
    if url.startswith("postgresql://"):
        return int(ledger.query("SELECT pg_database_size(current_database())")[0][0])
    return sum(os.path.getsize(p) for p in Path(url).parent.glob(Path(url).name + "*"))


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds used so far by this process (and by its finished children)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


def scan_counts(ledger) -> dict:
    """Trials and passes per version x scenario x condition, from the stored runs (full scan)."""
    names = dict(ledger.query("SELECT vid, version FROM versions"))
    out: dict = {}
    for vid, body in ledger.query("SELECT vid, body FROM runs"):
        run = orjson.loads(body)
        key = (names[vid], run["scenario"], condition_key(run["condition"]))
        n, k = out.get(key, (0, 0))
        out[key] = (n + 1, k + int(bool(run["outcome"]["passed"])))
    return out


def discard(name: str, url: str) -> None:
    """Delete a finished attempt's SQLite files, so the attempts after it start alike."""
    if name == "sqlite":
        for path in Path(url).parent.glob(Path(url).name + "*"):
            path.unlink()


def fresh(name: str, url: str, attempt: int) -> str:
    """An empty ledger for each attempt: a new file for SQLite, emptied tables for PostgreSQL."""
    if name == "sqlite":
        return f"{url}.{attempt}"
    with open_ledger(url) as ledger, ledger.atomic():
        ledger.execute("TRUNCATE runs, counts, versions, ingests")
    return url


def bench_backend(name: str, url: str, n: int, jsonl: Path, file_n: int, repeats: int) -> dict:
    build_s, runs = timed(lambda: build_runs(n))
    attempts = []
    for attempt in range(repeats):
        ledger = open_ledger(fresh(name, url, attempt))
        gc.collect()
        cpu0 = cpu_seconds()
        began = time.perf_counter()
        result = ledger.ingest(runs)
        ingest_s = time.perf_counter() - began
        cpu1 = cpu_seconds()
        assert result.added == n, result
        attempts.append({"ingest_s": ingest_s, "main_cpu_us": (cpu1[0] - cpu0[0]) / n * 1e6})
        if attempt < repeats - 1:
            ledger.close()
            discard(name, ledger.url)
    runs.clear()
    best = min(attempts, key=lambda a: a["ingest_s"])
    query_s, groups = count_query_seconds(ledger)
    scan_s, scanned = timed(lambda: scan_counts(ledger))
    kept = {(c.version, c.scenario, c.condition): (c.trials, c.passes) for c in ledger.counts()}
    assert kept == scanned, "the counts table disagrees with the runs"
    if name == "sqlite":
        ledger.query("PRAGMA wal_checkpoint(TRUNCATE)")   # the size of the database, not of its log
    size = size_of(ledger.url, ledger)
    # End to end: a second JSONL file of fresh runs through the file reader.
    file_s, file_result = timed(lambda: ledger.ingest(read_file(jsonl)))
    assert file_result.added == file_n, file_result
    total = ledger.count()
    query2_s, _ = count_query_seconds(ledger)
    ledger.close()
    return {"backend": name, "runs": n, "build_per_s": n / build_s, "ingest_per_s": n / best["ingest_s"],
            "ingest_median_per_s": n / statistics.median(a["ingest_s"] for a in attempts),
            "main_cpu_us": best["main_cpu_us"], "scan_s": scan_s,
            "file_per_s": file_n / file_s, "file_runs": file_n, "size_bytes": size,
            "count_query_s": query_s, "groups": groups, "total": total, "count_query_total_s": query2_s}


def file_ingest(jsonl: Path, work: Path, repeats: int, arms: dict[str, dict[str, str]]) -> dict:
    """``fluke ingest FILE`` end to end into a fresh SQLite file, once per arm (extra
    environment variables) in each of ``repeats`` rounds, the arms' order alternating so that
    each sees the same load; every time and the load average before each ingest."""
    import subprocess

    fluke = [sys.executable, "-c", "import sys; from fluke.cli import main; sys.exit(main())"]
    times: dict[str, list[float]] = {arm: [] for arm in arms}
    loads = []
    for attempt in range(repeats):
        order = list(arms) if attempt % 2 == 0 else list(reversed(arms))
        for arm in order:
            db = work / f"file-{attempt}-{len(times[arm])}-{abs(hash(arm))}.db"
            loads.append(os.getloadavg()[0])
            began = time.perf_counter()
            subprocess.run([*fluke, "--ledger", str(db), "ingest", str(jsonl)], env=dict(os.environ, **arms[arm]),
                           check=True, stdout=subprocess.DEVNULL)
            times[arm].append(time.perf_counter() - began)
            discard("sqlite", str(db))
    return {"times": times, "load": (min(loads), max(loads))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000, help="runs to ingest per backend")
    parser.add_argument("--file-n", type=int, default=200_000, help="runs in the end-to-end JSONL file")
    parser.add_argument("--postgres-url", help="an empty PostgreSQL database to use")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--repeats", type=int, default=3,
                        help="fresh ingests of the N runs per backend (best is shown)")
    parser.add_argument("--file-ingest", type=int, default=0, metavar="N",
                        help="only time `fluke ingest` of the JSONL file end to end, N times (best of N)")
    parser.add_argument("--events", type=int, default=0, help="events per run in the JSONL file")
    args = parser.parse_args()

    scratch = tempfile.TemporaryDirectory(prefix="fluke-bench-")   # removed at exit
    work = Path(scratch.name)
    jsonl = work / "runs.jsonl"
    with open(jsonl, "wb") as fh:
        for run in build_runs(args.file_n, offset=args.n, events=args.events):
            fh.write(orjson.dumps(run.model_dump(mode="json")) + b"\n")
    if args.file_ingest:
        got = file_ingest(jsonl, work, args.file_ingest, {"fluke ingest": {}})
        for arm, t in got["times"].items():
            print(f"{arm}: best {min(t):.2f}s ({args.file_n / min(t):,.0f} runs/s) of {args.file_n:,} runs "
                  f"with {args.events} events; all: " + " ".join(f"{x:.2f}" for x in t))
        print(f"1-min load average {got['load'][0]:.1f}-{got['load'][1]:.1f} on {os.cpu_count()} cores")
        return

    results = [bench_backend("sqlite", str(work / "bench.db"), args.n, jsonl, args.file_n, args.repeats)]
    if not args.no_postgres:
        server = None
        url = args.postgres_url
        if url is None:
            from fluke.testing import ThrowawayPostgres

            try:
                server = ThrowawayPostgres()
                url = server.url
            except (OSError, FileNotFoundError, Exception) as exc:  # report, don't hide
                print(f"postgres: skipped ({exc})", file=sys.stderr)
        if url:
            try:
                results.append(bench_backend("postgres", url, args.n, jsonl, args.file_n, args.repeats))
            finally:
                if server:
                    server.stop()

    print(f"{'backend':10} {'runs':>9} {'build/s':>9} {'ingest/s':>9} {'median':>9} "
          f"{'file/s':>9} {'size MB':>8} {'count q':>8} {'scan q':>7} {'groups':>7}")
    for r in results:
        print(f"{r['backend']:10} {r['runs']:>9,} {r['build_per_s']:>9,.0f} {r['ingest_per_s']:>9,.0f} "
              f"{r['ingest_median_per_s']:>9,.0f} {r['file_per_s']:>9,.0f} "
              f"{r['size_bytes'] / 1e6:>8.1f} {r['count_query_s']:>7.3f}s {r['scan_s']:>6.1f}s {r['groups']:>7,}")
    sqlite = results[0]
    print(f"sqlite ingest CPU per run (best attempt): {sqlite['main_cpu_us']:.1f} us (hashing, building rows, "
          "storing them)")
    print(f"ingest/s: Ledger.ingest of built Run objects (hash, row, insert, commit), best of {args.repeats} fresh "
          "ledgers; median: the median of them; file/s: end to end from fluke JSONL "
          f"({args.file_n:,} runs: parse, validate, hash, insert); count q: trials and passes per scenario x "
          f"version over all {args.n:,} runs (median of 3), from the counts table; scan q: the same counts "
          "recomputed from every stored run, which must agree; size: after checkpoint.")
    print(f"goal: >= 100,000 runs/s into SQLite -> {'met' if sqlite['ingest_per_s'] >= 1e5 else 'not met'}; "
          f"count query < 1 s on SQLite -> {'met' if sqlite['count_query_s'] < 1 else 'not met'}")


if __name__ == "__main__":
    main()
