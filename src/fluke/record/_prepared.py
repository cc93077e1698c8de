"""A run record checked and serialised without building the model: the hot path of an ingest.

:func:`prepare` takes the fields of a run as JSON gives them (one parsed line of fluke
JSONL) and returns a :class:`Prepared` run, its stored body already made, when the fields
are of the plain shape the model keeps unchanged: every value already of its field's exact
type (a float where a float goes, a bool where a bool goes), nothing to coerce, every check
of the model met. It returns None for anything else, and the caller validates those fields
with :class:`Run` itself, which either coerces them or says what is wrong. So the errors are
the model's own, and a prepared body is byte for byte the body :func:`content_json` makes of
the validated run (``tests/ingest/test_prepared.py`` holds the two equal on every real run
and on generated and mutated ones).

Pydantic builds 20 event models per run and dumps them again; the plain case needs neither.

>>> from fluke.record import content_json
>>> fields = {"scenario": "s", "trial": 2, "outcome": {"passed": True},
...           "events": [{"kind": "user", "text": "hi"}]}
>>> prepared = prepare(fields)
>>> run = Run.model_validate(fields)
>>> prepared.body == content_json(run), prepared.passed, prepared.identity == run.identity
(True, 1, True)
>>> prepare({"scenario": "s", "outcome": {"reward": 1}}) is None   # an int for a float: the model's call
True
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from ._canonical import CANONICAL
from ._events import AgentMessage, ToolCall, UserMessage
from ._identity import Identity
from ._place import place_of
from ._run import FORMAT_VERSION, GoldCall, Outcome, Run, Source, condition_key, content_fields
from ._storable import MAX_DEPTH, MAX_NAME, check_json

_NONE = type(None)
_I64 = (-(2 ** 63), 2 ** 63 - 1)
_OPT_STR = (str, _NONE)
_OPT_BOOL = (bool, _NONE)
_OPT_FLOAT = (float, _NONE)
_CONDITION_TYPES = (str, int, float, bool, _NONE)
_LABELS = {"complete", "should_ask", "fail", "error"}
_REQUESTORS = {"agent", "user"}


class _Slow(Exception):
    """These fields are for the model to decide."""


def _defaults(model: Any, **required: Any) -> dict[str, Any]:
    """The JSON of ``model`` built from ``required`` alone, less those: its defaults."""
    dump = model(**required).model_dump(mode="json")
    for name in required:
        del dump[name]
    return dump


_RUN_DEFAULTS = content_fields(Run(scenario="s"))
del _RUN_DEFAULTS["scenario"]
_RUN_KEYS = frozenset(Run.model_fields)
_OUTCOME_DEFAULTS = Outcome().model_dump(mode="json")
_OUTCOME_KEYS = frozenset(Outcome.model_fields)
_USER = (frozenset(UserMessage.model_fields), _defaults(UserMessage, text=""))
_AGENT = (frozenset(AgentMessage.model_fields), _defaults(AgentMessage, text=""))
_TOOL = (frozenset(ToolCall.model_fields), _defaults(ToolCall, tool=""))
_SOURCE_KEYS = frozenset(Source.model_fields)
_GOLD = (frozenset(GoldCall.model_fields), _defaults(GoldCall, tool=""))
#: What :func:`_checked` knows how to check: if the model gains a field, prepare() declines every
#: run (the model decides) until this module learns it.
_KNOWN = (_RUN_KEYS == {"format_version", "scenario", "trial", "unit", "condition", "tags", "identity", "events",
                        "outcome", "cost", "latency", "seed", "tape", "error", "source", "gold"}
          and _OUTCOME_KEYS == {"passed", "reward", "label", "died_at"}
          and _USER[0] == {"kind", "text", "t"} and _AGENT[0] == {"kind", "text", "agent", "t"}
          and _TOOL[0] == {"kind", "tool", "args", "call_id", "ok", "result", "error", "t_start", "t_end", "agent",
                           "requestor"}
          and _SOURCE_KEYS == {"adapter", "file", "position"}
          and _GOLD[0] == {"tool", "args", "requestor", "compare"})

#: Identities by their fields as given, and source JSON prefixes by (adapter, file): one file
#: repeats a few of each.
_IDENTITIES: dict[tuple, tuple[Identity, dict[str, Any]]] = {}
_SOURCES: dict[tuple, str] = {}


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
    if not _KNOWN:
        return None
    try:
        return _checked(fields)
    except Exception:   # _Slow, or a value of a shape not foreseen: the model decides either way
        return None


def _name(value: Any) -> Any:
    if type(value) is not str or "\x00" in value or len(value) > MAX_NAME:   # the model's error says which
        raise _Slow
    return value


def _opt_name(value: Any) -> Any:
    return None if value is None else _name(value)


def _int64(value: Any) -> int:
    if type(value) is not int or not _I64[0] <= value <= _I64[1]:
        raise _Slow
    return value


def _opt_float(value: Any) -> Any:
    if type(value) not in _OPT_FLOAT or (value is not None and not math.isfinite(value)):
        raise _Slow
    return value


def _checked(fields: Any) -> Prepared:
    if type(fields) is not dict or not fields.keys() <= _RUN_KEYS:
        raise _Slow
    values = {**_RUN_DEFAULTS, **fields}
    source = values.pop("source", None)
    gold = values.pop("gold", None)
    if gold is not None:
        values["gold"] = _gold(gold)
    version = values["format_version"]
    if type(version) is not int or version > FORMAT_VERSION:
        raise _Slow
    scenario = _name(values["scenario"])
    if not scenario:
        raise _Slow
    trial = _int64(values["trial"])
    unit = _opt_name(values["unit"])
    _opt_name(values["tape"])
    if type(values["error"]) not in _OPT_STR:
        raise _Slow
    _opt_float(values["latency"])
    seed = values["seed"]
    if seed is not None and type(seed) is not str:
        _int64(seed)
    condition = values["condition"]
    if type(condition) is not dict:
        raise _Slow
    for key, item in condition.items():
        _name(key)
        kind = type(item)
        if kind not in _CONDITION_TYPES:
            raise _Slow
        if kind is str:
            _name(item)
        elif kind is int:
            _int64(item)
        elif kind is float and not math.isfinite(item):
            raise _Slow
    tags = values["tags"]
    if type(tags) is not list:
        raise _Slow
    for tag in tags:
        _name(tag)
    cost = values["cost"]
    if type(cost) is not dict:
        raise _Slow
    for key, item in cost.items():
        if type(key) is not str or type(item) is not float or not math.isfinite(item):
            raise _Slow
    identity, values["identity"] = _identity(values["identity"])
    outcome = values["outcome"]
    if type(outcome) is not dict or not outcome.keys() <= _OUTCOME_KEYS:
        raise _Slow
    outcome = values["outcome"] = {**_OUTCOME_DEFAULTS, **outcome}
    passed = outcome["passed"]
    if type(passed) not in _OPT_BOOL:
        raise _Slow
    _opt_float(outcome["reward"])
    if outcome["label"] is not None and (type(outcome["label"]) is not str or outcome["label"] not in _LABELS):
        raise _Slow
    died = outcome["died_at"]
    if died is not None and (type(died) is not int or not 0 <= died <= _I64[1]):
        raise _Slow
    events = _events(values["events"])
    body = orjson.dumps(values, option=CANONICAL)
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH:
        # Deep enough that a tool's arguments or result might be nested past what a ledger
        # stores: the model's own check decides (a body this shallow cannot be). A value
        # nested that deep holds more brackets than the body has.
        for event in events:
            if event["kind"] == "tool":
                check_json(event["args"])
                check_json(event["result"])
    return Prepared(body, identity, scenario, condition_key(condition) if condition else "",
                    None if passed is None else 1 if passed else 0, _source(source), outcome, len(events),
                    place_of(passed, died, events), trial, unit)


def _identity(given: Any) -> tuple[Identity, dict[str, Any]]:
    """The identity and its JSON, validated by the model once per distinct value."""
    if type(given) is not dict:
        raise _Slow
    try:
        key: tuple | None = tuple(given.items())
        cached = _IDENTITIES.get(key)
    except TypeError:   # a dict component: not hashable, validated each time
        key, cached = None, None
    if cached is None:
        identity = Identity.model_validate(given)
        cached = (identity, identity.model_dump(mode="json"))
        if key is not None:
            if len(_IDENTITIES) >= 4096:
                _IDENTITIES.clear()
            _IDENTITIES[key] = cached
    return cached


def _events(events: Any) -> list[dict[str, Any]]:
    """The events with their defaults filled in (into the dicts given: a parsed line's own)."""
    if type(events) is not list:
        raise _Slow
    shapes = _SHAPES
    for event in events:
        if type(event) is not dict:
            raise _Slow
        shape = shapes.get((event.get("kind"), *event))
        if shape is None:
            shape = _shape(event)
        kind, missing = shape
        for key, value in missing:
            event[key] = {} if key == "args" else value
        if kind == "tool":
            if (type(event["tool"]) is not str or type(event["call_id"]) not in _OPT_STR
                    or type(event["ok"]) not in _OPT_BOOL or type(event["error"]) not in _OPT_STR
                    or type(event["agent"]) not in _OPT_STR or event["requestor"] not in _REQUESTORS
                    or type(event["requestor"]) is not str):
                raise _Slow
            if event["t_start"] is not None or event["t_end"] is not None:
                _opt_float(event["t_start"])
                _opt_float(event["t_end"])
        else:
            if type(event["text"]) is not str:
                raise _Slow
            if event["t"] is not None:
                _opt_float(event["t"])
            if kind == "agent" and type(event["agent"]) not in _OPT_STR:
                raise _Slow
    return events


#: (kind, the defaults to fill) by an event's kind and keys in their order: a file repeats a few.
_SHAPES: dict[tuple, tuple[str, tuple]] = {}
_KINDS = {"user": _USER, "agent": _AGENT, "tool": _TOOL}


def _shape(event: dict[str, Any]) -> tuple[str, tuple]:
    kind = event.get("kind")
    if type(kind) is not str or kind not in _KINDS:
        raise _Slow
    keys, defaults = _KINDS[kind]
    if not event.keys() <= keys or ("text" if kind != "tool" else "tool") not in event:
        raise _Slow
    shape = (kind, tuple((key, value) for key, value in defaults.items() if key not in event))
    if len(_SHAPES) < 4096:
        _SHAPES[(kind, *event)] = shape
    return shape


def _gold(given: Any) -> list[dict[str, Any]]:
    """The benchmark's expected calls with their defaults (a list of :class:`GoldCall`)."""
    if type(given) is not list:
        raise _Slow
    keys, defaults = _GOLD
    out = []
    for call in given:
        if type(call) is not dict or not call.keys() <= keys or type(call.get("tool")) is not str:
            raise _Slow
        call = {**defaults, "args": {}, **call}
        compare = call["compare"]
        if type(call["requestor"]) is not str or call["requestor"] not in _REQUESTORS:
            raise _Slow
        if compare is not None and (type(compare) is not list or any(type(name) is not str for name in compare)):
            raise _Slow
        out.append(call)
    return out


def _source(given: Any) -> str | None:
    """The source's JSON as the model writes it (``Source.model_dump_json``)."""
    if given is None:
        return None
    if type(given) is not dict or not given.keys() <= _SOURCE_KEYS:
        raise _Slow
    adapter, file, position = given.get("adapter"), given.get("file"), given.get("position")
    if type(adapter) is not str or type(file) not in _OPT_STR or (position is not None and type(position) is not int):
        raise _Slow
    key = (adapter, file)
    prefix = _SOURCES.get(key)
    if prefix is None:
        whole = Source(adapter=adapter, file=file).model_dump_json()
        if not whole.endswith('"position":null}'):
            raise _Slow
        if len(_SOURCES) >= 4096:
            _SOURCES.clear()
        prefix = _SOURCES[key] = whole[:-len('null}')]
    return prefix + ("null}" if position is None else f"{_int64(position)}}}")

