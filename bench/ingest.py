#!/usr/bin/env python3
"""``fluke ingest FILE`` of 20-event runs against its floors: CPU, runs per second, peak log, peak RSS.

Writes N runs of ``bench/verbs.py``'s shape (20 events each, as ``fluke export`` writes
them) to a fluke JSONL file, then times, each in its own process (``verbs.measure``: the CPU
of its whole process tree, and its peak RSS not inflated by this bench's own memory, which a
child forked straight from here would report):

- the floors (:func:`floor`): the same lines parsed (orjson), re-serialised canonically,
  hashed and inserted a batch per transaction, with fluke's pragmas and no validation or
  counts. The *keyed* floor does the durable work fluke does (fluke's ``runs`` columns, the
  content key and the trial key, both unique indexes); the *content* floor, the one issue
  37's first figures were measured against, a content key and the body only;
- ``fluke ingest FILE`` into a fresh SQLite file (start-up included), once per source tree
  given (``--src``; the installed fluke by default), the size of the ``-wal`` file sampled
  every 5 ms meanwhile.

The machine's 1-minute load average is printed before each: on a shared machine the
figures move with it, so each arm is also given as its CPU's ratio to each floor's in the
same run.

    python bench/ingest.py --n 200000
    python bench/ingest.py --n 1000000 --scenarios 10000 --bytes 5000 --src before=/work/main/src --src after=src
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
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
#: fluke's pragmas (fluke.ledger._writer.connect_sqlite, its PAGE_SIZE among them), the same for every
#: floor; ``--floor-page`` sets another page size for the floors (fluke's before issue 37: 16384).
PRAGMAS = ("page_size=65536", "journal_mode=WAL", "synchronous=NORMAL", "cache_size=-65536",
           "journal_size_limit=67108864")
#: The floors: ``keyed`` stores what fluke stores, ``content`` (the floor before issue 37's second
#: pass) a content key and the body only.
FLOORS = ("keyed", "content")


def _key(data: bytes) -> int:
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big", signed=True)


def floor(jsonl: Path, db: Path, kind: str = "keyed", batch: int = 5000, page: int | None = None) -> None:
    """Parse, re-serialise canonically, hash and insert by key every line, a batch per transaction
    with fluke's pragmas: what any ingest of these lines must do, with no validation and no counts.

    ``keyed`` does the durable work fluke does: fluke's ``runs`` table (its columns and both unique
    indexes: the content key ``k`` and the trial key ``t``, the SHA-256 of version, scenario,
    condition and trial), the version key hashed from the line's identity, the source stored.
    ``content`` stores the content key and the body alone (one unique index). Neither validates a
    field, fills a default (fluke's stored body holds every field of the model, so it is larger),
    nor keeps ``counts``, ``steps``, ``trial_outcomes`` or ``unit_cells``.
    """
    conn = sqlite3.connect(db, isolation_level=None)
    for pragma in PRAGMAS:
        conn.execute(f"PRAGMA {pragma}" if page is None or not pragma.startswith("page_size") else
                     f"PRAGMA page_size={page}")
    keyed = kind == "keyed"
    if keyed:
        conn.execute("CREATE TABLE runs (k BIGINT NOT NULL UNIQUE, vid BIGINT NOT NULL, ingest BIGINT NOT NULL, "
                     "scenario TEXT NOT NULL, source TEXT, body TEXT NOT NULL, t BIGINT)")
        conn.execute("CREATE UNIQUE INDEX runs_trial ON runs (t)")
        insert = ("INSERT INTO runs (ingest, k, t, vid, scenario, source, body) VALUES (1, ?, ?, ?, ?, ?, ?) "
                  "ON CONFLICT DO NOTHING")
    else:
        conn.execute("CREATE TABLE runs (k BIGINT NOT NULL UNIQUE, body TEXT NOT NULL)")
        insert = "INSERT INTO runs (k, body) VALUES (?, ?) ON CONFLICT DO NOTHING"
    rows = []
    source = orjson.dumps({"adapter": "fluke", "file": str(jsonl), "position": 0}).decode()[:-2]

    def flush():
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(insert, rows)
        conn.execute("COMMIT")
        rows.clear()

    with open(jsonl, "rb") as fh:
        for number, line in enumerate(fh, 1):
            run = orjson.loads(line)
            body = orjson.dumps(run, option=CANONICAL)
            if keyed:
                identity = dict(run.get("identity") or {})
                identity.pop("date", None)
                vid = int(hashlib.sha256(orjson.dumps(identity, option=CANONICAL)).hexdigest()[:15], 16)
                condition = run.get("condition") or {}
                cond = ",".join(f"{k}={condition[k]}" for k in sorted(condition))
                scenario = run["scenario"]
                trial = _key(f"{vid}\x00{scenario}\x00{cond}\x00{run.get('trial', 0)}".encode())
                rows.append((_key(body), trial, vid, scenario, f"{source}{number}}}", body.decode()))
            else:
                rows.append((_key(body), body.decode()))
            if len(rows) >= batch:
                flush()
    if rows:
        flush()
    conn.close()


def _tree_pss() -> int:
    """The summed proportional set size (KiB) of the processes under this bench's children (the
    launcher ``verbs.measure`` starts left out): each page shared by forked processes counted
    once in all, where their summed RSS counts it in each."""
    total, todo, first = 0, [os.getpid()], True
    while todo:
        pid = todo.pop()
        try:
            if not first and not _launcher(pid):
                with open(f"/proc/{pid}/smaps_rollup") as fh:
                    total += next(int(line.split()[1]) for line in fh if line.startswith("Pss:"))
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (OSError, StopIteration, ValueError):
            pass
        first = False
    return total


def _launcher(pid: int) -> bool:
    return os.getppid() != pid and _parent(pid) == os.getpid()


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1])


def _watch(db: Path):
    """Sample the size of ``db``'s ``-wal`` file every 5 ms and the tree's PSS every 50 ms; call
    the result to stop and get both peaks (bytes, MB)."""
    wal = Path(f"{db}-wal")
    peak, pss, stop = [0], [0], threading.Event()

    def watch():
        tick = 0
        while not stop.is_set():
            try:
                peak[0] = max(peak[0], wal.stat().st_size)
            except OSError:
                pass
            if tick % 10 == 0:
                pss[0] = max(pss[0], _tree_pss())
            tick += 1
            time.sleep(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()

    def done() -> tuple[int, float]:
        stop.set()
        thread.join()
        return peak[0], pss[0] / 1024

    return done


def run_arm(cmd: list[str], db: Path, env: dict | None = None) -> dict:
    """One arm in its own process (``verbs.measure``: forked from a small interpreter, so its peak
    is its own and not the bench's): seconds, peak -wal bytes, the peak RSS of its largest process
    and the peaks of its process tree's summed RSS and summed PSS (forked readers included: their
    pages shared with the ingesting process count in each RSS, once in the PSS), exit code, and the
    CPU of the whole tree."""
    saved = dict(os.environ)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    done = _watch(db)
    try:
        took = verbs.measure(cmd, timeout=7200)
    finally:
        wal, pss = done()
        if env is not None:
            os.environ.clear()
            os.environ.update(saved)
    seconds, rss, code = took
    return {"seconds": seconds, "wal": wal, "rss": rss, "tree": took.tree_mb, "pss": pss, "code": code,
            "cpu": took.cpu}


def fluke_ingest(jsonl: Path, db: Path, src: str | None, workers: str | None = None) -> dict:
    """``fluke ingest`` in its own process (:func:`run_arm`), the source tree ``src`` first on its path."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = str(Path(src).resolve()) + os.pathsep + env.get("PYTHONPATH", "")
    extra = ["--workers", workers] if workers is not None else []
    return run_arm([sys.executable, "-m", "fluke.cli", "--ledger", str(db), "ingest", str(jsonl), *extra], db, env)


