"""One ingest: runs in, batches of rows built, all or nothing, memory bounded by bytes.

Rows are built here (hashing each run's content once) in batches of at most :data:`BATCH`
runs or :data:`BATCH_BYTES` bytes of run bodies, whichever comes first. The first batches
are held, up to :attr:`Ledger.HOLD_BYTES` or :attr:`Ledger.HOLD_RUNS`: a small ingest is
then written at its end in one short transaction (SQLite's write lock is held only for
the writing). A larger one opens its transaction then and writes each batch as it is
built, so what is held never grows with the size of the input, however many runs it has.
On PostgreSQL that is still one transaction; on SQLite, whose write-ahead log would then
hold every page of the ingest, the batches are committed a few at a time
(:data:`COMMIT_BATCHES`) while the ingest is pending (:class:`_Staged`), and the ingest is still
all or nothing.

Versions and counts are written at the end, in key order (see :mod:`fluke.ledger._writer`).
On PostgreSQL concurrent ingests take turns to write (a transaction-level advisory lock, taken
by each before its first write), so they cannot deadlock however their inputs overlap; a
transient failure of the server on an ingest held whole is retried here.

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
import gc
import random
import time
from typing import TYPE_CHECKING, Any, Iterable

from ..record import canonical_json
from ._overlap import OverlapCheck
from ._rows import Rows, version_id
from ._types import IngestResult
from ._writer import tally

if TYPE_CHECKING:
    from ..record import Prepared, Run
    from ._base import Ledger

#: A batch of rows is written when it holds this many runs ...
BATCH = 5000
#: ... or this many bytes of run bodies (τ²-bench runs are about 40 KB each). Each batch
#: rewrites the pages of the key index it touches, nearly all of them once the ledger holds
#: a million runs, so larger batches write less (at 1M runs of 4 KB, 32 MiB batches took a
#: quarter less of the storing process's time than 8 MiB ones); but runs of 40 KB then
#: peaked 60–70 MB higher on a stream four times longer (16 MiB: on PostgreSQL too), which
#: tests/ledger/test_concurrency.py holds under 40 MB.
BATCH_BYTES = 8 * 2 ** 20


def utcnow() -> str:
    """The current UTC time as a sortable ISO-8601 string with microseconds."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ingest_runs(ledger: "Ledger", runs: Iterable[Run | Prepared], *, progress: Any = None) -> IngestResult:
    """Store ``runs`` in ``ledger``, all or nothing (see :meth:`Ledger.ingest`)."""
    recorded_at = utcnow()
    known: set[str] = set()                      # versions met in this ingest
    versions: list[tuple[int, str, str]] = []    # (vid, version, identity JSON) of those
    held: list[Rows] = []                        # batches built before the transaction began
    held_bytes = 0
    offered: dict[tuple, dict] = {}              # trials and passes of every run offered (_writer.tally)
    overlap = OverlapCheck()                     # where the first runs are stored from, afterwards
    seen = 0
    writer: Any = None

    with contextlib.ExitStack() as stack:

        def start(large: bool) -> Any:
            new = ledger._run_writer()
            if large and ledger._stages():
                return _Staged(ledger, new, recorded_at, stack)
            stack.enter_context(ledger.atomic())
            new.begin(recorded_at)
            return new

        def flush(rows: Rows) -> None:
            nonlocal seen, writer, held_bytes
            for identity in rows.identities:
                body = canonical_json(identity.model_dump(mode="json", exclude={"date"})).decode()
                versions.append((version_id(identity.version), identity.version, body))
            overlap.see(rows)
            tally(offered, rows)
            seen += len(rows)
            held.append(rows)
            held_bytes += rows.size
            if writer is None and (held_bytes >= ledger.HOLD_BYTES or seen >= ledger.HOLD_RUNS):
                writer = start(large=True)
            if writer is not None:
                while held:
                    writer.put_runs(held.pop(0))
            if progress:
                progress(seen)

        stack.enter_context(ledger.faults())
        stack.enter_context(_young_garbage())
        stack.enter_context(ledger.ingest_lock())
        ledger.drop_pending()   # what ingests that did not finish left (none is running now)
        rows = Rows(known)
        add = rows.add
        for run in runs:
            add(run)
            if len(rows) >= BATCH or rows.size >= BATCH_BYTES:
                flush(rows)
                rows = Rows(known)
                add = rows.add
        if rows:
            flush(rows)
        if writer is None:
            added, writer = _write_held(ledger, held, versions, offered, recorded_at)
        else:
            writer.put_versions(versions)
            added = writer.finish(offered)
        runs_writer = getattr(writer, "writer", writer)   # a staged ingest's own writer
    return IngestResult(added=added, skipped=seen - added, warnings=overlap.warnings(ledger),
                        same_trial=runs_writer.same_trial, same_trial_examples=tuple(runs_writer.same_trial_examples))


#: Times an ingest held whole is written before a transient failure (see
#: :meth:`Ledger._transient`) is reported.
RETRIES = 5


