"""What a run may hold so that every ledger can store it and read it back.

A run is stored as its canonical JSON (orjson), and PostgreSQL keeps the names a query
filters on (scenario, condition) in text columns. So free-form values (tool arguments and
results, identity components) must be JSON that orjson writes: nested at most
:data:`MAX_DEPTH` deep (orjson stops at 255 levels counted from the run itself), integers
within 64 bits, finite numbers, string keys. And the names must hold no NUL character,
which a PostgreSQL text column cannot store. A NUL inside a tool result or a message is
fine: it is stored as the JSON escape ``\\u0000``. Names are also bounded: at most
:data:`MAX_NAME` characters (a scenario, unit, condition key or value, tag, date), and an identity
component given as a string at most :data:`MAX_IDENTITY` (a name is a key every table and comment
repeats, not a place for a document; a longer one is refused with its field named).

>>> check_json({"a": [1, 2.5, None, "x"]})
{'a': [1, 2.5, None, 'x']}
>>> nested = None
>>> for _ in range(MAX_DEPTH + 1):
...     nested = [nested]
>>> check_json(nested)
Traceback (most recent call last):
...
ValueError: nested deeper than 200 levels (fluke stores runs as JSON, and JSON in a ledger stops at 200)
>>> check_name("a\\x00b")
Traceback (most recent call last):
...
ValueError: holds a NUL character (\\x00), which a ledger cannot store in a name; remove it
>>> check_name("x" * 1001)
Traceback (most recent call last):
...
ValueError: is 1001 characters long; a name holds at most 1000 (use a shorter id, and put the text elsewhere in the run)
"""

from __future__ import annotations

import math
from typing import Any

#: How deep a free-form value (tool arguments, a result, an identity component) may nest.
MAX_DEPTH = 200
#: The six components of an identity that name a version (the date is the seventh field, outside the hash).
IDENTITY_FIELDS = ("model", "harness", "tools", "world", "grader", "policy")
#: The longest name (scenario, unit, condition key or value, tag, date), in characters.
MAX_NAME = 1_000
#: The largest run a ledger stores: its canonical JSON, in bytes (64 MiB). A larger one is refused
#: before anything is written, with this limit named.
MAX_RUN = 64 * 2 ** 20
#: The longest identity component given as a string (model, harness, ...), in characters.
MAX_IDENTITY = 10_000
_INT_MIN, _INT_MAX = -(2 ** 63), 2 ** 64 - 1


def check_json(value: Any) -> Any:
    """``value`` itself when a ledger can store it as JSON, else a ValueError saying why."""
    stack = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        kind = type(item)
        if kind is str or item is None or kind is bool:
            continue
        if kind is dict or kind is list or kind is tuple:
            if depth >= MAX_DEPTH:
                raise ValueError(f"nested deeper than {MAX_DEPTH} levels (fluke stores runs as JSON, "
                                 f"and JSON in a ledger stops at {MAX_DEPTH})")
            if kind is dict:
                for key, inner in item.items():
                    if type(key) is not str:
                        raise ValueError(f"has a key {key!r} that is not a string; JSON keys are strings")
                    push((inner, depth + 1))
            else:
                for inner in item:
                    push((inner, depth + 1))
        elif kind is int:
            if not _INT_MIN <= item <= _INT_MAX:
                raise ValueError(f"holds the integer {item}, outside the 64 bits JSON in a ledger keeps; "
                                 "store it as a string")
        elif kind is float:
            if not math.isfinite(item):
                raise ValueError(f"holds {item}, which JSON cannot represent; use null or a string")
    return value


def check_name(text: str | None) -> str | None:
    """``text`` itself unless it holds a NUL character or is longer than :data:`MAX_NAME` (a scenario,
    unit, condition, tag, date)."""
    if text is not None and "\x00" in text:
        raise ValueError("holds a NUL character (\\x00), which a ledger cannot store in a name; remove it")
    if text is not None and len(text) > MAX_NAME:
        raise ValueError(f"is {len(text)} characters long; a name holds at most {MAX_NAME} (use a shorter id, and "
                         "put the text elsewhere in the run)")
    return text


def check_identity_text(text: Any) -> Any:
    """An identity component given as a string: at most :data:`MAX_IDENTITY` characters."""
    if isinstance(text, str) and len(text) > MAX_IDENTITY:
        raise ValueError(f"is {len(text)} characters long; an identity component holds at most {MAX_IDENTITY} "
                         "(name the version, e.g. by a digest of the long text)")
    return text
