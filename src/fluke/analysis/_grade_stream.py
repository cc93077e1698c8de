"""Grade a ledger's runs in chunks, on one core, on worker processes or on a Ray cluster.

The parent reads stored bodies (never pydantic Runs) as they stream from the ledger, cuts
them into chunks and hands each chunk to the runner's executor as one job; a worker grades
the bodies (:class:`fluke.grading.ChunkGrader`) and returns each grade as its canonical JSON.
The parent stores the grades as they come back, one transaction per batch of chunks, keyed by
the spec's digest and the run's hash. So a grade that was interrupted (Ctrl-C, ``kill -9``)
and started again reads back what was stored and grades only the rest; the answer is the
one an uninterrupted grade gives, because a stored grade is the grade of that body under
that spec.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.grading import load_spec
>>> from fluke.record import Identity, Outcome, Run, ToolCall
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "g.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True),
...                        events=[ToolCall(tool="refund" if t else "lookup", ok=True)]) for t in range(5)])
>>> spec = load_spec({"tools": ["lookup", "refund"], "forbidden": ["refund"]})
>>> first = grade_ledger(ledger, spec, chunk=2)
>>> first.graded, first.stored, first.reused, sum(g.hard for g in first.grades)
(5, 5, 0, 4)
>>> again = grade_ledger(ledger, spec, chunk=2)
>>> again.graded, again.reused, again.grades == first.grades
(0, 5, True)
"""

from __future__ import annotations

import hashlib
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
    """The grades of the selected runs in ledger order; how many were graded here, how many
    of those were newly stored, how many were read back from an earlier grade; which
    executor graded them on how many workers."""

    grades: tuple
    graded: int
    stored: int | None
    reused: int
    executor: str
    jobs: int | None


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


def _stored_grade(text: str, name: str):
    from ..grading import RunGrade

    try:
        return RunGrade.from_dict(orjson.loads(text))
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise LedgerError(f"{name}: a stored grade is not readable ({exc}); it was changed outside fluke. "
                          "Grade again with --no-store, or restore the ledger from a backup") from None


def grade_ledger(ledger, spec, *, version: Any = None, scenario: str | None = None, store: bool = True,
                 executor: str | None = None, jobs: int | None = None, address: str | None = None,
                 chunk: int = CHUNK, batch: int = BATCH, total: int | None = None,
                 progress: Callable[[int, int], None] | None = None) -> LedgerGrades:
    """Grade the ledger's runs (filtered by ``version``/``scenario``) against a loaded spec.

    With ``store``, grades already stored under the spec's digest are read back instead of
    graded again, and new grades are stored as they come back, ``batch`` (at least) to a
    transaction. ``executor`` is one of :data:`fluke.runner.EXECUTORS` (``address``: the Ray
    cluster's); ``progress(done, total)`` is called as chunks finish.
    """
    from ..grading import ChunkGrader, RunGrade
    from ..runner import Job, executor_for

    total = ledger.count(scenario=scenario, version=version) if total is None else total
    executor, jobs = pick_executor(executor, jobs, total, chunk)
    run_jobs = executor_for(executor, workers=jobs, address=address)
    known = ledger.grade_bodies(spec.digest) if store else {}
    slots: list[Any] = []       # a RunGrade per run, in ledger order; None until its chunk is back
    starts: dict[int, list[int]] = {}   # chunk number -> the slots its grades fill
    reused = 0
    cut: list[int] = []     # the size of every chunk cut so far

    def chunks() -> Iterator[Job]:
        nonlocal reused
        bodies: list[str] = []
        where: list[int] = []
        for body, _source in ledger.run_bodies(scenario=scenario, version=version):
            if known:
                found = known.get(hashlib.sha256(body.encode()).hexdigest())
                if found is not None:
                    slots.append(_stored_grade(found, ledger.name))
                    reused += 1
                    continue
            where.append(len(slots))
            slots.append(None)
            bodies.append(body)
            if len(bodies) == chunk:
                starts[number := len(cut)] = where
                cut.append(len(bodies))
                yield Job(number, "", 0, bodies, 0)
                bodies, where = [], []
        if bodies:
            starts[number := len(cut)] = where
            cut.append(len(bodies))
            yield Job(number, "", 0, bodies, 0)

    grader = ChunkGrader(spec.body, ledger.name)
    stored = 0
    done = 0
    pending: list[tuple[str, bytes]] = []   # graded, not yet stored
    for job, attempt in run_jobs(chunks(), grader):
        if attempt.error:
            raise RuntimeError(f"grading a chunk of {len(job.input)} runs failed: {attempt.error}\n"
                               f"{attempt.traceback or ''}")
        value = attempt.value
        if isinstance(value, tuple):
            _raise_fault(value)
        grades = [RunGrade.from_dict(orjson.loads(g)) for g in value]
        if store:
            pending += [(g.run_hash, raw) for g, raw in zip(grades, value)]
            if len(pending) >= batch:
                stored += ledger.put_grades(spec.digest, pending)
                pending = []
        for i, g in zip(starts.pop(job.case), grades):
            slots[i] = g
        done += len(grades)
        if progress is not None:
            progress(done + reused, total)
    if pending:
        stored += ledger.put_grades(spec.digest, pending)
    if progress is not None:
        progress(len(slots), len(slots))
    return LedgerGrades(tuple(slots), done, stored if store else None, reused, executor, jobs)
