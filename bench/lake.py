#!/usr/bin/env python3
"""The count verbs over a fluke Parquet dataset of outcome-only trial rows, through DuckDB.

Writes (once, cached under ``--dir``) a dataset of ``--rows`` trial rows made here with numpy
and pyarrow, in the layout ``fluke export --format parquet`` writes (``fluke.lake``) but
without bodies: two versions (``model=model-a``, ``model=model-b``) over ``--scenarios``
scenarios, the trials of each scenario numbered from 0, a scenario's pass rate fixed by its
number (model-b 5 points lower), 2% unknown outcomes, every failed run dead at a step in
0..19 (``died_at``), so the per-step analysis of ``compare`` has places. Then times each
count verb on ``--ledger parquet:DIR`` in its own process, with that process's peak RSS
(:func:`verbs.measure`: a grandchild's ``ru_maxrss``)::

    summary, believe, passk, compare, leaderboard, consistency, fixcheck, interval

and prints one table (wall seconds, CPU seconds of the verb's process tree, peak MB, exit code,
and the load average when the verb began) with the machine's load average before and after: on
a shared machine the CPU time is the figure that the other jobs do not inflate.

    python bench/lake.py --rows 1000000                  # 10^6 rows, 2,000 scenarios
    python bench/lake.py --rows 100000000 --scenarios 20000
    python bench/lake.py --rows 10000000 --verbs summary,compare
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from verbs import fluke, measure  # noqa: E402

A, B = "model=model-a", "model=model-b"
STEPS = 20
#: Rows made and written at a time (memory of the generator: a few hundred MB).
CHUNK = 4_000_000


def verbs(ledger: str) -> dict[str, list[str]]:
    base = ["--ledger", ledger]
    return {
        "summary": fluke(*base, "summary"),
        "believe": fluke(*base, "believe", "--version", A),
        "passk": fluke(*base, "passk", "--version", A),
        "compare": fluke(*base, "compare", A, B, "--no-record"),
        "leaderboard": fluke(*base, "leaderboard"),
        "consistency": fluke(*base, "consistency", A, B),
        "fixcheck": fluke(*base, "fixcheck", A, B),
        "interval": fluke(*base, "interval", "--version", A),
    }


def build(folder: Path, rows: int, scenarios: int, seed: int = 0) -> None:
    """The outcome-only dataset of ``rows`` rows (half per version) in ``folder``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fluke.lake import LAYOUT_VERSION, MANIFEST
    from fluke.lake._layout import TABLES, schema
    from fluke.ledger._rows import version_id
    from fluke.record import Identity

    if (folder / MANIFEST).exists():
        return
    start = time.perf_counter()
    part = folder.with_name(folder.name + ".part")
    (part / "runs").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    trials = rows // (2 * scenarios)
    names = pa.array([f"scenario-{i:06d}" for i in range(scenarios)])
    text = pa.dictionary(pa.int32(), pa.string())
    fields = [("k", pa.int64()), ("vid", pa.int64()), ("ingest", pa.int64()), ("scenario", text),
              ("condition", text), ("trial", pa.int64()), ("unit", text), ("passed", pa.bool_()),
              ("reward", pa.float64()), ("cause", text), ("step", pa.int64()), ("event", text),
              ("latency", pa.float64()), ("cost", pa.map_(pa.string(), pa.float64())), ("body", pa.string()),
              ("source", pa.string())]
    target = pa.schema(fields)
    identities = [Identity(model="model-a"), Identity(model="model-b")]
    per_chunk = max(1, CHUNK // trials)
    for index, identity in enumerate(identities):
        vid = version_id(identity.version)
        folder_v = part / "runs" / f"version={vid:015x}"
        folder_v.mkdir(exist_ok=True)
        with pq.ParquetWriter(folder_v / "part-00000.parquet", target, compression="zstd") as writer:
            for first in range(0, scenarios, per_chunk):
                codes = np.arange(first, min(first + per_chunk, scenarios), dtype=np.int32)
                n = codes.size * trials
                scen = np.repeat(codes, trials)
                rate = 0.35 + 0.5 * (scen % 97) / 96 - 0.05 * index
                passed = rng.random(n) < rate
                unknown = rng.random(n) < 0.02
                step = rng.integers(0, STEPS, n)
                failed = ~passed & ~unknown
                cause_codes = np.where(passed, 0, 1).astype(np.int32)
                empty = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([""]))
                scen_array = pa.DictionaryArray.from_arrays(pa.array(scen), names)
                columns = [
                    pa.array(rng.integers(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)),
                    pa.array(np.full(n, vid, np.int64)), pa.array(np.ones(n, np.int64)), scen_array, empty,
                    pa.array(np.tile(np.arange(trials, dtype=np.int64), codes.size)), scen_array,
                    pa.array(passed, mask=unknown),
                    pa.nulls(n, pa.float64()),
                    pa.DictionaryArray.from_arrays(pa.array(cause_codes, mask=unknown),
                                                   pa.array(["censored", "died_at"])),
                    pa.array(np.where(passed, STEPS - 1, step), mask=unknown),
                    pa.DictionaryArray.from_arrays(pa.array(np.where(failed, 1, 0).astype(np.int32), mask=unknown),
                                                   pa.array(["", "step"])),
                    pa.nulls(n, pa.float64()), pa.nulls(n, target.field("cost").type), pa.nulls(n, pa.string()),
                    pa.nulls(n, pa.string()),
                ]
                writer.write_table(pa.Table.from_arrays(columns, schema=target), row_group_size=1 << 20)
    versions = schema(TABLES["versions"])
    pq.write_table(pa.table({"vid": [version_id(i.version) for i in identities],
                             "version": [i.version for i in identities],
                             "identity": [i.model_dump_json() for i in identities],
                             "first_recorded": ["2026-12-01T00:00:00Z"] * 2}, schema=versions),
                   part / "versions.parquet")
    pq.write_table(pa.table({"id": [1], "recorded_at": ["2026-12-01T00:00:00Z"]}, schema=schema(TABLES["ingests"])),
                   part / "ingests.parquet")
    (part / MANIFEST).write_text(json.dumps({"format": "fluke-lake", "layout": LAYOUT_VERSION,
                                             "runs": trials * scenarios * 2, "tables": ["runs", "versions",
                                                                                        "ingests"]}))
    part.rename(folder)
    size = sum(f.stat().st_size for f in folder.rglob("*.parquet"))
    print(f"wrote {trials * scenarios * 2:,} rows ({trials} trials x {scenarios} scenarios x 2 versions, "
          f"{size / 2 ** 20:,.0f} MiB) in {time.perf_counter() - start:.1f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/fluke-lake-bench"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--scenarios", type=int, default=2_000)
    parser.add_argument("--verbs", default="", help="comma-separated subset")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    folder = args.dir / f"lake-{args.rows}-{args.scenarios}"
    build(folder, args.rows, args.scenarios)
    chosen = [v for v in args.verbs.split(",") if v]
    print(f"load before: {os.getloadavg()}", flush=True)
    print("| verb | seconds | CPU s | peak RSS (MB) | exit | load |\n|---|---|---|---|---|---|", flush=True)
    for name, cmd in verbs(f"parquet:{folder}").items():
        if chosen and name not in chosen:
            continue
        load = os.getloadavg()[0]
        took = measure(cmd, timeout=args.timeout)
        seconds, mb, code = took
        print(f"| `{name}` | {seconds:.2f} | {took.cpu:.2f} | {mb:,.0f} | {code} | {load:.1f} |", flush=True)
    print(f"load after: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
