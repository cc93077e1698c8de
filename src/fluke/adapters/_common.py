"""Helpers every adapter shares: typed field access with errors that name the place.

>>> field_number({"reward": "high"}, "reward", file="r.json", record="record 3")
Traceback (most recent call last):
...
fluke.errors.InputError: r.json: record 3: field reward: expected a number, got 'high' (fix the value or drop the
record)
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import reprlib
from typing import Any, Iterator

import orjson
from pydantic import ValidationError

from ..errors import FormatVersionError, InputError
from ..record import Identity, Run

_MISSING = object()


def field_number(obj: dict, key: str, *, file: str, record: str, default: Any = _MISSING,
                 prefix: str = "") -> float | None:
    """``obj[key]`` as a float (None stays None); an InputError naming the field otherwise."""
    value = obj.get(key, default) if default is not _MISSING else _require(obj, key, file, record, prefix)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(file, record, prefix + key, f"expected a number, got {value!r}",
                         hint="fix the value or drop the record")
    return float(value)


def field_int(obj: dict, key: str, *, file: str, record: str, default: Any = _MISSING,
              prefix: str = "") -> int | None:
    """``obj[key]`` as an int; integral floats are accepted, anything else is an InputError."""
    value = field_number(obj, key, file=file, record=record, default=default, prefix=prefix)
    if value is None:
        return None
    if value != int(value):
        raise InputError(file, record, prefix + key, f"expected a whole number, got {value!r}")
    return int(value)


def field_dict(obj: Any, key: str, *, file: str, record: str, prefix: str = "") -> dict:
    """``obj[key]`` as a dict, or an InputError naming the field."""
    value = _require(obj, key, file, record, prefix)
    if not isinstance(value, dict):
        raise InputError(file, record, prefix + key, f"expected an object, got {type(value).__name__}")
    return value


def field_list(obj: Any, key: str, *, file: str, record: str, prefix: str = "") -> list:
    """``obj[key]`` as a list, or an InputError naming the field."""
    value = _require(obj, key, file, record, prefix)
    if not isinstance(value, list):
        raise InputError(file, record, prefix + key, f"expected a list, got {type(value).__name__}")
    return value


def field_value(obj: Any, key: str, *, file: str, record: str, prefix: str = "") -> Any:
    """``obj[key]`` of any type, or an InputError naming the field when it is absent.

    >>> field_value({"task_id": 7}, "task_id", file="t.json", record="record 0")
    7
    """
    return _require(obj, key, file, record, prefix)


def _require(obj: Any, key: str, file: str, record: str, prefix: str) -> Any:
    if not isinstance(obj, dict):
        raise InputError(file, record, prefix.rstrip(".") or None, f"expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise InputError(file, record, prefix + key, "is missing", hint="the file may be from another tool")
    return obj[key]


def as_list(value: Any) -> list:
    """``value`` when it is a list, else an empty list (for optional lists read leniently).

    >>> as_list([1]), as_list(None), as_list(3.5)
    ([1], [], [])
    """
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict:
    """``value`` when it is a dict, else an empty dict.

    >>> as_dict({"a": 1}), as_dict("x")
    ({'a': 1}, {})
    """
    return value if isinstance(value, dict) else {}


def expect_dict(value: Any, *, file: str | None, record: str | None, field: str) -> dict:
    """``value`` when it is an object, ``{}`` when it is null or absent, else an InputError.

    >>> expect_dict(None, file="f", record="r", field="info"), expect_dict({"a": 1}, file="f", record="r", field="info")
    ({}, {'a': 1})
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(file, record, field, f"expected an object, got {_kind(value)}")
    return value


