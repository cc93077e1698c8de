"""How a run is laid out in the ``runs`` table, and back.

A row is ``(key, tkey, vid, scenario, source, body)`` plus the ingest it arrived in (one
:class:`RunRow` carries it, and what the tallies need, from ingest to the writer):

- ``body`` is the run's content exactly as its hash is taken over: the canonical JSON of
  every field but ``source`` (:func:`fluke.record.content_json`). So a stored run can be
  checked against its hash, and the hash needs no column of its own.
- ``key`` is the first 64 bits of that hash as a signed integer, under a unique index: the
  content address. Rows are appended in ingest order and the index is narrow, so inserting
  into a large ledger stays cheap. Two different runs sharing a key would be caught (their
  bodies differ) and refused; at 64 bits that takes billions of runs to become likely.
- ``t`` is the trial key (:func:`trial_key`), unique too: one run per version × scenario ×
  condition × trial. A run of a trial already stored, even one whose content differs in what
  varies by accident (latency, timestamps, cost), is skipped and reported, the first kept.
- ``vid`` is the first 60 bits of the version hash; ``source`` (where the run was read
  from, outside the hash) is JSON or NULL.

Every statistic reads trials and passes from the ``counts`` table (kept per version,
scenario and condition in the same transaction as the runs), never from the rows, and where
runs die from the ``steps`` table beside it: each run's *place* (:func:`fluke.record.place_of`) counted per
version, scenario, condition, step, event and cause.

>>> from fluke.record import Run, Outcome
>>> run = Run(scenario="s", trial=1, condition={"t": 0.5}, outcome=Outcome(passed=True))
>>> rows = Rows()
>>> rows.add(run)
>>> row = rows[0]
>>> row.key == hash_key(run.hash), row.condition, row.passed, row.place, row.trial
(True, 't=0.5', 1, ('censored', 0, ''), 1)
>>> stored = row_run(row.body.decode(), row.source)
>>> stored == run, stored.hash == run.hash
(True, True)
"""

from __future__ import annotations

import hashlib
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from ..errors import FormatVersionError, InputError, LedgerError
from ..record import CANONICAL, place_of
from ..record._storable import MAX_RUN

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ..record import Identity, Prepared, Run

_sha256 = hashlib.sha256
_VIDS: dict[str, int] = {}


def _run_model() -> None:
    """Bind the run model's names in this module, once, where a run is first built or stored.

    A verb that reads only the ledger's tables (``fluke summary``) imports this module but never
    builds the pydantic run model; the ingest's hot path then finds the names as plain globals.
    """
    global FORMAT_VERSION, Prepared, Run, ValidationError, condition_key, content_fields, json_default
    if "Run" in globals():
        return
    from pydantic import ValidationError
    from ..record import FORMAT_VERSION, Prepared, Run, condition_key, content_fields, json_default


def version_id(version: str) -> int:
    """The integer key of a version hash: its first 60 bits (fits a signed BIGINT).

    >>> version_id("f" * 64) == 2 ** 60 - 1
    True
    """
    return int(version[:15], 16)


def hash_key(run_hash: str) -> int:
    """The row key of a content hash: its first 64 bits as a signed integer.

    >>> hash_key("8" + "0" * 63) == -2 ** 63, hash_key("0" * 15 + "1" + "f" * 48)
    (True, 1)
    """
    return int.from_bytes(bytes.fromhex(run_hash[:16]), "big", signed=True)


def body_hash(body: str | bytes) -> str:
    """The content hash of a stored body (it is the hashed bytes themselves)."""
    return _sha256(body.encode() if isinstance(body, str) else body).hexdigest()


def trial_key(vid: int, scenario: str, condition: str, trial: int) -> int:
    """The row's trial key: the first 64 bits (signed) of the SHA-256 of its version, scenario,
    condition and trial, under the ``runs`` table's second unique index. A ledger keeps one run
    per trial: a second run of it (the same trial recorded again, differing only in what varies
    by accident: latency, timestamps, cost) is skipped and reported, the first kept.

    >>> trial_key(1, "s", "", 0) == trial_key(1, "s", "", 0) != trial_key(1, "s", "", 1)
    True
    """
    raw = _sha256(f"{vid}\x00{scenario}\x00{condition}\x00{trial}".encode()).digest()
    return int.from_bytes(raw[:8], "big", signed=True)


