"""Small result types the ledger returns.

>>> CountRow("v", "s", "", 4, 3).failures
1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..record import Identity


@dataclass(frozen=True)
class IngestResult:
    """How many runs a batch added, and how many were already in the ledger."""

    added: int
    skipped: int

    @property
    def total(self) -> int:
        return self.added + self.skipped


@dataclass(frozen=True)
class CountRow:
    """Runs and passes of one version on one scenario under one condition."""

    version: str
    scenario: str
    condition: str
    trials: int
    passes: int

    @property
    def failures(self) -> int:
        return self.trials - self.passes


@dataclass(frozen=True)
class VersionInfo:
    """One version (identity hash) in the ledger, with its run count."""

    version: str
    identity: Identity
    runs: int
    scenarios: int
    first_recorded: str


@dataclass(frozen=True)
class Document:
    """An append-only document (a prediction, a seal, a spec) and its digest."""

    digest: str
    kind: str
    body: dict[str, Any]
    recorded_at: str


@dataclass(frozen=True)
class StoredRun:
    """A stored run as the ledger holds it: when it was ingested, and whether it is intact.

    ``intact`` is False when the stored body no longer hashes to the key it was stored under
    (it was edited after ingest); ``run`` is then what the edited body says, or None when it
    no longer reads as a run at all (``problem`` says why).
    """

    key_hash: str            # the first 16 hex digits of the content hash it was stored under
    run: Any
    recorded_at: str
    intact: bool
    problem: str | None = None
