"""The run record: one execution of one scenario by one agent.

>>> from fluke.record import Run, Identity, Outcome, UserMessage, ToolCall
>>> run = Run(scenario="refund/7", trial=0, identity=Identity(model="m"),
...           events=[UserMessage(text="refund order W1"),
...                   ToolCall(tool="refund", args={"order": "W1"}, ok=True)],
...           outcome=Outcome(passed=True, reward=1.0, label="complete"))
>>> run.sampling_unit, run.outcome.label, len(run.hash)
('refund/7', 'complete', 64)
>>> run.hash == Run.model_validate_json(run.model_dump_json()).hash
True
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer

from ..errors import FormatVersionError, InputTypeError
from ._cached import CachedModel
from ._canonical import CANONICAL
from ._events import Event, ToolCall
from ._identity import Identity
from ._storable import check_name

#: The version of the stored run format this fluke writes. Readers refuse newer ones.
FORMAT_VERSION = 1

Label = Literal["complete", "should_ask", "fail", "error"]
ConditionValue = str | int | float | bool | None
#: Integers a ledger stores exactly (PostgreSQL sorts trials as BIGINT).
Int64 = Annotated[int, Field(ge=-(2 ** 63), le=2 ** 63 - 1)]
#: Fields of :class:`Run` outside its stored body and content hash: where it was read from.
OUTSIDE_CONTENT = frozenset({"source"})
#: Fields left out of the body (absent, not null) when None, so runs from before the field
#: existed hash as they always did.
ABSENT_WHEN_NONE = frozenset({"gold"})


class Outcome(BaseModel):
    """How the run ended. ``died_at`` is the event index where a failed run failed."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    passed: bool | None = None
    reward: float | None = None
    label: Label | None = None
    died_at: int | None = Field(default=None, ge=0, le=2 ** 63 - 1)


