"""One ingest: runs in, batches of rows built, a writer chosen, one transaction.

Rows are built here, in this process (hashing each run's content once). The first
batches are held until the ingest either ends (small: written on the ledger's own
connection) or outgrows :attr:`Ledger.PIPE_AFTER` (large: handed to the backend's writer
process, if it has one, while this process keeps reading and hashing).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "i.db"))
>>> runs = [Run(scenario="s", trial=t, outcome=Outcome(passed=t % 2 == 0)) for t in range(5)]
>>> ingest_runs(ledger, runs + runs[:2])
IngestResult(added=5, skipped=2)
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Iterable

from ..record import Run, canonical_json
from ._overlap import OverlapCheck
from ._rows import Rows, version_id
from ._types import IngestResult
from ._writer import tally

if TYPE_CHECKING:
    from ._base import Ledger

#: Runs are written in batches of this many rows (all inside one transaction).
BATCH = 5000


def utcnow() -> str:
    """The current UTC time as a sortable ISO-8601 string with microseconds."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ingest_runs(ledger: "Ledger", runs: Iterable[Run], *, progress: Any = None) -> IngestResult:
    """Store ``runs`` in ``ledger`` in one transaction (see :meth:`Ledger.ingest`)."""
    recorded_at = utcnow()
    known: set[str] = set()          # versions met in this ingest
    pending: list[tuple] = []        # versions met before a writer was chosen
    batches: list[tuple] = []        # batches built before a writer was chosen
    writer: Any = None
    piped = False
    seen = 0
    rows = Rows(known)
    offered: dict[tuple, list[int]] = {}   # trials and passes of every run offered
    overlap = OverlapCheck()               # where the first runs are stored from, afterwards

    def flush() -> None:
        nonlocal rows, seen, writer, piped
        if rows:
            for identity in rows.identities:
                body = canonical_json(identity.model_dump(mode="json", exclude={"date"})).decode()
                pending.append((version_id(identity.version), identity.version, body))
            batches.append(rows.columns())
            overlap.see(rows.keys, rows.sources)
            tally(offered, rows.vids, rows.scenarios, rows.conditions, rows.passed)
            seen += len(rows)
            rows = Rows(known)
        if writer is None and seen >= ledger.PIPE_AFTER and not ledger._depth:
            writer = ledger._piped_writer()
            piped = writer is not None
            if piped:
                writer.begin(recorded_at)
        if writer is not None:
            for version in pending:
                writer.put_version(*version)
            pending.clear()
            for batch in batches:
                writer.put_runs(*batch)
            batches.clear()
        if progress:
            progress(seen)

    try:
        add, keys = rows.add, rows.keys
        for run in runs:
            add(run)
            if len(keys) >= BATCH:
                flush()
                add, keys = rows.add, rows.keys
        if piped:
            flush()
            added = writer.finish(offered)
            ledger._background.append(writer)
            return IngestResult(added=added, skipped=seen - added, warnings=overlap.warnings(ledger))
    except BaseException:
        if piped:
            writer.abort()
        raise
    with ledger.atomic():
        writer = ledger._run_writer()
        writer.begin(recorded_at)
        flush()
        added = writer.finish(offered)
    return IngestResult(added=added, skipped=seen - added, warnings=overlap.warnings(ledger))

