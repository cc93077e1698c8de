"""Small result types the ledger returns.

>>> CountRow("v", "s", "", 4, 3).failures
1
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..record import Identity

if TYPE_CHECKING:
    from ._overlap import SourceOverlap


@dataclass(frozen=True)
class IngestResult:
    """How many runs a batch added, and how many were already in the ledger.

    ``warnings`` holds a :class:`fluke.ledger.SourceOverlap` for each file most of whose
    runs were already stored from another file (two agents' files that the identity does
    not tell apart); each has a ``message`` to print.
    """

    added: int
    skipped: int
    warnings: tuple["SourceOverlap", ...] = field(default=(), repr=False)

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