class Source(BaseModel):
    """Where the run came from, so every number can be traced to its input."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    adapter: str
    file: str | None = None
    position: Int64 | str | None = None


class GoldCall(BaseModel):
    """One call the benchmark expected of the agent (τ-bench's ``actions``, τ²-bench's
    ``evaluation_criteria.actions``), kept on the run so ``reference: gold`` can grade it.

    ``compare`` names the only arguments to compare (τ²-bench's ``compare_args``); None
    compares them all.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    args: Any = Field(default_factory=dict)
    requestor: Literal["agent", "user"] = "agent"
    compare: list[str] | None = None


class Run(CachedModel):
    """One execution of one scenario. Immutable and content-addressed (see :attr:`hash`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    format_version: int = FORMAT_VERSION
    scenario: str = Field(min_length=1)
    trial: Int64 = 0
    unit: str | None = None
    condition: dict[str, ConditionValue] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    identity: Identity = Field(default_factory=Identity)
    events: list[Event] = Field(default_factory=list)
    outcome: Outcome = Field(default_factory=Outcome)
    cost: dict[str, float] = Field(default_factory=dict)
    latency: float | None = None
    seed: Int64 | str | None = None
    tape: str | None = None
    error: str | None = None
    source: Source | None = None
    #: The benchmark's expected calls, where the reader keeps them. Left out of the stored
    #: body and the content hash when None, so runs without gold hash as they always did.
    gold: list[GoldCall] | None = None

    @model_serializer(mode="wrap")
    def _without_empty_gold(self, handler: Any) -> Any:
        body = handler(self)
        if isinstance(body, dict):
            for name in ABSENT_WHEN_NONE:
                if body.get(name, 0) is None:
                    del body[name]
        return body

    @field_validator("format_version")
    @classmethod
    def _not_newer(cls, value: int) -> int:
        if value > FORMAT_VERSION:
            # A ValueError, so pydantic reports it with the field's location like any other.
            raise FormatVersionError(None, None, "format_version", f"was written by a newer fluke (run format "
                                     f"{value}; this fluke reads {FORMAT_VERSION})", hint=FormatVersionError.HINT)
        return value

    @field_validator("scenario", "unit", "tape")
    @classmethod
    def _name_storable(cls, value: str | None) -> str | None:
        return check_name(value)

    @field_validator("tags")
    @classmethod
    def _tags_storable(cls, value: list[str]) -> list[str]:
        for tag in value:
            check_name(tag)
        return value

    @field_validator("condition")
    @classmethod
    def _condition_storable(cls, value: dict[str, ConditionValue]) -> dict[str, ConditionValue]:
        for key, item in value.items():
            check_name(key)
            if isinstance(item, str):
                check_name(item)
            elif isinstance(item, int) and not isinstance(item, bool) and not -(2 ** 63) <= item < 2 ** 63:
                raise ValueError(f"condition {key}={item} is outside 64 bits; write it as a string")
        return value

    @cached_property
    def hash(self) -> str:
        """Content hash over everything but ``source``: the same run from two files is one run.

        It is the SHA-256 of :func:`content_json`.
        """
        return hashlib.sha256(content_json(self)).hexdigest()

    @property
    def version(self) -> str:
        """The version hash of the identity."""
        return self.identity.version

    @property
    def sampling_unit(self) -> str:
        """The independent sampling unit; defaults to the scenario."""
        return self.unit if self.unit is not None else self.scenario

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool-call events, in order."""
        return [e for e in self.events if isinstance(e, ToolCall)]

    def condition_key(self) -> str:
        """A stable string for the condition dict ('' when there is none)."""
        return condition_key(self.condition)


def condition_key(condition: dict[str, Any]) -> str:
    """``key=value`` pairs of a condition, sorted by key and joined by commas ('' for none).

    >>> condition_key({"temp": 0.5, "lang": "fr"}), condition_key({})
    ('lang=fr,temp=0.5', '')
    """
    return ",".join(f"{k}={condition[k]}" for k in sorted(condition)) if condition else ""


#: Identities as canonical JSON bytes (immutable: no caller can change what the next run is hashed
#: with), by version and date (runs of one version recur).
_IDENTITY_JSON: dict[tuple[str, str | None], bytes] = {}


def json_default(value: Any) -> Any:
    """orjson's hook for the models inside a run (its events): their ``model_dump(mode="json")``."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise InputTypeError(None, None, None, f"a run cannot hold a value of type {type(value).__name__}")


def content_fields(run: Run) -> dict[str, Any]:
    """The run's fields, ``source`` left out, as orjson (with :func:`json_default`) should
    serialise them: what its content hash is taken over. A new dict on every call (the outcome
    too); the identity is an ``orjson.Fragment`` of bytes, shared and immutable, and the
    events and condition are the run's own.

    Serialising this through orjson is several times faster than pydantic's dump and gives
    the same JSON (a test holds it to that on every real run): the identity is converted
    once per version and date, the outcome's fields are JSON values already, and only the
    events go through pydantic.
    """
    values = dict(run.__dict__)
    for name in OUTSIDE_CONTENT:
        del values[name]
    values.pop("hash", None)   # a cached Run.hash, not a field
    for name in ABSENT_WHEN_NONE:   # absent, not null: a run without it hashes as before the field
        if values[name] is None:
            del values[name]
    identity = values["identity"]
    key = (identity.version, identity.date)
    shared = _IDENTITY_JSON.get(key)
    if shared is None:
        if len(_IDENTITY_JSON) >= 4096:
            _IDENTITY_JSON.clear()
        shared = _IDENTITY_JSON[key] = orjson.dumps(identity.model_dump(mode="json"), option=CANONICAL)
    values["identity"] = orjson.Fragment(shared)
    values["outcome"] = dict(values["outcome"].__dict__)
    return values


def content_json(run: Run) -> bytes:
    """The canonical JSON of the run without its ``source``; :attr:`Run.hash` is its SHA-256.

    >>> from fluke.record import canonical_json
    >>> run = Run(scenario="s", trial=2, outcome=Outcome(passed=True))
    >>> content_json(run) == canonical_json(run.model_dump(mode="json", exclude={"source"}))
    True
    """
    return orjson.dumps(content_fields(run), default=json_default, option=CANONICAL)


def run_schema() -> dict[str, Any]:
    """The JSON Schema of the run record (what ``fluke schema`` prints).

    >>> run_schema()["title"]
    'Run'
    """
    return Run.model_json_schema()
