"""Canonical JSON and the digests built on it.

Content hashes must not depend on key order or whitespace, so everything fluke hashes goes
through :func:`canonical_json` first.

>>> canonical_json({"b": 1, "a": [1.5, None]})
b'{"a":[1.5,null],"b":1}'
>>> digest({"a": 1}) == digest({"a": 1})
True
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

#: orjson's options for canonical JSON: sorted keys (non-string keys allowed), no whitespace.
CANONICAL = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def canonical_json(value: Any) -> bytes:
    """Serialise ``value`` with sorted keys and no whitespace."""
    return orjson.dumps(value, option=CANONICAL)


def digest(value: Any) -> str:
    """The SHA-256 hex digest of ``value``'s canonical JSON."""
    return hashlib.sha256(canonical_json(value)).hexdigest()
