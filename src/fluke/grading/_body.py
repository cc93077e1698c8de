"""Grade a stored run body (its canonical JSON) without building a pydantic ``Run``.

Grading a ledger is dominated not by the checks but by rebuilding each run: validating a
20-event body into pydantic models takes several times as long as grading it. A stored body
was validated when it was ingested and holds every field (the canonical JSON of the whole
model), so here it is decoded once and its dicts are read in place: each event is an object
whose ``__dict__`` *is* the event's dict, which is all :func:`grade_run` reads (attributes).

A body this reading cannot take (another format version, a field missing or of the wrong
shape: a ledger edited outside fluke) goes the long way through
:func:`fluke.ledger.row_run`, which grades it the same way or refuses it with the ledger's
own one-line error. Known limit: a body edited outside fluke that keeps the shape but breaks
a rule pydantic checks (a negative ``died_at``, say) is graded as it reads, not refused.

>>> from fluke.record import Run, Outcome, ToolCall, content_json
>>> from fluke.grading import load_spec, grade_run
>>> spec = load_spec({"tools": ["lookup", "refund"], "forbidden": ["refund"]})
>>> run = Run(scenario="s", events=[ToolCall(tool="refund", ok=True)], outcome=Outcome(passed=True))
>>> grade_body(content_json(run), spec) == grade_run(run, spec)
True
"""

from __future__ import annotations

import hashlib
import heapq
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Union

import msgspec
import orjson

from ..record import FORMAT_VERSION, Identity
from ._grade import RunGrade, grade_run
from ._spec import Spec
from ._tally import GradeTally
from ._text import secret_checks

_sha256 = hashlib.sha256
_VERSIONS: dict[bytes, str] = {}     # identity JSON -> version hash (runs of one version recur)


class _Fields:
    """An object whose attributes are a dict's keys (the dict is its ``__dict__``, not a copy)."""


def _view(d: dict) -> _Fields:
    obj = _Fields.__new__(_Fields)
    obj.__dict__ = d
    return obj


class _BodyRun:
    """What :func:`grade_run` reads of a run, taken from a decoded body."""

    __slots__ = ("hash", "scenario", "trial", "version", "events", "outcome", "error", "gold", "anchors")


def _version(identity: dict | bytes) -> str:
    """The version hash of an identity (a dict, or its canonical JSON), remembered."""
    key = identity if isinstance(identity, bytes) else orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)
    version = _VERSIONS.get(key)
    if version is None:
        if len(_VERSIONS) >= 4096:
            _VERSIONS.clear()
        value = orjson.loads(key) if isinstance(identity, bytes) else identity
        version = _VERSIONS[key] = Identity.model_validate(value).version
    return version


# What grade_run reads of a stored body, decoded by msgspec in one pass. A tool call's result
# stays its JSON text (msgspec.Raw), which is what provenance and the secret check read of it
# (grading/_grade.py's _text), so it is neither parsed into objects nor written back to JSON.
# Every field named here is one the canonical body always holds; a body without one, or of
# another shape, is read the slower way below (_body_run_dicts).
class _UserEvent(msgspec.Struct, tag_field="kind", tag="user"):
    text: str
    kind: ClassVar[str] = "user"


class _AgentEvent(msgspec.Struct, tag_field="kind", tag="agent"):
    text: str
    kind: ClassVar[str] = "agent"


class _ToolEvent(msgspec.Struct, tag_field="kind", tag="tool"):
    tool: str
    args: Any
    ok: Any
    requestor: str
    result: msgspec.Raw
    error: Any
    t_start: Any
    kind: ClassVar[str] = "tool"


class _Body(msgspec.Struct):
    format_version: int
    scenario: str
    trial: Any
    error: Any
    identity: msgspec.Raw
    events: list[Union[_UserEvent, _AgentEvent, _ToolEvent]]
    outcome: dict
    gold: Any = None


_DECODE = msgspec.json.Decoder(_Body).decode


