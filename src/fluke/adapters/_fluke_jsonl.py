"""fluke's own JSONL: one :class:`~fluke.record.Run` per line (what ``fluke export`` writes).

>>> sniff({"format_version": 1, "scenario": "s1"}), sniff({"task_id": 3})
(True, False)
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from ..record import Prepared, Run, prepare
from ._common import build_run, with_identity

LINES = True
#: :func:`read` yields :class:`~fluke.record.Prepared` runs when asked (``prepared=True``).
PREPARED = True


def sniff(first: Any) -> bool:
    """A JSON object with a ``scenario`` and a fluke ``format_version``."""
    return isinstance(first, dict) and "scenario" in first and "format_version" in first


def read(lines: Iterable[tuple[int, Any]], *, file: str, identity: dict[str, Any],
         prepared: bool = False) -> Iterator[Run | Prepared]:
    """Yield one run per line; a stored ``source`` is kept, else this file and line are recorded.

    With ``prepared``, a line of the plain shape is yielded as a :class:`~fluke.record.Prepared`
    run (checked and serialised without the model, for an ingest); any other line is
    validated by the model as always, with the same errors.
    """
    filled: dict[tuple, dict[str, Any]] = {}   # --identity merged into each identity the file gives
    for number, obj in lines:
        record = f"line {number}"
        if isinstance(obj, dict):
            if identity:
                obj = dict(obj, identity=_filled(filled, obj.get("identity") or {}, identity, file, record))
            if obj.get("source") is None:   # validated with the run, as a Source
                obj = dict(obj, source={"adapter": "fluke", "file": file, "position": number})
            if prepared:
                ready = prepare(obj)
                if ready is not None:
                    yield ready
                    continue
        yield build_run(obj, file=file, record=record)


def _filled(cache: dict[tuple, dict[str, Any]], given: Any, supplied: dict[str, Any], file: str,
            record: str) -> dict[str, Any]:
    """:func:`with_identity`, once per distinct identity of the file (a copy each time)."""
    try:
        key = tuple(given.items()) if isinstance(given, dict) else None
        done = cache.get(key) if key is not None else None
    except TypeError:   # a dict component: not hashable
        key = done = None
    if done is None:
        done = with_identity(given, supplied, file=file, record=record)
        if key is not None and len(cache) < 4096:
            cache[key] = done
    return dict(done)
