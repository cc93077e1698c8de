"""fluke's own JSONL: one :class:`~fluke.record.Run` per line (what ``fluke export`` writes).

>>> sniff({"format_version": 1, "scenario": "s1"}), sniff({"task_id": 3})
(True, False)
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from ..record import Prepared, Run, prepare
from ._common import build_run, with_identity
from ._reader import Reader


def sniff(first: Any) -> bool:
    """A JSON object with a ``scenario`` and a fluke ``format_version``."""
    return isinstance(first, dict) and "scenario" in first and "format_version" in first


def read(lines: Iterable[tuple[int, Any]], *, file: str, identity: dict[str, Any],
         prepared: bool = False, workers: int | str = 0, notes: list[str] | None = None) -> Iterator[Run | Prepared]:
    """Yield one run per line; a stored ``source`` is kept, else this file and line are recorded.

    With ``prepared``, a line of the plain shape is yielded as a :class:`~fluke.record.Prepared`
    run (checked and serialised without the model, for an ingest); any other line is
    validated by the model as always, with the same errors. ``workers`` (with ``prepared``):
    how many forked processes read, parse and prepare the lines of a file of
    :data:`BESIDE_BYTES` or more while this one stores them; 0 (the default) forks none,
    ``"auto"`` :data:`BESIDE_PROCESSES` where there are two cores or more and one is idle
    (:func:`auto_workers`). ``notes`` is told
    when processes were forked, and from a process running other threads.
    """
    filled: dict[tuple, dict[str, Any]] = {}   # --identity merged into each identity the file gives
    if prepared and isinstance(getattr(lines, "path", None), Path) and hasattr(lines, "raw"):
        count = _beside(lines.path, workers)
        if count:
            _say_fork(count, notes)
            yield from _read_beside(lines.path, file=file, identity=identity, count=count)
            return
        from ..record import LinePreparer

        fast = LinePreparer(file, identity)
        for number, line in lines.raw():
            yield fast(line, number) or _one(number, lines.parse(number, line), file, identity, filled, True)
        return
    for number, obj in lines:
        yield _one(number, obj, file, identity, filled, prepared)


def _one(number: int, obj: Any, file: str, identity: dict[str, Any], filled: dict[tuple, dict[str, Any]],
         prepared: bool, model: bool = True) -> Run | Prepared | None:
    """The run of one parsed line (None for one not prepared, unless the ``model`` decides it)."""
    record = f"line {number}"
    if isinstance(obj, dict):
        if identity:
            obj = dict(obj, identity=_filled(filled, obj.get("identity") or {}, identity, file, record))
        if obj.get("source") is None:   # validated with the run, as a Source
            obj = dict(obj, source={"adapter": "fluke", "file": file, "position": number})
        if prepared:
            ready = prepare(obj)
            if ready is not None:
                return ready
    return build_run(obj, file=file, record=record) if model else None


#: A file at least this large is read, parsed and prepared by other processes while this
#: one stores the runs (where processes can be forked and there are two cores or more).
BESIDE_BYTES = 8 * 2 ** 20
#: Lines sent from a reading process at a time, at most, ...
BESIDE_LINES = 1000
#: ... and at most about this many bytes of them (runs of 40 KB go 100 at a time).
BESIDE_BATCH_BYTES = 4 * 2 ** 20
#: Of every this many batches, a single reading process sends the last as lines for this one
#: to parse and prepare (as it does a line that process could not prepare): this one stores
#: every run, and parsing a share of the lines too keeps both processes about equally busy.
BESIDE_SHARE = 4
#: Processes reading a large file beside the one ingesting it (at most one per core): with
#: two, on two cores, the three are about equally busy (preparing a line takes about twice
#: what storing it takes), and a loaded machine gives the ingest three shares of its time.
BESIDE_PROCESSES = 2


def auto_workers(cores: int | None = None, load: float | None = None) -> int:
    """The reading processes ``workers="auto"`` forks: :data:`BESIDE_PROCESSES` where there are
    two cores or more and the machine's 1-minute load average leaves a core idle beside the
    ingest's own (``load < cores - 1``), else none. Forked readers make an ingest faster only
    on idle cores: each line then travels to the storing process through a pipe, which costs
    CPU of its own, so on a busy machine they add to the CPU and to the time (docs/ledger.md).

    >>> auto_workers(2, 0.3), auto_workers(2, 1.2), auto_workers(8, 3.0), auto_workers(1, 0.0)
    (2, 0, 2, 0)
    """
    cores = (os.cpu_count() or 1) if cores is None else cores
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:   # no load average here: as on an idle machine
            load = 0.0
    return BESIDE_PROCESSES if cores > 1 and load < cores - 1 else 0


def _beside(path: Path, workers: int | str) -> int:
    """How many processes read ``path`` beside this one (0: this one reads it)."""
    cores = os.cpu_count() or 1
    if workers == "auto":
        workers = auto_workers(cores)
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 0:
        from ..errors import UsageError

        raise UsageError(f"workers={workers!r} is not a count of processes (0 or more, or 'auto')")
    try:
        return min(workers, cores) if workers and sys.platform.startswith("linux") and \
            path.stat().st_size >= BESIDE_BYTES else 0
    except OSError:
        return 0


def _say_fork(count: int, notes: list[str] | None) -> None:
    """Say that processes are forked, and warn when this process runs other threads (a fork
    copies their locks in whatever state they are)."""
    import threading

    others = threading.active_count() - 1
    said = f"read by {count} forked process{'es' if count > 1 else ''} beside the one storing the runs"
    if others:
        said += (f"; forked from a process running {others} other thread{'s' if others > 1 else ''} "
                 "(workers=0, --workers 0, reads in one process)")
        if notes is None:
            import warnings

            warnings.warn("fluke: " + said, RuntimeWarning, stacklevel=4)
    if notes is not None:
        notes.append(said)


def _read_beside(path: Path, *, file: str, identity: dict[str, Any], count: int) -> Iterator[Run | Prepared]:
    """The runs of ``path`` as :func:`read` yields them, the lines parsed and prepared by
    forked processes (:data:`BESIDE_PROCESSES`), each taking every n-th batch of lines, the
    batches taken back in turn, so in the file's order. Any line a process cannot prepare (a
    line that is not JSON, or not of the plain shape, or holding an error) comes back as it
    is and goes through the same code as in one process here, so it gives the same run or
    the same error.

    A thread here takes each process's batches off its pipe as they come, up to
    :data:`BESIDE_AHEAD` of them, so that the processes go on while this one waits on its
    disk."""
    import multiprocessing
    import queue
    import threading

    from ._registry import _invalid, _unreadable, too_long

    stop = threading.Event()
    workers, pumps, queues, pipes = [], [], [], []

    def pump(here: Any, ahead: queue.Queue) -> None:
        stream = open(here.fileno(), "rb", buffering=0, closefd=False)
        while not stop.is_set():
            try:
                data = _message(stream)
            except (EOFError, OSError):   # the reading process ended (after its last batch, or killed)
                data = None
            while not stop.is_set():
                try:
                    ahead.put(data, timeout=0.1)
                    break
                except queue.Full:
                    continue
            if data is None:
                return

    for index in range(count):
        here, there = multiprocessing.Pipe(duplex=False)
        worker = multiprocessing.get_context("fork").Process(
            target=_prepare_lines, args=(path, file, identity, there), kwargs={"index": index, "of": count},
            name=f"fluke-read-{index}", daemon=True)
        worker.start()
        there.close()
        ahead: queue.Queue = queue.Queue(maxsize=BESIDE_AHEAD)
        pumping = threading.Thread(target=pump, args=(here, ahead), name=f"fluke-read-pipe-{index}", daemon=True)
        pumping.start()
        workers.append(worker)
        pumps.append(pumping)
        queues.append(ahead)
        pipes.append(here)
    from ..record import LinePreparer

    filled: dict[tuple, dict[str, Any]] = {}
    fast = LinePreparer(file, identity)
    turn = 0
    try:
        while (batch := _received(queues[turn % count].get(), path)) is not None:
            turn += 1
            if type(batch) is tuple:   # the file could not be read, or a line is too long
                if batch[0] == "line too long":
                    raise too_long(path, batch[1])
                raise _unreadable(path, OSError(*batch))
            for item in batch:
                if len(item) == 2:
                    number, line = item
                    ready = fast(line, number)
                    if ready is None:
                        try:
                            obj = orjson.loads(line)
                        except orjson.JSONDecodeError as exc:
                            raise _invalid(path, number, exc, "fix or remove that line") from None
                        ready = _one(number, obj, file, identity, filled, True)
                    yield ready
                else:
                    yield Prepared(*item)
    finally:
        stop.set()
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            worker.join()
        for pumping in pumps:
            pumping.join()
        for here in pipes:
            here.close()


def _message(stream: Any) -> bytearray | None:
    """One message a reading process sent (``Connection.send``'s framing: a 4-byte big-endian
    length, or -1 and 8 bytes of it), read straight into one buffer of its size; None at the
    end of the pipe. ``Connection.recv_bytes`` gathers a message of megabytes in pieces and
    copies it twice (a third of the storing process's system time here).

    >>> import io, multiprocessing
    >>> here, there = multiprocessing.Pipe(duplex=False)
    >>> there.send_bytes(b"abc"); there.close()
    >>> stream = open(here.fileno(), "rb", buffering=0, closefd=False)
    >>> _message(stream), _message(stream), _message(io.BytesIO(b"\\xff\\xff\\xff\\xff" + bytes(7) + b"\\x01z"))
    (bytearray(b'abc'), None, bytearray(b'z'))
    """
    header = _exactly(stream, 4, end_ok=True)
    if header is None:
        return None
    size = int.from_bytes(header, "big", signed=True)
    if size == -1:
        size = int.from_bytes(_exactly(stream, 8), "big")
    return _exactly(stream, size)


def _exactly(stream: Any, size: int, *, end_ok: bool = False) -> Any:
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        n = stream.readinto(view[got:])
        if not n:
            if end_ok and got == 0:
                return None
            raise EOFError("the reading process's pipe ended inside a message")
        got += n
    return buffer


#: Batches taken off each pipe ahead of the runs stored (each at most :data:`BESIDE_LINES`
#: lines or about :data:`BESIDE_BATCH_BYTES`; 4 from each of two processes, up to 32 MB of
#: lines in all).
BESIDE_AHEAD = 4


def _received(data: bytes | None, path: Path) -> Any:
    if data is None:   # the reading process died (killed, out of memory) before its last batch
        from ..errors import InputError

        raise InputError(str(path), None, None, "could not be read to the end (the process reading it stopped)",
                         hint="run the ingest again") from None
    import pickle

    return pickle.loads(data)


def _prepare_lines(path: Path, file: str, identity: dict[str, Any], out: Any, *, index: int = 0,
                   of: int = 1) -> None:
    """In a reading process, the ``index``-th of ``of``: the lines of every ``of``-th batch
    of lines of ``path`` (from batch ``index``; a batch ends at :data:`BESIDE_LINES` lines
    or :data:`BESIDE_BATCH_BYTES`, the same for every process), each as the fields of a
    Prepared run, or as ``(number, line)`` when the ingesting process must decide it (and,
    where there is one reading process, every line of one batch in :data:`BESIDE_SHARE`,
    which that one parses itself); blank lines skipped, as one process reading the file
    would. Then None: past the last batch."""
    # Nothing of the other process's but the pipe: not its ledger's files, nor the lock of
    # its ingest, which a kill -9 of that process must release.
    os.closerange(3, out.fileno())
    os.closerange(out.fileno() + 1, 1 << 16)
    from ..record import LinePreparer
    from ._registry import LineTooLong, raw_lines

    filled: dict[tuple, dict[str, Any]] = {}
    fast = LinePreparer(file, identity)
    batch: list[tuple] = []
    turn = lines = size = 0   # the batch the file is at, and its lines and bytes so far
    share = BESIDE_SHARE if of == 1 else 0

    try:
        for number, line in raw_lines(path):
            mine = turn % of == index
            lines += 1
            size += len(line)
            full = lines >= BESIDE_LINES or size >= BESIDE_BATCH_BYTES
            if mine:
                batch.append(_item(number, line, fast, file, identity, filled,
                                   raw=bool(share) and turn % share == share - 1))
                if full:
                    out.send(batch)
                    batch = []
            if full:
                turn += 1
                lines = size = 0
    except OSError as exc:
        out.send(batch)
        out.send((exc.errno, exc.strerror))
        return
    except LineTooLong as exc:
        out.send(batch)
        out.send(("line too long", exc.number))
        return
    if batch:
        out.send(batch)
    out.send(None)


def _item(number: int, line: bytes, fast: Any, file: str, identity: dict[str, Any],
          filled: dict[tuple, dict[str, Any]], raw: bool) -> tuple:
    """A line as a reading process sends it: the fields of a Prepared run, or ``(number,
    line)`` for the ingesting process to decide (``raw``: every line of its share)."""
    if not raw:
        ready = fast(line, number)
        if ready is None:
            try:
                ready = _one(number, orjson.loads(line), file, identity, filled, True, model=False)
            except Exception:   # for the other process to say what is wrong
                ready = None
        if type(ready) is Prepared:
            return (ready.body, ready.identity, ready.scenario, ready.condition, ready.passed, ready.source,
                    ready.outcome, ready.steps, ready.place, ready.trial, ready.unit,
                    ready.digest or hashlib.sha256(ready.body).digest())
    return (number, line)


def _filled(cache: dict[tuple, dict[str, Any]], given: Any, supplied: dict[str, Any], file: str,
            record: str) -> dict[str, Any]:
    """:func:`with_identity`, once per distinct identity of the file (a copy each time)."""
    try:
        key = tuple(given.items()) if isinstance(given, dict) else None
        done = cache.get(key) if key is not None else None
    except TypeError:   # a dict component: not hashable
        key = done = None
    if done is None:
        done = with_identity(given, supplied, file=file, record=record)
        if key is not None and len(cache) < 4096:
            cache[key] = done
    return dict(done)


READER = Reader(
    "fluke", "fluke's own JSONL (one Run per line)",
    sniff=sniff, read=read, takes="lines", prepared=True, workers=True, notes=True,
)
