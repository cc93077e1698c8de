"""Grade a ledger's runs in slices, on one core, on worker processes or on a Ray cluster.

The ledger is cut into slices of about :data:`CHUNK` runs in storage order
(:meth:`fluke.ledger.Ledger.slices`); each slice is one job for the runner's executor. A
worker process opens the ledger itself (its own read connection, once) and reads its slice's
stored bodies, never pydantic Runs; on Ray, or for a ledger in memory, the parent reads the
slice and sends the bodies with the job. The worker reads back the grades an earlier grade
stored for those runs, grades the rest (:class:`fluke.grading.ChunkGrader`) and returns
counts, not grades: a :class:`fluke.grading.GradeTally`, the worst few grades per version,
and, only when asked, every grade's JSON (to stream) and the new ones (to store).

The parent merges the slices in order, so the answer is the one a single process gives
whatever the number of workers, and stores new grades as they come back, one transaction
per :data:`BATCH`, keyed by the spec's digest and the run's hash. A grade that was
interrupted (Ctrl-C, ``kill -9``) and started again reads back what was stored and grades
only the rest; the answer is the one an uninterrupted grade gives. Memory stays flat in the
number of runs: what is held is the counts per case, the worst rows, and the slices in flight.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.grading import load_spec
>>> from fluke.record import Identity, Outcome, Run, ToolCall
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "g.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True),
...                        events=[ToolCall(tool="refund" if t else "lookup", ok=True)]) for t in range(5)])
>>> spec = load_spec({"tools": ["lookup", "refund"], "forbidden": ["refund"]})
>>> first = grade_ledger(ledger, spec, chunk=2)
>>> first.graded, first.stored, first.reused, first.tally.gate().cases[0].hard_runs
(5, 5, 0, 4)
>>> again = grade_ledger(ledger, spec, chunk=2)
>>> again.graded, again.reused, again.worst == first.worst
(0, 5, True)
"""

from __future__ import annotations

import hashlib
import heapq
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import orjson

from ..errors import LedgerError, UsageError

#: Runs per chunk (one job): big enough that sending a chunk costs little next to grading it.
CHUNK = 500
#: Grades stored per transaction: a commit costs a sync to disk (tens of milliseconds), so
#: several chunks share one; an interruption loses at most this many grades' work.
BATCH = 5_000


@dataclass(frozen=True)
class LedgerGrades:
    """The counts of the selected runs' grades (:class:`fluke.grading.GradeTally`) and the
    ``keep`` worst grades of each version, worst first (every grade when ``keep`` is None);
    how many were graded here, how many of those were newly stored, how many were read back
    from an earlier grade; which executor graded them on how many workers."""

    tally: Any
    worst: dict
    graded: int
    stored: int | None
    reused: int
    executor: str
    jobs: int | None


@dataclass(frozen=True)
class Slice:
    """One job: a slice of the ledger (its number and key bounds), with its bodies and the
    grades stored for them when the parent read it for the worker."""

    number: int
    bounds: tuple[int, int]
    bodies: list | None = None
    stored: dict | None = None


class SliceGrader:
    """Reads one slice of the ledger and grades it: what a worker runs. Picklable: it carries
    the ledger's URL, and each worker process opens that ledger once; the ledger object
    itself is used only in the process that opened it (the local executor)."""

    _open: dict[str, Any] = {}   # per worker process: ledger URL -> ledger

    def __init__(self, grader: Any, url: str, filters: dict, digest: str | None, ledger: Any = None) -> None:
        self.grader, self.url, self.filters, self.digest, self.ledger = grader, url, filters, digest, ledger

    def __getstate__(self) -> dict:
        return {**self.__dict__, "ledger": None}

    def _ledger(self) -> Any:
        if self.ledger is not None:
            return self.ledger
        ledger = self._open.get(self.url)
        if ledger is None:
            from ..ledger import open_ledger

            ledger = self._open[self.url] = open_ledger(self.url, create=False)
        return ledger

    def __call__(self, piece: Slice) -> Any:
        from ..errors import FlukeError
        from ..grading import ChunkGrades, GradeTally

        bodies, stored = piece.bodies, piece.stored
        if bodies is None:
            try:
                bodies, stored = read_slice(self._ledger(), piece.bounds, self.filters, self.digest)
            except FlukeError as exc:
                return ChunkGrades(piece.number, GradeTally(), [], None, [], 0, 0,
                                   ("fault", type(exc).__name__, str(exc)))
        return self.grader(bodies, number=piece.number, stored=stored)


def read_slice(ledger, bounds: tuple[int, int], filters: dict, digest: str | None) -> tuple[list, dict | None]:
    """The bodies of one slice, and the grades stored for them under ``digest`` (None: not storing)."""
    bodies = list(ledger.run_slice(bounds, **filters))
    if digest is None or not bodies:
        return bodies, None
    hashes = [hashlib.sha256(b.encode() if isinstance(b, str) else b).hexdigest() for b in bodies]
    return bodies, ledger.grade_bodies(digest, hashes)


def pick_executor(executor: str | None, jobs: int | None, runs: int, chunk: int = CHUNK) -> tuple[str, int | None]:
    """``(executor, jobs)``: as asked, else worker processes on every core when there are
    chunks enough to share, else this process. Ray's ``jobs`` stays None unless given: the
    cluster's CPUs decide how many chunks are in flight.

    >>> pick_executor(None, 1, 10_000), pick_executor(None, 2, 100), pick_executor("ray", None, 5)
    (('local', 1), ('local', 1), ('ray', None))
    """
    if jobs is not None and jobs < 1:
        raise UsageError(f"jobs={jobs} must be at least 1")
    if executor == "local":
        return "local", 1
    if executor == "ray":
        return "ray", jobs
    if executor is not None:
        return executor, jobs or (os.cpu_count() or 1)
    jobs = jobs or (os.cpu_count() or 1)
    return ("processes", jobs) if jobs > 1 and runs > chunk else ("local", 1)


