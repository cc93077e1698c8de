"""Helpers every adapter shares: typed field access with errors that name the place.

>>> field_number({"reward": "high"}, "reward", file="r.json", record="record 3")
Traceback (most recent call last):
...
fluke.errors.InputError: r.json: record 3: field reward: expected a number, got 'high' (fix the value or drop the record)
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
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


def epoch(iso: Any) -> float | None:
    """An ISO-8601 timestamp as seconds since the epoch (naive times are taken as UTC)."""
    if not isinstance(iso, str):
        return None
    try:
        stamp = _dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.timezone.utc)
    return stamp.timestamp()


def build_run(fields: dict[str, Any], *, file: str, record: str) -> Run:
    """Validate ``fields`` into a Run; a validation error names the file, record and field."""
    try:
        return Run.model_validate(fields)
    except ValidationError as exc:
        raise validation_error(exc, file=file, record=record) from None


def validation_error(exc: ValidationError, *, file: str, record: str) -> InputError:
    """The first problem in a pydantic error, as an :class:`InputError`."""
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or None
    message = err["msg"]
    if err.get("input") is not None and err["type"] not in ("missing",):
        message += f", got {err['input']!r}"[:120]
    return InputError(file, record, field, message, hint="fix the record and ingest again")


def with_identity(identity: dict[str, Any], supplied: dict[str, Any]) -> dict[str, Any]:
    """The identity the file gives, with fields the user supplied filling what it lacks
    (:meth:`fluke.record.Identity.filled`), as a dict for the run being built."""
    return Identity.model_validate(identity).filled(supplied).model_dump(mode="json")