def expect_list(value: Any, *, file: str | None, record: str | None, field: str) -> list:
    """``value`` when it is a list, ``[]`` when it is null or absent, else an InputError.

    >>> expect_list(3, file="f", record="r", field="tool_calls")
    Traceback (most recent call last):
    ...
    fluke.errors.InputError: f: r: field tool_calls: expected a list, got a number (3)
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(file, record, field, f"expected a list, got {_kind(value)}")
    return value


def as_str(value: Any) -> str | None:
    """``value`` when it is a string, else None (for optional names a file may garble).

    >>> as_str("gpt-4o"), as_str(["gpt-4o"])
    ('gpt-4o', None)
    """
    return value if isinstance(value, str) else None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({short(value)})"
    return {"dict": "an object", "list": "a list", "NoneType": "null"}.get(type(value).__name__,
                                                                          type(value).__name__)


_SHORT = reprlib.Repr()
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlevel = 60, 60, 3


def short(value: Any) -> str:
    """A short ``repr`` for an error message, safe on values nested any depth.

    >>> short("x" * 100)[:12], short([[[[[1]]]]])
    ("'xxxxxxxxxxx", '[[[[...]]]]')
    """
    return _SHORT.repr(value)


@contextlib.contextmanager
def building(file: str | None, record: str | None) -> Iterator[None]:
    """Turn what goes wrong while a run is built from a record into an :class:`InputError`
    naming the file and the record: a value the run model refuses (with its field), and
    a record nested too deep to walk.

    >>> from fluke.record import ToolCall
    >>> with building("f.json", "record 2"):
    ...     ToolCall(tool="t", call_id=True)
    Traceback (most recent call last):
    ...
    fluke.errors.InputError: f.json: record 2: field call_id: Input should be a valid string, got True (fix the
    record and ingest again)
    """
    try:
        yield
    except ValidationError as exc:
        raise validation_error(exc, file=file, record=record) from None
    except RecursionError:
        raise InputError(file, record, None, "is nested too deep to read",
                         hint="fluke reads records nested up to a few hundred levels") from None
    except orjson.JSONEncodeError as exc:  # a digest of a value too deep (or too odd) for JSON
        raise InputError(file, record, None, f"cannot be stored as JSON ({exc})",
                         hint="fluke reads records nested up to a few hundred levels") from None


def epoch(iso: Any) -> float | None:
    """An ISO-8601 timestamp as seconds since the epoch (naive times are taken as UTC)."""
    if not isinstance(iso, str):
        return None
    try:
        stamp = _dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=_dt.timezone.utc)
        return stamp.timestamp()
    except (ValueError, OverflowError):   # not a time, or out of range (year 1 in a far time zone)
        return None


def build_run(fields: dict[str, Any], *, file: str, record: str) -> Run:
    """Validate ``fields`` into a Run; a validation error names the file, record and field."""
    with building(file, record):
        return Run.model_validate(fields)


def validation_error(exc: ValidationError, *, file: str, record: str) -> InputError:
    """The first problem in a pydantic error, as an :class:`InputError`."""
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or None
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, FormatVersionError):   # upgrade fluke, not "fix the record": said as itself
        return FormatVersionError(file, record, field, cause.message, hint=cause.hint)
    message = err["msg"].removeprefix("Value error, ")
    if err.get("input") is not None and err["type"] not in ("missing", "value_error"):
        message += f", got {short(err['input'])}"[:120]
    return InputError(file, record, field, message, hint="fix the record and ingest again")


def with_identity(identity: dict[str, Any], supplied: dict[str, Any], *, file: str | None,
                  record: str | None) -> dict[str, Any]:
    """The identity the file gives, with fields the user supplied filling what it lacks
    (:meth:`fluke.record.Identity.filled`), as a dict for the run being built.

    A field the file garbles is an :class:`InputError` naming ``identity.<field>``.
    """
    try:
        return Identity.model_validate(identity).filled(supplied).model_dump(mode="json")
    except ValidationError as exc:
        err = validation_error(exc, file=file, record=record)
        raise InputError(file, record, f"identity.{err.field}" if err.field else "identity", err.message,
                         hint="fix the value, or give it with --identity") from None


def each_run(found: list | None, *, file: str | None, missing: str, hint: str, build) -> Iterator[Run]:
    """The runs of a document holding one or more message lists: ``build(item, record, position)``
    for each item of ``found``, inside :func:`building`; ``found`` None says the document holds none.

    >>> list(each_run(None, file="x.json", missing="no messages", hint="h", build=None))
    Traceback (most recent call last):
    ...
    fluke.errors.InputError: x.json: no messages (h)
    """
    if found is None:
        raise InputError(file, None, None, missing, hint=hint)
    for position, item in enumerate(found):
        record = f"run {position}" if len(found) > 1 else None
        with building(file, record):
            run = build(item, record, position)
        yield run
