"""The normalised run record at the centre of fluke.

Adapters produce :class:`Run` objects; everything else only reads them.

>>> from fluke.record import Run, Identity
>>> Run(scenario="s1", identity=Identity(model="m")).version == Identity(model="m").version
True
"""

from ._canonical import CANONICAL, canonical_json, digest
from ._events import AgentMessage, Event, ToolCall, UserMessage
from ._identity import IDENTITY_FIELDS, Identity
from .._redact import holds_secret, may_hold_secret, redact, redact_text, redact_url
from ._place import CAUSES, place_of
from ._prepared import Prepared, prepare
from ._run import (FORMAT_VERSION, GoldCall, Label, Outcome, Run, Source, condition_key, content_fields, content_json,
                   json_default, run_schema)

__all__ = [
    "CANONICAL", "FORMAT_VERSION", "GoldCall", "IDENTITY_FIELDS", "AgentMessage", "Event", "Identity", "Label",
    "LinePreparer", "Outcome", "Prepared", "Run", "Source", "ToolCall", "UserMessage", "canonical_json", "digest",
    "holds_secret",
    "may_hold_secret", "redact", "redact_text", "redact_url", "condition_key", "content_fields", "content_json",
    "json_default", "prepare", "run_schema", "CAUSES", "place_of",
]


def __getattr__(name: str) -> object:
    # LinePreparer brings msgspec, which only an ingest of a file needs: imported when asked for.
    if name == "LinePreparer":
        from ._line import LinePreparer

        return LinePreparer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