def _write_held(ledger: "Ledger", held: list[Rows], versions: list[tuple[int, str, str]],
                offered: dict[tuple, dict], recorded_at: str) -> tuple[int, Any]:
    """Write an ingest held whole (every batch built before its transaction) in one short
    transaction; return how many runs it added, and its writer. One the server broke off as transient (a
    deadlock or serialisation failure on PostgreSQL) left nothing, and is written again from
    what is held, up to :data:`RETRIES` times, instead of the user being asked to run it again."""
    for attempt in range(1, RETRIES + 1):
        try:
            with ledger.atomic():
                writer = ledger._run_writer()
                writer.begin(recorded_at)
                for batch in held:
                    writer.put_runs(batch)
                writer.put_versions(versions)
                return writer.finish(offered), writer
        except Exception as exc:
            if attempt == RETRIES or not ledger._transient(exc):
                raise
            time.sleep(random.uniform(0.01, 0.05) * attempt)
    raise AssertionError("unreachable")  # pragma: no cover


#: A staged ingest commits once it has written this many batches since its last commit: each
#: commit writes every page of the two key indexes its runs touched through the log (the keys
#: are random: at a million runs most of their pages, whatever the batch), so fewer, longer
#: transactions write less, while a batch's rows, the memory the ingest holds, stay as small
#: as before (SQLite's page cache, bounded, spills a long transaction's pages to the log).
COMMIT_BATCHES = 4


class _Staged:
    """One ingest committed a few batches per transaction, and still all or nothing.

    Its record goes into ``pending`` first (one transaction): readers skip the runs of a
    pending ingest. Its batches of runs are then written in transactions of
    :data:`COMMIT_BATCHES` batches each, so the write-ahead log is checkpointed as the ingest
    goes and stays a few transactions long. The last transaction writes the versions and
    counts and takes the ingest out of ``pending``: all its runs appear at once. If anything
    fails before that, the open transaction is rolled back, its runs are removed (a batch per
    transaction) and so is its record; if the process dies, the next ingest or writable open
    of the ledger removes them. The caller holds the ledger's ingest lock throughout, so no
    other ingest stores or skips a run of one that may yet be removed.
    """

    def __init__(self, ledger: "Ledger", writer: Any, recorded_at: str, stack: contextlib.ExitStack) -> None:
        self.ledger, self.writer, self.versions = ledger, writer, []
        self.done = False
        self.open: Any = None   # the transaction batches are being written in, if one is open
        self.batches = 0        # batches written in it
        with ledger.atomic():
            writer.begin(recorded_at)
            writer.stage()
        stack.push(self._undo)
        self.log = ledger._checkpointer()   # checkpoints beside the batches (the undo, after it stops)
        if self.log is not None:
            stack.push(self._stop)
        stack.push(self._abandon)           # first of the three: the open transaction rolled back

    def put_runs(self, batch: Any) -> None:
        if self.open is None:
            if self.log is not None:
                self.log.before_write()
            self.open = self.ledger.atomic()
            self.open.__enter__()
        self.writer.put_runs(batch)
        self.batches += 1
        if self.batches >= COMMIT_BATCHES:
            self._commit()

    def _commit(self) -> None:
        """Commit the open transaction (a failed commit is rolled back by :meth:`Ledger.atomic`)."""
        opened, self.open, self.batches = self.open, None, 0
        if opened is None:
            return
        opened.__exit__(None, None, None)
        if self.log is not None:
            self.log.committed()

    def put_versions(self, versions: list[tuple[int, str, str]]) -> None:
        self.versions = versions

    def finish(self, offered: dict[tuple, dict]) -> int:
        self._commit()
        with self.ledger.atomic():
            self.writer.put_versions(self.versions)
            added = self.writer.finish(offered)
            self.writer.unstage()
        self.done = True
        return added

    def _abandon(self, *exc: Any) -> bool:
        opened, self.open = self.open, None
        if opened is not None:   # the ingest failed with a transaction open: roll it back
            error = exc if exc and exc[0] is not None else (RuntimeError, RuntimeError("abandoned"), None)
            with contextlib.suppress(BaseException):
                opened.__exit__(*error)
        return False

    def _stop(self, *exc: Any) -> bool:
        log, self.log = self.log, None
        if log is not None:
            if exc and exc[0] is not None:   # the ingest failed already: say that, not this
                with contextlib.suppress(Exception):
                    log.close()
            else:
                with self.ledger.faults():
                    log.close()
        return False

    def _undo(self, *exc: Any) -> bool:
        if not self.done:
            with contextlib.suppress(Exception):   # left pending: skipped by readers, removed later
                self.ledger.drop_pending()
        return False


@contextlib.contextmanager
def _young_garbage() -> Any:
    """Collect cyclic garbage less often while an ingest runs: each line parsed makes a few
    hundred objects that die young (none in cycles), and a collection every 700 of them
    cost about 8% of an ingest here. The objects alive when it starts (the modules, the run
    model: about 30,000 the collector tracks, at a fluke ingest's start here) are frozen
    meanwhile, so the older collections that do run do not walk them again. Both restored
    afterwards."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], 50_000), *before[1:])
    frozen = gc.get_freeze_count() == 0   # not frozen by the caller (or by an ingest inside this one)
    if frozen:
        gc.freeze()
    try:
        yield
    finally:
        if frozen:
            gc.unfreeze()
        gc.set_threshold(*before)

