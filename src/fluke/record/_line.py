"""A line of fluke JSONL checked and serialised in C: the fast path of a file ingest.

:class:`LinePreparer` decodes a line with msgspec straight into typed structs made from
the run model at import (:mod:`fluke.record._structs`: the same fields, types, bounds and
defaults, unknown fields refused; a field added to the model is in them with no edit), and
encodes them again with sorted keys: that is the run's canonical body, with no Python per
event. It returns None for any line it is not sure of, and the caller goes on as before
(:func:`fluke.record.prepare`, then the model itself), so errors stay the model's own.

msgspec and orjson (which writes the body of a run built in code) write the same bytes for
every value a line can hold, but two: a float of magnitude 1e16 or more (orjson writes
``1e+16``, msgspec ``1e16``) and an integer beyond 64 bits, which orjson parses as a float
and msgspec keeps. So such floats are refused where a float is typed (a bound) or free-form
(a hook), and a line holding a run of 20 digits is left to the slow path. :func:`agrees`
checks once that the two libraries agree on probes (floats, escapes, sorting, every
default of every model), and the fast path is off if they do not (another version of
either may write differently). ``tests/ingest/test_line.py`` holds the bodies equal to the
model's on real, generated and mutated lines.

>>> import orjson
>>> from fluke.record import Run, content_json
>>> line = b'{"format_version":1,"scenario":"s","outcome":{"passed":true},"events":[{"kind":"user","text":"hi"}]}'
>>> prepared = LinePreparer("f.jsonl")(line, 3)
>>> run = Run.model_validate(dict(orjson.loads(line), source={"adapter": "fluke", "file": "f.jsonl", "position": 3}))
>>> prepared.body == content_json(run), prepared.source == run.source.model_dump_json(), prepared.place
(True, True, ('censored', 0, ''))
>>> LinePreparer("f.jsonl")(b'{"scenario":"s","trial":"2"}', 1) is None   # a string for an int: the model's call
True
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import msgspec
import orjson
from msgspec import UNSET

from ._canonical import CANONICAL
from ._identity import Identity
from ._place import place_of
from ._prepared import Prepared
from ._run import ABSENT_WHEN_NONE, FORMAT_VERSION, OUTSIDE_CONTENT, Run, Source, condition_key, content_json
from ._storable import MAX_DEPTH, MAX_NAME, check_json
from ._structs import BIG as _BIG, structs_of

#: The structs, made from the run model (:mod:`fluke.record._structs`): nothing here names a field
#: of a run but the few a row stores (scenario, condition, outcome, trial, unit, events, identity).
_PLAN = structs_of(Run, outside=OUTSIDE_CONTENT, absent=ABSENT_WHEN_NONE, version=FORMAT_VERSION)
_Run = _PLAN.run
_Identity = next(struct for struct, model in _PLAN.structs.items() if model is Identity)
#: The run's fields holding names (checked for NUL and length, as the model's validators do).
_NAMES = _PLAN.names
_UNSETTABLE = tuple(OUTSIDE_CONTENT | ABSENT_WHEN_NONE)


def _free_float(text: str) -> float:
    """A float in a free-form value (tool arguments and results, identity components)."""
    value = float(text)
    if not -_BIG < value < _BIG:
        raise ValueError("a float orjson writes with an exponent sign")
    return value


_decode = msgspec.json.Decoder(_Run, float_hook=_free_float).decode
_encode = msgspec.json.Encoder(order="sorted").encode
#: digits and minus signs to "0", brackets to "[", all else to " ": 20 zeros in a row are an
#: integer that may be beyond 64 bits, and the brackets bound how deep the line nests.
_SHAPE = bytes(ord("0") if chr(i) in "-0123456789" else ord("[") if chr(i) in "[{" else ord(" ")
               for i in range(256))
_LONG_NUMBER = b"0" * 20


@functools.lru_cache(maxsize=None)
def agrees() -> bool:
    """Whether the structs have the model's fields, and the two libraries write the same
    bytes for probes: every default of every model, floats, escapes and sorted keys."""
    if not _PLAN.known:   # the model has a validator the structs do not honour: it decides every line
        return False
    values = [0.1, -0.0, 1e-7, 5e-324, 9999999999999998.0, 123456.789, 1.0, 2 ** 63 - 1, -(2 ** 63), 2 ** 64 - 1,
              "\x00\x01\x1f\"\\/\x7f\u2028\u00e9\U0001f600", {"b": 1, "a": {"\u00e9": 1, "z": 2, "B": 3}},
              [None, True, False, [], {}]]
    if any(_encode(value) != orjson.dumps(value, option=CANONICAL) for value in values):
        return False
    line = (b'{"scenario":"s","events":[{"kind":"user","text":"u"},{"kind":"agent","text":"a"},'
            b'{"kind":"tool","tool":"t"}],"gold":[{"tool":"g"}],"identity":{"model":{"x":[1.5]}}}')
    got = LinePreparer("f", check=False)._prepare(line, 1)
    run = Run.model_validate(orjson.loads(line))
    return got is not None and got.body == content_json(run)


class LinePreparer:
    """Prepares the lines of one file (``file``, as its runs' source names it; None for fields
    not read from a file, which keep the source they give) into
    :class:`Prepared` runs, each with its SHA-256 ``digest``; ``identity`` fills what a
    line's identity lacks (``--identity``). Calling it with a line (bytes) and its number
    returns the run, or None where the slow path must decide (every line, if :func:`agrees`
    does not hold, unless ``check`` is False: for that check itself)."""

    def __init__(self, file: str | None, identity: dict[str, Any] | None = None, *, check: bool = True) -> None:
        self.file, self.supplied = file, identity or {}
        self._identities: dict[tuple, tuple[Identity, _Identity]] = {}
        self._sources: dict[tuple, str] = {}
        #: a line without a source was read from this file (None: no file, no source)
        self._default_source = None if file is None else \
            Source(adapter="fluke", file=file).model_dump_json()[:-len("null}")]
        self.on = agrees() if check else True

    def __call__(self, line: bytes, number: int) -> Prepared | None:
        if not self.on:
            return None
        try:
            return self._prepare(line, number)
        except Exception:   # not of the plain shape, or of a shape not foreseen: the slow path decides
            return None

    def _prepare(self, line: bytes, number: int) -> Prepared | None:
        shape = line.translate(_SHAPE)
        if _LONG_NUMBER in shape:
            return None
        run = _decode(line)
        for name in _NAMES:
            value = getattr(run, name)
            if type(value) is str:   # the usual case, checked here without a call
                if "\x00" in value or len(value) > MAX_NAME:
                    return None
            elif value and not _storable_names(value):
                return None   # a NUL, or too long a name: the model's check refuses it, naming the field
        source = run.source
        for name in _UNSETTABLE:   # outside the body, or absent when None: not written
            if getattr(run, name) is None:
                setattr(run, name, UNSET)
        run.source = UNSET
        run.identity, identity = self._identity(run.identity)
        scenario, condition = run.scenario, run.condition
        if shape.count(b"[") > MAX_DEPTH:
            # Possibly nested deeper than a ledger stores: the model's check decides. (A line
            # this shallow cannot be: a value nested that deep holds more brackets.)
            self._check_depth(run)
        body = _encode(run)
        outcome = run.outcome
        passed, events = outcome.passed, run.events
        return Prepared(body, identity, scenario, condition_key(condition) if condition else "",
                        None if passed is None else 1 if passed else 0, self._source(source, number),
                        msgspec.structs.asdict(outcome),
                        len(events), place_of(passed, outcome.died_at, events), run.trial, run.unit,
                        hashlib.sha256(body).digest())

    def _identity(self, given: _Identity) -> tuple[_Identity, Identity]:
        """The identity to store (with ``--identity`` filled in) and its model, validated
        by the model once per distinct value."""
        try:
            key: tuple | None = msgspec.structs.astuple(given)
            cached = self._identities.get(key)
        except TypeError:   # a dict component: not hashable, validated each time
            key, cached = None, None
        if cached is None:
            if given.date is not None and "\x00" in given.date:
                raise ValueError("a NUL in the date: the model's error")
            model = Identity.model_validate(msgspec.structs.asdict(given))
            if self.supplied:
                model = model.filled(self.supplied)
            cached = (model, msgspec.convert(model.model_dump(mode="json"), _Identity))
            if key is not None:
                if len(self._identities) >= 4096:
                    self._identities.clear()
                self._identities[key] = cached
        return cached[1], cached[0]

    def _source(self, given: Any, number: int) -> str | None:
        """The source's JSON as the model writes it (``Source.model_dump_json``); a line
        without one (or with null) was read from this file at this line (None without a file)."""
        if given is None or given is UNSET:
            return None if self._default_source is None else f"{self._default_source}{number}}}"
        position = given.position
        key = (given.adapter, given.file)
        prefix = self._sources.get(key)
        if prefix is None or type(position) is str:
            whole = Source(adapter=given.adapter, file=given.file, position=position).model_dump_json()
            if type(position) is str:
                return whole
            if len(self._sources) >= 4096:
                self._sources.clear()
            prefix = self._sources[key] = whole[:-len(f"{position}}}")] if position is not None else whole[:-5]
        return prefix + ("null}" if position is None else f"{position}}}")

    @staticmethod
    def _check_depth(run: Any) -> None:
        """Every free-form value in the run's structs (tool arguments and results, gold
        arguments, identity components) is JSON a ledger stores (:func:`check_json`)."""
        stack = [run]
        while stack:
            item = stack.pop()
            kind = type(item)
            free = _PLAN.free.get(kind)
            if free is not None:
                for name in kind.__struct_fields__:
                    value = getattr(item, name)
                    if name in free:
                        check_json(value)
                    elif type(value) is list or isinstance(value, msgspec.Struct):
                        stack.append(value)
            elif kind is list:
                stack.extend(value for value in item if isinstance(value, msgspec.Struct))


def _storable_names(value: Any) -> bool:
    """Whether every name in ``value`` (a string, a list of them, or a dict of them and of
    scalars) holds no NUL and at most :data:`MAX_NAME` characters."""
    kind = type(value)
    if kind is str:
        return "\x00" not in value and len(value) <= MAX_NAME
    if kind is list:
        return all(_storable_names(item) for item in value)
    if kind is dict:
        return all(_storable_names(key) and (type(item) is not str or _storable_names(item))
                   for key, item in value.items())
    return True