def _raise_fault(value: tuple) -> None:
    from .. import errors

    _, name, message = value
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, LedgerError):
        raise cls(message)
    raise LedgerError(message)   # any other refusal of a body: the ledger's fault, one line


def grade_ledger(ledger, spec, *, version: Any = None, scenario: str | None = None, store: bool = True,
                 reuse: bool = False,
                 executor: str | None = None, jobs: int | None = None, address: str | None = None,
                 chunk: int = CHUNK, batch: int = BATCH, total: int | None = None,
                 progress: Callable[[int, int], None] | None = None, keep: int | None = 25,
                 sink: Callable[[list], None] | None = None) -> LedgerGrades:
    """Grade the ledger's runs (filtered by ``version``/``scenario``) against a loaded spec.

    With ``store`` (or ``reuse``, which stores nothing), grades already stored under the spec's
    digest are read back instead of graded again; with ``store`` new grades are stored as they
    come back, ``batch`` (at least) to a transaction. ``executor`` is one of
    :data:`fluke.runner.EXECUTORS` (``address``: the Ray cluster's); ``progress(done, total)``
    is called as slices finish. ``sink``, when given, is called with every grade's JSON (a list
    of bytes per slice), in storage order.
    """
    from ..grading import ChunkGrader
    from ..runner import Job, executor_for

    total = ledger.count(scenario=scenario, version=version) if total is None else total
    executor, jobs = pick_executor(executor, jobs, total, chunk)
    run_jobs = executor_for(executor, workers=jobs, address=address)
    filters = {"scenario": scenario, "version": version}
    digest = spec.digest if store or reuse else None
    pieces = ledger.slices(max(1, -(-total // chunk)))
    # a worker process reads its slices itself; a Ray task may run where the ledger is not
    # (a file on this machine), and a ledger in memory is this process's alone; a Parquet
    # dataset's tasks read their own slices (SHARED_READS: its files are only read)
    carry = (executor not in ("local", "processes") and not getattr(ledger, "SHARED_READS", False)) \
        or ledger.url.endswith(":memory:")
    grader = ChunkGrader(spec.body, ledger.name, keep=keep, lines=sink is not None, store=store)
    worker = SliceGrader(grader, ledger.url, filters, digest, ledger=ledger if executor == "local" else None)

    def slices() -> Iterator[Job]:
        for number, bounds in enumerate(pieces):
            piece = (Slice(number, bounds, *read_slice(ledger, bounds, filters, digest)) if carry
                     else Slice(number, bounds))
            yield Job(number, "", 0, piece, 0)

    merged = Merge(keep, sink)
    waiting: dict[int, Any] = {}
    following = 0             # the number of the next slice to merge
    stored = 0
    pending: list[tuple[str, bytes]] = []   # graded, not yet stored
    for job, attempt in run_jobs(slices(), worker):
        if attempt.error:
            raise RuntimeError(f"grading slice {job.case} of the ledger failed: {attempt.error}\n"
                               f"{attempt.traceback or ''}")
        part = attempt.value
        if part.fault is not None:
            _raise_fault(part.fault)
        waiting[part.number] = part
        while following in waiting:   # in order, so that every merge is the one a single process makes
            part = waiting.pop(following)
            following += 1
            merged.add(part)
            if store and part.new:
                pending += part.new
                if len(pending) >= batch:
                    stored += ledger.put_grades(spec.digest, pending)
                    pending = []
            if progress is not None:
                progress(merged.graded + merged.reused, total)
    if pending:
        stored += ledger.put_grades(spec.digest, pending)
    if progress is not None:
        progress(merged.graded + merged.reused, merged.graded + merged.reused)
    return LedgerGrades(merged.tally, merged.rows(), merged.graded, stored if store else None, merged.reused,
                        executor, jobs)


class Merge:
    """The grades of chunks merged in order: their tally, the ``keep`` worst rows of each
    version (every row when None), and every grade's JSON passed on to ``sink``."""

    def __init__(self, keep: int | None, sink: Callable[[list], None] | None = None) -> None:
        from ..grading import GradeTally

        self.keep, self.sink = keep, sink
        self.tally = GradeTally()
        self.worst: dict[Any, list] = {}
        self.graded = self.reused = 0

    def add(self, part: Any) -> None:
        """Merge one :class:`fluke.grading.ChunkGrades` (the next in order)."""
        self.tally.merge(part.tally)
        for key, v, raw in part.worst:
            self.worst.setdefault(v, []).append((key, raw))
        if self.keep is not None:
            for v, rows in self.worst.items():
                if len(rows) > self.keep:
                    self.worst[v] = heapq.nsmallest(self.keep, rows, key=lambda row: row[0])
        if self.sink is not None:
            self.sink(part.lines)
        self.graded += part.graded
        self.reused += part.reused

    def rows(self) -> dict:
        """Version -> its kept grades, worst first."""
        from ..grading import RunGrade

        return {v: tuple(RunGrade.from_dict(orjson.loads(raw)) for _, raw in sorted(kept, key=lambda row: row[0]))
                for v, kept in self.worst.items()}
