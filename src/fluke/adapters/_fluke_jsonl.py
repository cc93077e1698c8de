"""fluke's own JSONL: one :class:`~fluke.record.Run` per line (what ``fluke export`` writes).

>>> sniff({"format_version": 1, "scenario": "s1"}), sniff({"task_id": 3})
(True, False)
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from ..record import Run
from ._common import build_run, with_identity

LINES = True


def sniff(first: Any) -> bool:
    """A JSON object with a ``scenario`` and a fluke ``format_version``."""
    return isinstance(first, dict) and "scenario" in first and "format_version" in first


def read(lines: Iterable[tuple[int, Any]], *, file: str, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per line; a stored ``source`` is kept, else this file and line are recorded."""
    for number, obj in lines:
        record = f"line {number}"
        if isinstance(obj, dict):
            if identity:
                obj = dict(obj, identity=with_identity(obj.get("identity") or {}, identity,
                                                       file=file, record=record))
            if obj.get("source") is None:   # validated with the run, as a Source
                obj = dict(obj, source={"adapter": "fluke", "file": file, "position": number})
        yield build_run(obj, file=file, record=record)
