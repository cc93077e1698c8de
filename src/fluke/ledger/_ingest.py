"""One ingest: runs in, batches of rows built, one transaction, memory bounded by bytes.

Rows are built here (hashing each run's content once) in batches of at most :data:`BATCH`
runs or :data:`BATCH_BYTES` bytes of run bodies, whichever comes first. The first batches
are held, up to :attr:`Ledger.HOLD_BYTES` or :attr:`Ledger.HOLD_RUNS`: a small ingest is
then written at its end in one short transaction (SQLite's write lock is held only for
the writing). A larger one opens its transaction then and writes each batch as it is
built, so what is held never grows with the size of the input, however many runs it has.

Versions and counts are written at the end, in key order (see :mod:`fluke.ledger._writer`).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "i.db"))
>>> runs = [Run(scenario="s", trial=t, outcome=Outcome(passed=t % 2 == 0)) for t in range(5)]
>>> ingest_runs(ledger, runs + runs[:2])
IngestResult(added=5, skipped=2)
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from typing import TYPE_CHECKING, Any, Iterable

from ..record import Run, canonical_json
from ._overlap import OverlapCheck
from ._rows import Rows, version_id
from ._types import IngestResult
from ._writer import tally

if TYPE_CHECKING:
    from ._base import Ledger

#: A batch of rows is written when it holds this many runs ...
BATCH = 5000
#: ... or this many bytes of run bodies (τ²-bench runs are about 40 KB each).
BATCH_BYTES = 8 * 2 ** 20


def utcnow() -> str:
    """The current UTC time as a sortable ISO-8601 string with microseconds."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ingest_runs(ledger: "Ledger", runs: Iterable[Run], *, progress: Any = None) -> IngestResult:
    """Store ``runs`` in ``ledger`` in one transaction (see :meth:`Ledger.ingest`)."""
    recorded_at = utcnow()
    known: set[str] = set()                      # versions met in this ingest
    versions: list[tuple[int, str, str]] = []    # (vid, version, identity JSON) of those
    held: list[tuple] = []                       # batches built before the transaction began
    held_bytes = 0
    offered: dict[tuple, list[int]] = {}         # trials and passes of every run offered
    overlap = OverlapCheck()                     # where the first runs are stored from, afterwards
    seen = 0
    writer: Any = None

    with contextlib.ExitStack() as stack:

        def start() -> Any:
            stack.enter_context(ledger.atomic())
            new = ledger._run_writer()
            new.begin(recorded_at)
            return new

        def flush(rows: Rows) -> None:
            nonlocal seen, writer, held_bytes
            for identity in rows.identities:
                body = canonical_json(identity.model_dump(mode="json", exclude={"date"})).decode()
                versions.append((version_id(identity.version), identity.version, body))
            overlap.see(rows.keys, rows.sources)
            tally(offered, rows.vids, rows.scenarios, rows.conditions, rows.passed, rows.places)
            seen += len(rows)
            held.append(rows.columns())
            held_bytes += rows.size
            if writer is None and (held_bytes >= ledger.HOLD_BYTES or seen >= ledger.HOLD_RUNS):
                writer = start()
            if writer is not None:
                while held:
                    writer.put_runs(*held.pop(0))
            if progress:
                progress(seen)

        stack.enter_context(ledger.faults())
        rows = Rows(known)
        add, keys = rows.add, rows.keys
        for run in runs:
            add(run)
            if len(keys) >= BATCH or rows.size >= BATCH_BYTES:
                flush(rows)
                rows = Rows(known)
                add, keys = rows.add, rows.keys
        if rows:
            flush(rows)
        if writer is None:
            writer = start()
            while held:
                writer.put_runs(*held.pop(0))
        writer.put_versions(versions)
        added = writer.finish(offered)
    return IngestResult(added=added, skipped=seen - added, warnings=overlap.warnings(ledger))