class RunRow(NamedTuple):
    """One run as the ledger stores and tallies it: the one shape a run has from ingest to the
    writer (:class:`fluke.ledger._writer.RunWriter`) and the tallies.

    ``key`` (content) and ``tkey`` (trial, :func:`trial_key`) are the row's two unique keys;
    ``vid``, ``scenario``, ``source`` and ``body`` (UTF-8 JSON) are stored; ``condition``,
    ``passed`` (1, 0, None for unknown) and ``place`` (:func:`fluke.record.place_of`) feed
    ``counts`` and ``steps``; ``trial``, ``unit`` (the sampling unit) and ``reward`` the trial
    and unit tallies (:mod:`fluke.ledger._tallies`).
    """

    key: int
    tkey: int
    vid: int
    scenario: str
    condition: str
    passed: int | None
    source: str | None
    body: bytes | str
    place: tuple | None
    trial: int
    unit: str
    reward: float | None


#: The columns of ``runs`` an ingest writes from a row (beside its ingest id), in this order.
STORED = ("k", "t", "vid", "scenario", "source", "body")
stored_values = itemgetter(*(RunRow._fields.index(n) for n in ("key", "tkey", "vid", "scenario", "source", "body")))


class Rows(list):
    """A batch of :class:`RunRow`, built once per run on the hot path; ``identities`` are the
    versions first met in this batch, ``known`` (shared by the batches of one ingest) the
    versions met before, ``size`` the bytes of the bodies so far (what a batch is bounded by).
    Building a row serialises the run's content once, hashes it, and shares the hash with
    :attr:`Run.hash`.
    """

    __slots__ = ("identities", "known", "size")

    def __init__(self, known: set[str] | None = None) -> None:
        _run_model()
        super().__init__()
        self.identities: list[Identity] = []
        self.known = set() if known is None else known
        self.size = 0

    def add(self, run: Run | Prepared) -> None:
        """Append ``run``'s row; a run that cannot be stored as JSON is an InputError naming it.

        A :class:`fluke.record.Prepared` run brings its body made (a file's plain runs).
        """
        if type(run) is Prepared:
            if len(run.body) > MAX_RUN:
                raise too_big(run, len(run.body))
            self._append(run.body, run.identity, run.scenario, run.condition, run.passed, run.source, run.place,
                         run.trial, run.scenario if run.unit is None else run.unit, run.outcome["reward"],
                         run.digest)
            return
        try:
            values = content_fields(run)
            body = orjson.dumps(values, default=json_default, option=CANONICAL)
        except (orjson.JSONEncodeError, RecursionError) as exc:
            raise unstorable(run, exc) from None
        if len(body) > MAX_RUN:
            raise too_big(run, len(body))
        condition = values["condition"]
        outcome = values["outcome"]
        passed = outcome["passed"]
        raw = self._append(body, run.identity, values["scenario"], condition_key(condition) if condition else "",
                           None if passed is None else 1 if passed else 0,
                           None if run.source is None else run.source.model_dump_json(),
                           place_of(passed, outcome["died_at"], run.events), values["trial"],
                           values["scenario"] if values["unit"] is None else values["unit"], outcome["reward"])
        run.__dict__.setdefault("hash", raw.hex())

    def _append(self, body: bytes, identity: Identity, scenario: str, condition: str, passed: int | None,
                source: str | None, place: tuple | None, trial: int, unit: str, reward: float | None,
                raw: bytes | None = None) -> bytes:
        """Append one row; return the SHA-256 digest of its body (``raw``, where it was taken)."""
        if raw is None:
            raw = _sha256(body).digest()
        version = identity.version
        vid = _VIDS.get(version)
        if vid is None:
            vid = _VIDS[version] = version_id(version)
        if version not in self.known:
            self.known.add(version)
            self.identities.append(identity)
        traw = _sha256(f"{vid}\x00{scenario}\x00{condition}\x00{trial}".encode()).digest()
        self.append(RunRow(int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(traw[:8], "big", signed=True),
                           vid, scenario, condition, passed, source, body, place, trial, unit, reward))
        self.size += len(body)
        return raw


def too_big(run: Run | Prepared, size: int) -> InputError:
    """The error for a run larger than :data:`fluke.record._storable.MAX_RUN`, naming the limit.

    >>> from fluke.record import Run
    >>> print(too_big(Run(scenario="s"), 70 * 2 ** 20))  # doctest: +ELLIPSIS
    run of scenario 's': is 70 MiB as stored JSON; a ledger stores a run of at most 64 MiB (cut its ...
    """
    _run_model()
    if type(run) is Prepared:
        source = orjson.loads(run.source) if run.source else {}
        file, position = source.get("file"), source.get("position")
    else:
        file, position = (run.source.file, run.source.position) if run.source else (None, None)
    return InputError(file, f"record {position}" if position is not None else f"run of scenario {run.scenario!r}"[:80],
                      None, f"is {_size(size)} as stored JSON; a ledger stores a run of at most {_size(MAX_RUN)}",
                      hint="cut its largest tool results or messages, or keep them outside the run and store a "
                      "reference")