def discard(db: Path) -> None:
    for path in db.parent.glob(db.name + "*"):
        path.unlink()


def _line(name: str, n: int, got: dict, load: float, floors: dict) -> str:
    rss = f"peak RSS {got['rss']:,.0f} MB (tree: RSS {got['tree']:,.0f} MB, PSS {got['pss']:,.0f} MB)"
    text = (f"{name:30} {n / got['seconds']:>8,.0f} runs/s {got['seconds']:7.1f} s  load {load:4.1f}  "
            f"CPU {got['cpu'] / n * 1e6:4.0f} us/run")
    shares = "  ".join(f"{got['cpu'] / floor['cpu']:.2f}x the {kind} floor's CPU" for kind, floor in floors.items())
    return f"{text}  {shares}  peak WAL {got['wal'] / 1e6:,.0f} MB  {rss}" if floors else f"{text}  {rss}"


def main() -> None:
    if sys.argv[1:2] == ["--floor-run"]:   # one floor, in the process verbs.measure starts
        kind, jsonl, db, *page = sys.argv[2:6]
        floor(Path(jsonl), Path(db), kind, page=int(page[0]) if page else None)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200_000, help="runs in the file (20 events each)")
    parser.add_argument("--src", action="append", default=[], metavar="NAME=PATH[@WORKERS]",
                        help="a fluke source tree to time (put first on PYTHONPATH), with its --workers if "
                             "given after @; repeatable")
    parser.add_argument("--dir", help="where to put the file and ledgers (a temporary folder by default)")
    parser.add_argument("--scenarios", type=int, default=verbs.SCENARIOS, help="scenarios the runs spread over")
    parser.add_argument("--shape", choices=("events", "bare"), default="events",
                        help="runs of 20 events (about --bytes each) or outcome-only runs")
    parser.add_argument("--bytes", type=int, default=2600, help="size of an events run's line")
    parser.add_argument("--workers", default=None, help="fluke ingest --workers (its default if not given)")
    parser.add_argument("--floor", action="append", choices=FLOORS, default=None,
                        help="the floors to measure (default: both; the ratios are to each)")
    parser.add_argument("--floor-page", type=int, default=None, help="the floors' page size (default: fluke's)")
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
          f"{size / 1e6:,.0f} MB of fluke JSONL; {os.cpu_count()} cores; CPU of each process tree, "
          "each arm in its own process", flush=True)
    floors: dict[str, dict] = {}
    for kind in args.floor or FLOORS:
        load = os.getloadavg()[0]
        db = work / "floor.db"
        discard(db)
        page = [str(args.floor_page)] if args.floor_page else []
        got = run_arm([sys.executable, str(Path(__file__).resolve()), "--floor-run", kind, str(jsonl), str(db), *page],
                      db)
        discard(db)
        print(_line(f"{kind} floor", args.n, got, load, {}), flush=True)
        floors[kind] = got
    arms = [arm.partition("=")[::2] for arm in args.src] or [("fluke ingest", None)]
    for name, src in arms:
        src, _, workers = (src or "").partition("@")
        load = os.getloadavg()[0]
        db = work / "ingest.db"
        discard(db)
        got = fluke_ingest(jsonl, db, src or None, workers or args.workers)
        discard(db)
        if got["code"]:
            print(f"{name}: failed (exit {got['code']})", flush=True)
            continue
        print(_line(name, args.n, got, load, floors), flush=True)
    print("goal (issue 37): fluke ingest <= 1.3x the keyed floor's CPU, peak RSS <= 300 MB, the WAL bounded")


if __name__ == "__main__":
    main()
