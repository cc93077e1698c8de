"""Writing a ledger's runs as a fluke Parquet dataset (:mod:`fluke.lake._layout`), streaming.

One pass over the stored runs in storage order; each run's body is parsed once for the
columns the group-bys read. Each version's rows are held until :data:`ROW_GROUP` of them, then
written as one row group of that version's current file (a new file past :data:`FILE_ROWS`),
so memory is bounded by versions × one row group, whatever the number of runs. The folder is
written beside its target as ``DIR.part`` and renamed into place when whole.

>>> import tempfile, os
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Outcome, Run
>>> folder = tempfile.mkdtemp()
>>> ledger = open_ledger(os.path.join(folder, "x.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, outcome=Outcome(passed=t > 0)) for t in range(3)])
>>> done = write_dataset(ledger, os.path.join(folder, "lake"))
>>> done.runs, done.versions, sorted(os.listdir(os.path.join(folder, "lake")))[:3]
(3, 1, ['counts.parquet', 'documents.parquet', 'fluke-lake.json'])
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import orjson

from ..errors import LedgerError, UsageError
from ._layout import LAYOUT_VERSION, MANIFEST, RUN_COLUMNS, TABLES, pyarrow, runs_arrow_schema, schema

#: Rows of one version held before they are written as a row group.
ROW_GROUP = 65_536
#: Rows in one file of a version's partition before the next file is begun.
FILE_ROWS = 4 * ROW_GROUP * 4
#: Bytes of bodies one version holds before its row group is written early (large runs).
HOLD_BYTES = 64 * 2 ** 20
_INT64 = (-2 ** 63, 2 ** 63 - 1)


@dataclass(frozen=True)
class LakeExport:
    """What :func:`write_dataset` wrote: runs, versions, files of runs, and where."""

    path: str
    runs: int
    versions: int
    files: int

    def describe(self) -> str:
        """One line for a person.

        >>> LakeExport("lake", 3, 1, 1).describe()
        'wrote 3 runs of 1 version as a Parquet dataset (1 file of runs, with the tally tables) to lake; not checked \
for secret-shaped values (fluke export --format jsonl counts them)'
        """
        return (f"wrote {self.runs} run{'s' if self.runs != 1 else ''} of {self.versions} "
                f"version{'s' if self.versions != 1 else ''} as a Parquet dataset ({self.files} "
                f"file{'s' if self.files != 1 else ''} of runs, with the tally tables) to {self.path}; not checked "
                "for secret-shaped values (fluke export --format jsonl counts them)")

    def to_dict(self) -> dict[str, Any]:
        """As JSON values.

        >>> LakeExport("lake", 3, 1, 1).to_dict()
        {'path': 'lake', 'runs': 3, 'versions': 1, 'files': 1, 'format': 'parquet'}
        """
        return {"path": self.path, "runs": self.runs, "versions": self.versions, "files": self.files,
                "format": "parquet"}


class _Partition:
    """One version's files: rows held as columns, flushed a row group at a time."""

    def __init__(self, folder: Path, vid: int) -> None:
        self.folder = folder / f"version={vid:015x}"
        self.folder.mkdir()
        self.columns: list[list] = [[] for _ in RUN_COLUMNS]
        self.bytes = 0
        self.writer: Any = None
        self.in_file = 0
        self.files = 0

    def add(self, row: Sequence[Any], size: int) -> None:
        for column, value in zip(self.columns, row, strict=True):
            column.append(value)
        self.bytes += size
        if len(self.columns[0]) >= ROW_GROUP or self.bytes >= HOLD_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self.columns[0] and self.files:
            return
        pa = pyarrow()
        import pyarrow.parquet as pq

        if self.writer is None or self.in_file >= FILE_ROWS:
            self.close()
            self.writer = pq.ParquetWriter(self.folder / f"part-{self.files:05d}.parquet", runs_arrow_schema(),
                                           compression="zstd")
            self.files += 1
            self.in_file = 0
        table = pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(self.columns, runs_arrow_schema(),
                                                                                  strict=True)],
                                     schema=runs_arrow_schema())
        self.writer.write_table(table, row_group_size=ROW_GROUP)
        self.in_file += table.num_rows
        self.columns = [[] for _ in RUN_COLUMNS]
        self.bytes = 0

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def run_row(k: int, vid: int, ingest: int, body: str, source: str | None, *, ledger: str) -> list[Any]:
    """The runs table's row of one stored run (its body parsed for the grouped columns).

    >>> body = '{"scenario":"s","trial":2,"outcome":{"passed":false,"died_at":0},"events":[{"kind":"user"}]}'
    >>> run_row(1, 2, 3, body, None, ledger="x")[:13]
    [1, 2, 3, 's', '', 2, 's', False, None, 'died_at', 0, 'user', None]
    """
    from ..record import condition_key, place_of

    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise LedgerError(f"{ledger}: the stored run with key {k} is not JSON ({exc}); the ledger was changed "
                          "outside fluke") from None
    outcome = doc.get("outcome") or {}
    passed = outcome.get("passed")
    place = place_of(passed, outcome.get("died_at"), doc.get("events") or ())
    trial = int(doc.get("trial", 0))
    if not _INT64[0] <= trial <= _INT64[1]:
        raise LedgerError(f"{ledger}: run {k}: trial {trial} does not fit a Parquet int64")
    scenario = doc.get("scenario", "")
    unit = doc.get("unit")
    cost = doc.get("cost") or None
    return [k, vid, ingest, scenario, condition_key(doc.get("condition") or {}), trial,
            scenario if unit is None else unit, None if passed is None else bool(passed), outcome.get("reward"),
            *(place or (None, None, None)), doc.get("latency"),
            None if cost is None else [(str(key), float(v)) for key, v in cost.items()], body, source]