def _size(n: int) -> str:
    return f"{n / 2 ** 20:.0f} MiB" if n >= 2 ** 20 else f"{n:,} bytes"


def unstorable(run: Run, exc: Exception) -> InputError:
    """The error for a run built in code (not read from a file) that JSON cannot hold.

    >>> from fluke.record import Identity, Run
    >>> run = Run.model_construct(scenario="s", events=[], identity=Identity(), condition={}, tags=[],
    ...                           outcome=None, cost={}, seed=2 ** 70, source=None)
    >>> unstorable(run, TypeError("Integer exceeds 64-bit range")).field
    'seed'
    """
    _run_model()
    source = run.source
    field = None
    for name in ("identity", "condition", "events", "cost", "seed"):
        try:
            orjson.dumps(getattr(run, name), default=json_default, option=CANONICAL)
        except (orjson.JSONEncodeError, RecursionError):
            field = name
            break
    return InputError(source.file if source else None,
                      f"record {source.position}" if source and source.position is not None else
                      f"run of scenario {run.scenario!r}"[:80], field,
                      f"cannot be stored as JSON ({exc})", hint="nest it less deeply or store it as a string")


def row_run(body: str | bytes, source: str | None = None, *, ledger: str = "the ledger") -> Run:
    """Rebuild a Run from its stored body and source; its hash is the body's own.

    A body that no longer reads as a run (edited outside fluke, or written by a newer fluke)
    is a :class:`LedgerError` (a :class:`FormatVersionError` for a newer format) naming the
    ledger, the run and the field.
    """
    _run_model()
    fields = _parse(body, ledger, "body")
    if source is not None:
        fields["source"] = _parse(source, ledger, "source", body)
    try:
        run = Run.model_validate(fields)
    except ValidationError as exc:
        raise _invalid_run(exc, fields, body, ledger) from None
    except RecursionError:
        raise _bad_body(ledger, body, None, "is nested too deep to read") from None
    run.__dict__["hash"] = body_hash(body)
    return run


def _parse(text: str | bytes, ledger: str, column: str, body: str | bytes | None = None) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise _bad_body(ledger, body if body is not None else text, column if column != "body" else None,
                        f"is not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise _bad_body(ledger, body if body is not None else text, column if column != "body" else None,
                        f"is a JSON {type(value).__name__}, not a run")
    return value


def _bad_body(ledger: str, body: str | bytes, field: str | None, message: str) -> LedgerError:
    where = f" field {field}" if field else ""
    return LedgerError(f"{ledger}: stored run {body_hash(body)[:12]}:{where} {message}; it was changed outside "
                       "fluke. Restore the ledger from a backup, or delete that row "
                       f"(its key is {hash_key(body_hash(body))})")


def _invalid_run(exc: ValidationError, fields: dict[str, Any], body: str | bytes, ledger: str) -> LedgerError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or None
    version = fields.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        return FormatVersionError(ledger, f"stored run {body_hash(body)[:12]}", "format_version",
                                  f"was written by a newer fluke (run format {version}; this fluke reads "
                                  f"{FORMAT_VERSION})", hint=FormatVersionError.HINT)
    return _bad_body(ledger, body, field, f"no longer validates as a run ({err['msg']})")


def body_holds(body: str | bytes, wanted: str, *, ledger: str = "the ledger") -> bool:
    """Does a stored run's condition hold every ``key=value`` pair of ``wanted``?"""
    _run_model()
    condition = _parse(body, ledger, "body").get("condition")
    if not isinstance(condition, dict):
        raise _bad_body(ledger, body, "condition", "is not an object of key=value pairs")
    return condition_matches(condition_key(condition), wanted)


def condition_matches(key: str, wanted: str) -> bool:
    """Does a condition key (``a=1,b=x``) hold every ``key=value`` pair of ``wanted``?

    >>> condition_matches("lang=fr,temp=0.5", "temp=0.5"), condition_matches("lang=fr", "lang=de")
    (True, False)
    """
    items = set(key.split(",")) if key else set()
    return all(pair.strip() in items for pair in wanted.split(","))
