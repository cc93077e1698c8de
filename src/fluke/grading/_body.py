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
from typing import Any

import orjson

from ..record import FORMAT_VERSION, Identity
from ._grade import RunGrade, grade_run
from ._spec import Spec

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

    __slots__ = ("hash", "scenario", "trial", "version", "events", "outcome", "error", "gold")


def _version(identity: dict) -> str:
    key = orjson.dumps(identity, option=orjson.OPT_SORT_KEYS)
    version = _VERSIONS.get(key)
    if version is None:
        if len(_VERSIONS) >= 4096:
            _VERSIONS.clear()
        version = _VERSIONS[key] = Identity.model_validate(identity).version
    return version


def body_run(body: str | bytes) -> _BodyRun | None:
    """The run a stored body holds, as plain objects; None when it needs the long way."""
    raw = body.encode() if isinstance(body, str) else body
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


class ChunkGrader:
    """Grades a chunk of stored bodies against one spec: the task a grading worker runs.

    Picklable (it carries the spec's body, not the compiled spec), so it can be sent to a
    worker process or a Ray task; each worker compiles the spec once. Returns each grade as
    canonical JSON (what the ledger stores, and compact to send back), or, when a body is
    refused, ``("fault", error class name, message)`` so the caller raises the same one line.

    >>> from fluke.record import Run, Outcome, content_json
    >>> grader = ChunkGrader({"tools": ["lookup"], "required": ["lookup"]})
    >>> grades = grader([content_json(Run(scenario="s", outcome=Outcome(passed=True)))])
    >>> orjson.loads(grades[0])["violations"][0]["check"]
    'required'
    """

    _compiled: dict[str, Spec] = {}   # per worker process: spec digest -> compiled spec

    def __init__(self, spec_body: dict[str, Any], ledger: str = "the ledger") -> None:
        self.spec_body = spec_body
        self.ledger = ledger

    def _spec(self) -> Spec:
        from ..record import digest
        from ._spec import load_spec

        key = digest(self.spec_body)
        spec = self._compiled.get(key)
        if spec is None:
            spec = self._compiled[key] = load_spec(self.spec_body)
        return spec

    def __call__(self, bodies: list) -> list[bytes] | tuple[str, str, str]:
        from ..errors import FlukeError
        from ..record import canonical_json

        try:
            spec = self._spec()
            return [canonical_json(grade_body(b, spec, ledger=self.ledger).to_dict()) for b in bodies]
        except FlukeError as exc:
            return ("fault", type(exc).__name__, str(exc))