def body_run(body: str | bytes) -> _BodyRun | None:
    """The run a stored body holds, as plain objects; None when it needs the long way."""
    raw = body.encode() if isinstance(body, str) else body
    try:
        d = _DECODE(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _body_run_dicts(body, raw)
    if d.format_version != FORMAT_VERSION:
        return None
    run = _BodyRun()
    run.hash = _sha256(raw).hexdigest()
    run.scenario, run.trial, run.error, run.events = d.scenario, d.trial, d.error, d.events
    try:
        run.version = _version(bytes(d.identity))
        run.outcome = _view(d.outcome)
        run.gold = None if d.gold is None else [_view(g) for g in d.gold]
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None
    run.anchors = _anchors(body, raw)
    return run


def _anchors(body: str | bytes, raw: bytes) -> tuple | None:
    """The secret checks whose anchors occur anywhere in the body: an anchor in any of the
    run's strings is in its JSON as it is (no escape), unless a writer other than fluke's
    spelled characters as \\u escapes; then None, and grade_run tests each part itself."""
    text = body if isinstance(body, str) else raw.decode()
    return None if "\\u" in text else secret_checks(text)


def _body_run_dicts(body: str | bytes, raw: bytes) -> _BodyRun | None:
    """:func:`body_run` through ``orjson.loads``, each event's dict read in place: for a body
    the structs above do not take (a field missing or of another type)."""
    try:
        d = orjson.loads(raw)
        if d["format_version"] != FORMAT_VERSION:
            return None
        run = _BodyRun()
        run.hash = _sha256(raw).hexdigest()
        run.scenario, run.trial, run.error = d["scenario"], d["trial"], d["error"]
        run.version = _version(d["identity"])
        run.events = [_view(e) for e in d["events"]]
        run.outcome = _view(d["outcome"])
        gold = d.get("gold")
        run.gold = None if gold is None else [_view(g) for g in gold]
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None
    run.anchors = _anchors(body, raw)
    return run


def grade_body(body: str | bytes, spec: Spec, *, ledger: str = "the ledger") -> RunGrade:
    """Grade a stored body against ``spec``: the grade :func:`grade_run` gives its Run."""
    run = body_run(body)
    if run is not None:
        try:
            return grade_run(run, spec)  # type: ignore[arg-type]
        except (AttributeError, KeyError, TypeError):
            pass   # a field of the wrong shape: the long way says which
    from ..ledger import row_run

    return grade_run(row_run(body, None, ledger=ledger), spec)


def row_order(grade: RunGrade) -> tuple[bool, bool, bool]:
    """Where a run goes in a table of runs, worst first: lucky runs (output ok, path not ok),
    then broken paths, hard violations before others, clean paths last.

    >>> from fluke.grading import make_grade, Violation
    >>> lucky = make_grade("a", "s", [Violation("forbidden", "hard", 1, "x")], True)
    >>> sorted([make_grade("b", "s", [], True), lucky], key=row_order)[0] is lucky
    True
    """
    return (grade.output_ok is not True or grade.path_ok, grade.path_ok, not grade.hard)


@dataclass
class ChunkGrades:
    """What grading one chunk of bodies gives back, in a size that does not grow with the
    runs unless asked: the :class:`GradeTally`, the ``keep`` worst grades of each version
    (``(sort key, version, grade JSON)``, the key ending in the chunk's number and the run's place in
    it, so chunks merge into the order one process gives), every grade's JSON in order when
    ``lines`` was asked, the grades made here (not read back) with their run hashes when
    storing, and a refusal (``("fault", error class name, message)``) instead when a body
    was refused."""

    number: int
    tally: GradeTally
    worst: list[tuple[tuple, Any, bytes]]
    lines: list[bytes] | None
    new: list[tuple[str, bytes]]
    graded: int
    reused: int
    fault: tuple[str, str, str] | None = None


class ChunkGrader:
    """Grades a chunk of stored bodies against one spec: the task a grading worker runs.

    Picklable (it carries the spec's body, not the compiled spec), so it can be sent to a
    worker process or a Ray task; each worker compiles the spec once. ``stored`` (run hash ->
    grade JSON) holds grades an earlier grade stored: those runs are read back, not graded.

    >>> from fluke.record import Run, Outcome, content_json
    >>> grader = ChunkGrader({"tools": ["lookup"], "required": ["lookup"]}, lines=True)
    >>> got = grader([content_json(Run(scenario="s", outcome=Outcome(passed=True)))])
    >>> got.graded, got.tally.gate().passed, orjson.loads(got.lines[0])["violations"][0]["check"]
    (1, False, 'required')
    """

    _compiled: dict[str, Spec] = {}   # per worker process: spec digest -> compiled spec

    def __init__(self, spec_body: dict[str, Any], ledger: str = "the ledger", *, keep: int | None = 25,
                 lines: bool = False, store: bool = False) -> None:
        self.spec_body = spec_body
        self.ledger = ledger
        self.keep, self.lines, self.store = keep, lines, store

    def _spec(self) -> Spec:
        from ..record import digest
        from ._spec import load_spec

        key = digest(self.spec_body)
        spec = self._compiled.get(key)
        if spec is None:
            spec = self._compiled[key] = load_spec(self.spec_body)
        return spec

    def __call__(self, bodies: list, *, number: int = 0, stored: dict[str, str] | None = None) -> ChunkGrades:
        from ..errors import FlukeError

        spec = self._spec()

        def graded():
            for body in bodies:
                found = stored.get(_sha256(body.encode() if isinstance(body, str) else body).hexdigest()) \
                    if stored else None
                if found is not None:
                    yield _stored_grade(found, self.ledger), found.encode()
                else:
                    yield grade_body(body, spec, ledger=self.ledger), None

        try:
            return self.collect(graded(), number=number)
        except FlukeError as exc:
            return ChunkGrades(number, GradeTally(), [], None, [], 0, 0, ("fault", type(exc).__name__, str(exc)))

    def collect(self, grades: Iterable[tuple[RunGrade, bytes | None]], *, number: int = 0) -> ChunkGrades:
        """The :class:`ChunkGrades` of ``(grade, its stored JSON or None when made here)`` pairs."""
        from ..record import canonical_json

        tally = GradeTally()
        lines: list[bytes] | None = [] if self.lines else None
        new: list[tuple[str, bytes]] = []
        rows: dict[Any, list] = {}    # version -> [(key, grade, its JSON or None)]
        reused = made = 0
        for i, (g, raw) in enumerate(grades):
            if raw is not None:
                reused += 1
            else:
                made += 1
                if self.lines or self.store:
                    raw = canonical_json(g.to_dict())
                    if self.store:
                        new.append((g.run_hash, raw))
            tally.add(g)
            if lines is not None:
                lines.append(raw)
            rows.setdefault(g.version, []).append(((*row_order(g), number, i), g, raw))
        worst = []
        for version, kept in rows.items():
            if self.keep is not None and len(kept) > self.keep:
                kept = heapq.nsmallest(self.keep, kept, key=lambda row: row[0])
            worst += [(key, version, canonical_json(g.to_dict()) if raw is None else raw) for key, g, raw in kept]
        return ChunkGrades(number, tally, worst, lines, new, made, reused)


def _stored_grade(text: str, ledger: str) -> RunGrade:
    from ..errors import LedgerError

    try:
        return RunGrade.from_dict(orjson.loads(text))
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise LedgerError(f"{ledger}: a stored grade is not readable ({exc}); it was changed outside fluke. "
                          "Grade again with --no-store, or restore the ledger from a backup") from None