class _Tally:
    """counts, steps and unit_cells of the rows written, as the ledger keeps them."""

    def __init__(self) -> None:
        self.counts: dict[tuple, list[int]] = {}
        self.steps: dict[tuple, int] = {}
        self.cells: dict[tuple, list] = {}

    def add(self, row: Sequence[Any]) -> None:
        _, vid, _, scenario, condition, _, unit, passed, reward, cause, step, event = row[:12]
        count = self.counts.setdefault((vid, scenario, condition), [0, 0, 0])
        count[0] += 1
        count[1] += passed is True
        count[2] += passed is None
        if cause is not None:
            key = (vid, scenario, condition, cause, step, event)
            self.steps[key] = self.steps.get(key, 0) + 1
        cell = self.cells.setdefault((vid, unit, scenario, condition), [0, 0, 0, 0, 0.0, 0.0])
        cell[0] += 1
        cell[1] += passed is True
        cell[2] += passed is None
        if reward is not None:
            cell[3] += 1
            cell[4] += reward
            cell[5] += reward * reward

    def tables(self) -> dict[str, list[tuple]]:
        return {"counts": [(*g, *c) for g, c in sorted(self.counts.items())],
                "steps": [(*g, n) for g, n in sorted(self.steps.items())],
                "unit_cells": [(*g, *c) for g, c in sorted(self.cells.items())]}


def _write_table(path: Path, name: str, rows: list[tuple]) -> None:
    pa = pyarrow()
    import pyarrow.parquet as pq

    columns = TABLES[name]
    target = schema(columns)
    arrays = [pa.array([r[i] for r in rows], type=target.field(i).type) for i in range(len(columns))]
    pq.write_table(pa.Table.from_arrays(arrays, schema=target), path / f"{name}.parquet", compression="zstd")


def write_dataset(ledger: Any, out: str | Path, *, version: str | Sequence[str] | None = None,
                  scenario: str | None = None, condition: str | None = None, since: str | None = None,
                  until: str | None = None) -> LakeExport:
    """Write the runs matching the filters (those of :meth:`fluke.ledger.Ledger.runs`) as a fluke
    Parquet dataset in the folder ``out``, which must not exist yet (see the module docstring)."""
    from ..ledger._base import VISIBLE
    from ..ledger._rows import body_holds

    pyarrow()
    target = Path(out)
    if target.exists():
        raise UsageError(f"-o {out}: already exists; a Parquet dataset is written to a new folder")
    if not target.parent.is_dir():
        raise UsageError(f"-o {out}: the folder {target.parent} does not exist (create it first)")
    part = target.with_name(target.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    (part / "runs").mkdir(parents=True)
    partitions: dict[int, _Partition] = {}
    tally = _Tally()
    written = 0
    try:
        where, params = ledger._where(scenario=scenario, version=version, since=since, until=until)
        where = where or f" WHERE {VISIBLE}"
        for k, vid, ingest, body, source in ledger.stream(f"SELECT k, vid, ingest, body, source FROM runs{where}",
                                                          params):
            if body is None:
                raise LedgerError(f"{ledger.name}: holds outcome-only runs (no body), which a dataset cannot carry "
                                  "losslessly; answer from it in place instead")
            body = body.decode() if isinstance(body, bytes) else body
            if condition and not body_holds(body, condition, ledger=ledger.name):
                continue
            source = source.decode() if isinstance(source, bytes) else source
            row = run_row(int(k), int(vid), int(ingest), body, source, ledger=ledger.name)
            partition = partitions.get(row[1])
            if partition is None:
                partition = partitions[row[1]] = _Partition(part / "runs", row[1])
            partition.add(row, len(body))
            tally.add(row)
            written += 1
        for partition in partitions.values():
            partition.flush()
            partition.close()
        _write_tables(ledger, part, set(partitions), tally)
        (part / MANIFEST).write_text(json.dumps({
            "format": "fluke-lake", "layout": LAYOUT_VERSION, "runs": written,
            "tables": ["runs", *TABLES]}, indent=1) + "\n", encoding="utf-8")
        part.rename(target)
    except BaseException:
        for partition in partitions.values():
            partition.close()
        shutil.rmtree(part, ignore_errors=True)
        raise
    return LakeExport(str(target), written, len(partitions), sum(p.files for p in partitions.values()))


def _write_tables(ledger: Any, folder: Path, vids: set[int], tally: _Tally) -> None:
    versions = [row for row in ledger.query("SELECT vid, version, identity, first_recorded FROM versions "
                                            "ORDER BY vid") if int(row[0]) in vids]
    _write_table(folder, "versions", [(int(v), s, i, f) for v, s, i, f in versions])
    _write_table(folder, "ingests", [(int(i), at) for i, at in ledger.query("SELECT id, recorded_at FROM ingests "
                                                                            "ORDER BY id")])
    _write_table(folder, "documents", ledger.query("SELECT kind, digest, body, recorded_at FROM documents "
                                                   "ORDER BY kind, digest"))
    _write_table(folder, "grades", ledger.query("SELECT spec_digest, run_hash, body, recorded_at FROM grades "
                                                "ORDER BY spec_digest, run_hash"))
    for name, rows in tally.tables().items():
        _write_table(folder, name, rows)
