"""Noticing that a file's runs are already in the ledger from another file.

Runs are content-addressed and the source is outside the hash, so two files whose runs
are identical in content store once. That is right for the same file ingested twice; it
is wrong when the files come from two different agents whose files do not say which
(Terminal-Bench results without their folder, τ-bench files without a model): the second
file's runs would be counted as the first agent's. An ingest therefore checks, after
writing, where the runs it was given are stored from. When most of a file's runs are
stored from a *different* file, the ingest result carries a :class:`SourceOverlap`
warning suggesting ``--identity`` to tell the agents apart.

Only the first :data:`SAMPLE` runs of an ingest are checked (a bounded cost on any size).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Run, Source
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "o.db"))
>>> runs = lambda f: [Run(scenario="s", trial=t, source=Source(adapter="x", file=f)) for t in range(4)]
>>> ledger.ingest(runs("agent-a.json")).warnings
()
>>> [w] = ledger.ingest(runs("agent-b.json")).warnings
>>> w.file, w.already, w.checked, w.other_files
('agent-b.json', 4, 4, ('agent-a.json',))
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import orjson

if TYPE_CHECKING:
    from ._base import Ledger

#: How many runs of one ingest are checked against the ledger.
SAMPLE = 2000
#: A warning is given when more than this share of a file's checked runs is stored from elsewhere.
SHARE = 0.5


@dataclass(frozen=True)
class SourceOverlap:
    """Most of a file's runs were already stored, read from other files."""

    file: str
    checked: int                     # runs of this file checked (at most SAMPLE per ingest)
    already: int                     # of those, stored before from another source
    other_files: tuple[str, ...]     # where they were stored from (None: no file recorded)

    @property
    def message(self) -> str:
        """One line for the person ingesting."""
        others = ", ".join(f or "(no file)" for f in self.other_files[:3])
        more = f" and {len(self.other_files) - 3} more" if len(self.other_files) > 3 else ""
        return (f"{self.file}: {self.already} of {self.checked} runs checked were already in the ledger from "
                f"{others}{more}, so they were not stored again. If this file is from a different agent, "
                "its identity does not say so: ingest it again with --identity model=... (or harness=...)")

    def __str__(self) -> str:
        return self.message


class OverlapCheck:
    """Collects the row keys of the first :data:`SAMPLE` runs of one ingest, per source file."""

    def __init__(self) -> None:
        self.seen = 0
        self.keys: dict[str, list[int]] = {}
        self._files: dict[str, str | None] = {}

    def see(self, rows: Sequence[Any]) -> None:
        """Take note of a batch (of :class:`fluke.ledger._rows.RunRow`)."""
        if self.seen >= SAMPLE:
            return
        take = SAMPLE - self.seen
        for row in rows[:take]:
            file = self._file(row.source)
            if file is not None:
                self.keys.setdefault(file, []).append(row.key)
        self.seen += min(take, len(rows))

    def _file(self, source: str | None) -> str | None:
        if source is None:
            return None
        cut = source.find(',"position"')
        prefix = source[:cut] if cut >= 0 else source
        if prefix not in self._files:
            self._files[prefix] = _file_of(source)
        return self._files[prefix]

    def warnings(self, ledger: "Ledger") -> tuple[SourceOverlap, ...]:
        """Query where the noted runs are stored from; one warning per file mostly stored elsewhere."""
        out = []
        for file, keys in self.keys.items():
            unique = list(dict.fromkeys(keys))
            elsewhere: dict[str | None, int] = {}
            for start in range(0, len(unique), 500):
                chunk = unique[start:start + 500]
                rows = ledger.query(f"SELECT source FROM runs WHERE k IN ({', '.join('?' * len(chunk))})", chunk)
                for (source,) in rows:
                    stored = _file_of(source) if source is not None else None
                    if not _same_file(stored, file):
                        elsewhere[stored] = elsewhere.get(stored, 0) + 1
            already = sum(elsewhere.values())
            if unique and already > SHARE * len(unique):
                ranked = sorted(elsewhere, key=lambda f: (-elsewhere[f], f or ""))
                out.append(SourceOverlap(file=file, checked=len(unique), already=already,
                                         other_files=tuple(ranked)))
        return tuple(out)


def _same_file(stored: str | None, current: str) -> bool:
    """The same path, or two spellings of one file that exists (relative and absolute)."""
    if stored == current:
        return True
    if stored is None:
        return False
    try:
        return os.path.samefile(stored, current)
    except (OSError, ValueError):
        return False


def _file_of(source: str | bytes | dict) -> str | None:
    try:
        value = source if isinstance(source, dict) else orjson.loads(source)
    except orjson.JSONDecodeError:
        return None
    file = value.get("file") if isinstance(value, dict) else None
    return file if isinstance(file, str) else None
