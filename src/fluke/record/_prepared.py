"""A run ready to store, its body made without building the model: the hot path of an ingest.

:func:`prepare` takes the fields of a run as JSON gives them (one parsed line of fluke
JSONL) and returns a :class:`Prepared` run when they are of the plain shape the model keeps
unchanged, else None, and the caller validates those fields with :class:`Run` itself, which
either coerces them or says what is wrong. It checks nothing by hand: the fields go through
the same structs as a raw line (:class:`fluke.record.LinePreparer`, made from the run model),
so a prepared body is byte for byte the body :func:`content_json` makes of the validated run
(``tests/ingest/test_prepared.py`` holds the two equal on real, generated and mutated runs).

>>> from fluke.record import content_json
>>> fields = {"scenario": "s", "trial": 2, "outcome": {"passed": True},
...           "events": [{"kind": "user", "text": "hi"}]}
>>> prepared = prepare(fields)
>>> run = Run.model_validate(fields)
>>> prepared.body == content_json(run), prepared.passed, prepared.identity == run.identity
(True, 1, True)
>>> prepare({"scenario": "s", "trial": "2"}) is None   # a string for an int: the model's call
True
"""

from __future__ import annotations

from typing import Any

import orjson

from ._identity import Identity
from ._run import Run


class Prepared:
    """A run ready to store: its ``body`` (the canonical JSON its hash is taken over), its
    ``identity``, ``scenario``, ``condition`` key, ``passed`` (1, 0 or None for unknown) and
    ``source`` (JSON or None), as a ledger stores them; its ``outcome`` as JSON and how many
    ``steps`` (events) it took, its ``place`` (:func:`fluke.record.place_of`), its ``trial`` and
    declared ``unit`` (None: the scenario), which feed the ledger's trial and unit tallies, and the
    SHA-256 ``digest`` of the body where it was taken already (None: the ledger takes it).
    :meth:`run` builds the :class:`Run`.
    """

    __slots__ = ("body", "identity", "scenario", "condition", "passed", "source", "outcome", "steps", "place",
                 "trial", "unit", "digest")

    def __init__(self, body: bytes, identity: Identity, scenario: str, condition: str, passed: int | None,
                 source: str | None, outcome: dict[str, Any], steps: int, place: tuple | None,
                 trial: int, unit: str | None, digest: bytes | None = None) -> None:
        self.body, self.identity, self.scenario = body, identity, scenario
        self.condition, self.passed, self.source = condition, passed, source
        self.outcome, self.steps, self.place = outcome, steps, place
        self.trial, self.unit, self.digest = trial, unit, digest

    def run(self) -> Run:
        """The run itself, validated from the body (and source) by the model."""
        fields = orjson.loads(self.body)
        if self.source is not None:
            fields["source"] = orjson.loads(self.source)
        return Run.model_validate(fields)


def prepare(fields: Any) -> Prepared | None:
    """``fields`` as a :class:`Prepared` run, or None when the model must decide them."""
    global _PREPARER
    if _PREPARER is None:
        from ._line import LinePreparer   # brings msgspec: only an ingest needs it

        _PREPARER = LinePreparer(None)
    try:
        line = orjson.dumps(fields)
    except (TypeError, orjson.JSONEncodeError):
        return None
    return _PREPARER(line, 0)


_PREPARER: Any = None
