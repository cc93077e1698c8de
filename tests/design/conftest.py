"""A small in-memory stand-in with the ledger's document and run API, for tests of the
pure sealing logic; the end-to-end tests use the real SQLite ledger when it is present."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from fluke.record import digest


class MemoryLedger:
    def __init__(self):
        self.clock = datetime(2026, 1, 1, tzinfo=timezone.utc)
        self.docs, self._runs, self._at = [], {}, {}

    def tick(self):
        self.clock += timedelta(seconds=1)
        return self.clock

    def put_document(self, kind, body):
        d = digest(body)
        self.docs.append(SimpleNamespace(digest=d, kind=kind, body=body,
                                         recorded_at=self.tick().isoformat()))
        return d

    def documents(self, kind):
        return [d for d in self.docs if d.kind == kind]

    def ingest(self, runs):
        for r in runs:
            self._runs.setdefault(r.hash, r)
            self._at.setdefault(r.hash, self.tick())

    def runs(self, version=None, **_):
        return (r for r in self._runs.values() if version is None or r.version == version)

    def recorded_at(self, run_hash):
        return self._at[run_hash]

    def resolve_version(self, selector):
        key, _, value = selector.partition("=")
        hits = {r.version for r in self._runs.values() if getattr(r.identity, key, None) == value}
        if len(hits) != 1:
            raise LookupError(selector)
        return hits.pop()


@pytest.fixture
def memory_ledger():
    return MemoryLedger()
