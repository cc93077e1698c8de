"""The record's one rule for a time: ISO-8601 (a trailing ``Z`` allowed), naive meaning UTC.

>>> utc_time("2026-03-01T10:00:00Z").isoformat(), utc_time("2026-03-01").isoformat()
('2026-03-01T10:00:00+00:00', '2026-03-01T00:00:00+00:00')
>>> utc_time("next tuesday") is None
True
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


def utc_time(value: Any) -> datetime | None:
    """``value`` (a datetime or its ISO-8601 text) as an aware datetime; None when it is not a time."""
    if isinstance(value, datetime):
        t = value
    else:
        try:
            t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
