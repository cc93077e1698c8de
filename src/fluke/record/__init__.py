"""The normalised run record at the centre of fluke.

Adapters produce :class:`Run` objects; everything else only reads them.

>>> from fluke.record import Run, Identity
>>> Run(scenario="s1", identity=Identity(model="m")).version == Identity(model="m").version
True

Each name is imported from its module when it is first asked for, so a verb that reads only the
ledger's tables (``fluke summary``) never builds the pydantic run model (``Run`` and its events):

>>> import fluke.record
>>> fluke.record.canonical_json({"b": 1, "a": 2})
b'{"a":2,"b":1}'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

#: Where each public name lives (a module of this package, or ``fluke._redact``).
_HOMES = {
    "._canonical": ("CANONICAL", "canonical_json", "digest"),
    "._events": ("AgentMessage", "Event", "ToolCall", "UserMessage"),
    "._identity": ("Identity",),
    "._storable": ("IDENTITY_FIELDS",),
    ".._redact": ("holds_secret", "may_hold_secret", "redact", "redact_text", "redact_url"),
    "._place": ("CAUSES", "place_of"),
    "._prepared": ("Prepared", "prepare"),
    "._run": ("FORMAT_VERSION", "GoldCall", "Label", "Outcome", "Run", "Source", "condition_key", "content_fields",
              "content_json", "json_default", "run_schema"),
    # LinePreparer brings msgspec, which only an ingest of a file needs
    "._line": ("LinePreparer",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "CANONICAL", "CAUSES", "FORMAT_VERSION", "IDENTITY_FIELDS", "AgentMessage", "Event", "GoldCall", "Identity",
    "Label", "LinePreparer", "Outcome", "Prepared", "Run", "Source", "ToolCall", "UserMessage", "canonical_json",
    "condition_key", "content_fields", "content_json", "digest", "holds_secret", "json_default", "may_hold_secret",
    "place_of", "prepare", "redact", "redact_text", "redact_url", "run_schema",
]
assert sorted(__all__) == sorted(_HOME_OF)

if TYPE_CHECKING:
    from .._redact import holds_secret, may_hold_secret, redact, redact_text, redact_url
    from ._canonical import CANONICAL, canonical_json, digest
    from ._events import AgentMessage, Event, ToolCall, UserMessage
    from ._identity import Identity
    from ._line import LinePreparer
    from ._place import CAUSES, place_of
    from ._prepared import Prepared, prepare
    from ._storable import IDENTITY_FIELDS
    from ._run import (FORMAT_VERSION, GoldCall, Label, Outcome, Run, Source, condition_key, content_fields,
                       content_json, json_default, run_schema)


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())
