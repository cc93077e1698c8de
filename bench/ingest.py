#!/usr/bin/env python3
"""``fluke ingest FILE`` of 20-event runs: runs per second, peak write-ahead log, peak RSS.

Writes N runs of ``bench/verbs.py``'s shape (20 events each, as ``fluke export`` writes
them) to a fluke JSONL file, then in this order:

- the floor: the same lines parsed (orjson), re-serialised canonically, hashed and inserted
  by key into a bare SQLite table with fluke's pragmas, a batch per transaction: what any
  ingest of these lines must do, with no validation and no counts;
- ``fluke ingest FILE`` into a fresh SQLite file in its own process (start-up included),
  once per source tree given (``--src``; the installed fluke by default), the size of the
  ``-wal`` file sampled every 5 ms meanwhile, and the process's peak RSS from ``wait4``.

The machine's 1-minute load average is printed before each: on a shared machine the
figures move with it, so each arm is also given as its share of the floor of the same run.

    python bench/ingest.py --n 200000
    python bench/ingest.py --n 200000 --src before=/work/main/src --src after=src
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verbs  # noqa: E402
from verbs import write_jsonl  # noqa: E402


def shaped(shape: str, size: int):
    """Run ``i`` of ``shape``: ``events`` (bench/verbs.py's 20 events, the last agent message
    padded so the line is about ``size`` bytes) or ``bare`` (its outcome only, no events)."""
    if shape == "bare":
        return verbs._bare_run
    pad = max(0, size - len(orjson.dumps(verbs._run(0))))

    def make(i: int) -> dict:
        run = verbs._run(i)
        run["events"][-1]["text"] = ("done: " + "refund issued, order closed; " * (pad // 29 + 1))[:pad + 4]
        return run

    return make

CANONICAL = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def floor(jsonl: Path, db: Path, batch: int = 5000) -> float:
    """Seconds to parse, re-serialise, hash and insert by key every line (no validation)."""
    conn = sqlite3.connect(db, isolation_level=None)
    for pragma in ("page_size=16384", "journal_mode=WAL", "synchronous=NORMAL", "cache_size=-262144"):
        conn.execute(f"PRAGMA {pragma}")
    conn.execute("CREATE TABLE runs (k BIGINT NOT NULL UNIQUE, body TEXT NOT NULL)")
    began = time.perf_counter()
    rows = []

    def flush():
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO runs (k, body) VALUES (?, ?) ON CONFLICT DO NOTHING", rows)
        conn.execute("COMMIT")
        rows.clear()

    with open(jsonl, "rb") as fh:
        for line in fh:
            body = orjson.dumps(orjson.loads(line), option=CANONICAL)
            key = int.from_bytes(hashlib.sha256(body).digest()[:8], "big", signed=True)
            rows.append((key, body.decode()))
            if len(rows) >= batch:
                flush()
    if rows:
        flush()
    seconds = time.perf_counter() - began
    conn.close()
    return seconds


def fluke_ingest(jsonl: Path, db: Path, src: str | None, workers: str | None = None) -> dict:
    """``fluke ingest`` in its own process: seconds, peak -wal bytes, peak RSS, exit code, and the
    CPU of it and the processes it forked (they are waited for, so counted in its usage)."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = str(Path(src).resolve()) + os.pathsep + env.get("PYTHONPATH", "")
    wal = Path(f"{db}-wal")
    peak, stop = [0], threading.Event()

    def watch():
        while not stop.is_set():
            try:
                peak[0] = max(peak[0], wal.stat().st_size)
            except OSError:
                pass
            time.sleep(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    began = time.perf_counter()
    extra = ["--workers", workers] if workers is not None else []
    proc = subprocess.Popen([sys.executable, "-m", "fluke.cli", "--ledger", str(db), "ingest", str(jsonl), *extra],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - began
    stop.set()
    thread.join()
    code = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace").strip()
    return {"seconds": seconds, "wal": peak[0], "rss": usage.ru_maxrss / 1024, "code": code, "err": err,
            "cpu": usage.ru_utime + usage.ru_stime}


def discard(db: Path) -> None:
    for path in db.parent.glob(db.name + "*"):
        path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200_000, help="runs in the file (20 events each)")
    parser.add_argument("--src", action="append", default=[], metavar="NAME=PATH",
                        help="a fluke source tree to time (put first on PYTHONPATH); repeatable")
    parser.add_argument("--dir", help="where to put the file and ledgers (a temporary folder by default)")
    parser.add_argument("--scenarios", type=int, default=verbs.SCENARIOS, help="scenarios the runs spread over")
    parser.add_argument("--shape", choices=("events", "bare"), default="events",
                        help="runs of 20 events (about --bytes each) or outcome-only runs")
    parser.add_argument("--bytes", type=int, default=2600, help="size of an events run's line")
    parser.add_argument("--workers", default=None, help="fluke ingest --workers (its default if not given)")
    args = parser.parse_args()
    verbs.SCENARIOS = args.scenarios
    scratch = None if args.dir else tempfile.TemporaryDirectory(prefix="fluke-ingest-")
    work = Path(args.dir or scratch.name)
    work.mkdir(parents=True, exist_ok=True)
    jsonl = work / f"{args.shape}-{args.n}-{args.scenarios}-{args.bytes}.jsonl"
    if not jsonl.exists():
        write_jsonl(jsonl, args.n, shaped(args.shape, args.bytes))
    size = jsonl.stat().st_size
    what = "x 20 events" if args.shape == "events" else "(outcome only)"
    print(f"{args.n:,} runs {what} over {args.scenarios:,} scenarios, {size / args.n / 1e3:.1f} KB a run, "
          f"{size / 1e6:,.0f} MB of fluke JSONL; {os.cpu_count()} cores")
    load = os.getloadavg()[0]
    db = work / "floor.db"
    discard(db)
    cpu = time.process_time()
    seconds = floor(jsonl, db)
    cpu = time.process_time() - cpu
    discard(db)
    print(
        f"{'floor (parse + keyed insert)':32} {args.n / seconds:>9,.0f} runs/s   {seconds:6.1f} s   load {load:.1f}   "
        f"CPU {cpu / args.n * 1e6:.0f} us/run"
    )
    arms = [arm.partition("=")[::2] for arm in args.src] or [("fluke ingest", None)]
    for name, src in arms:
        load = os.getloadavg()[0]
        db = work / "ingest.db"
        discard(db)
        got = fluke_ingest(jsonl, db, src or None, args.workers)
        discard(db)
        if got["code"]:
            print(f"{name}: failed ({got['code']}): {got['err'][-400:]}")
            continue
        print(f"{name:32} {args.n / got['seconds']:>9,.0f} runs/s   {got['seconds']:6.1f} s   load {load:.1f}   "
              f"{seconds / got['seconds']:4.0%} of the floor   "
              f"peak WAL {got['wal'] / 1e6:,.0f} MB   peak RSS {got['rss']:,.0f} MB   "
              f"CPU {got['cpu'] / args.n * 1e6:.0f} us/run ({got['cpu'] / cpu:.2f}x the floor's)")
    print("goal: fluke ingest >= 15,000 runs/s on SQLite, the WAL bounded (not growing with the file)")


if __name__ == "__main__":
    main()
