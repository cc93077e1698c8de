"""Small result types the ledger returns.

>>> CountRow("v", "s", "", 4, 3).failures
1
>>> row = CountRow("v", "s", "", 5, 3, unknowns=1)
>>> row.failures, row.known
(2, 4)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import LedgerError

if TYPE_CHECKING:
    from ..record import Identity
    from ._overlap import SourceOverlap


@dataclass(frozen=True)
class IngestResult:
    """How many runs a batch added, and how many were already in the ledger (the same run, or
    another run of the same trial: one run per version × scenario × condition × trial is kept).

    ``warnings`` holds a :class:`fluke.ledger.SourceOverlap` for each file most of whose
    runs were already stored from another file (two agents' files that the identity does
    not tell apart); each has a ``message`` to print.
    """

    added: int
    skipped: int
    warnings: tuple["SourceOverlap", ...] = field(default=(), repr=False)
    #: of the ``skipped``, how many were another run of a trial the ledger keeps (the same
    #: version, scenario, condition and trial, with other content: latency, timestamps, cost, or
    #: another outcome), the first kept; and a few of them, each with where it and the kept run
    #: were read from (``fluke.ledger._writer.SameTrial``)
    same_trial: int = field(default=0, repr=False)
    same_trial_examples: tuple = field(default=(), repr=False)

    @property
    def total(self) -> int:
        return self.added + self.skipped


@dataclass(frozen=True)
class CountRow:
    """Runs and passes of one version on one scenario under one condition.

    ``unknowns`` of the ``trials`` had an unknown outcome (``passed`` null); they are not
    among the ``passes``, so :attr:`failures` counts them as failures (the default policy);
    leaving them out is ``known`` trials of which ``passes`` passed.
    """

    version: str
    scenario: str
    condition: str
    trials: int
    passes: int
    unknowns: int = 0

    @property
    def failures(self) -> int:
        """Trials that did not pass, the unknown ones included."""
        return self.trials - self.passes

    @property
    def known(self) -> int:
        """Trials whose outcome is known."""
        return self.trials - self.unknowns


@dataclass(frozen=True)
class StepRow:
    """How many runs of one version on one scenario under one condition sit at one place:
    ``cause`` (``censored``, ``died_at``, ``failed call`` or ``unknown step``), ``step`` (the
    event index; -1 when unknown) and ``event`` (the event there; '' for a censored run)."""

    version: str
    scenario: str
    condition: str
    cause: str
    step: int
    event: str
    runs: int


@dataclass(frozen=True)
class VersionInfo:
    """One version (identity hash) in the ledger, with its run count.

    ``stored`` is the identity's JSON as the ledger holds it. :meth:`label` and :meth:`value` read
    it as plain JSON, which is all a verb answering from the counts needs; ``identity`` builds the
    pydantic :class:`fluke.record.Identity` from it when first asked for.

    >>> info = VersionInfo("ab" * 32, '{"model": null, "harness": "h", "date": null}', 3, 1, "2026-01-01")
    >>> info.label(), info.value("harness"), info.value("world")
    ('h', 'h', None)
    >>> info.identity.label() == info.label()
    True
    >>> VersionInfo("ab" * 32, "[1]", 3, 1, "", ledger="l.db").label()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fluke.errors.LedgerError: l.db: the stored identity of version abababababab is no longer valid; ...
    """

    version: str
    stored: str | bytes
    runs: int
    scenarios: int
    first_recorded: str
    ledger: str = field(default="the ledger", repr=False, compare=False)

    @cached_property
    def _fields(self) -> dict[str, Any]:
        try:
            fields = orjson.loads(self.stored)
        except orjson.JSONDecodeError:
            fields = None
        if not isinstance(fields, dict):
            raise self._invalid()
        return fields

    @cached_property
    def identity(self) -> Identity:
        """The identity, validated (it builds the pydantic model)."""
        from ..record import Identity

        try:
            return Identity.model_validate(self._fields)
        except ValueError:   # pydantic's ValidationError, for JSON edited outside fluke
            raise self._invalid() from None

    def value(self, key: str) -> Any:
        """The stored value of the identity field ``key`` (None when it has none)."""
        return self._fields.get(key)

    def label(self) -> str:
        """:meth:`fluke.record.Identity.label` read off the stored JSON: the model, else the harness, else
        the policy, else the version prefix."""
        for name in ("model", "harness", "policy"):
            value = self._fields.get(name)
            if isinstance(value, str):
                return value
        return self.version[:12]

    def _invalid(self) -> LedgerError:
        return LedgerError(f"{self.ledger}: the stored identity of version {self.version[:12]} is no longer "
                           "valid; the ledger was changed outside fluke. Restore it from a backup")


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


@dataclass(frozen=True)
class TrialOutcomes:
    """Every run's outcome in trial order, as :meth:`fluke.ledger.Ledger.trial_outcomes` reads them.

    One entry per run, as numpy arrays: ``version`` (an index into ``versions``, the version
    hashes in order), ``input`` (an index into ``inputs``, the ``(scenario, condition)`` pairs
    in order), ``trial`` and ``outcome`` (0 passed, 1 failed, 2 unknown). Entries are ordered
    by scenario, condition, trial, version, then the ingest that stored the run and its
    content key: the order of :meth:`fluke.ledger.Ledger.runs` within an input and trial.
    """

    versions: tuple[str, ...]
    inputs: tuple[tuple[str, str], ...]
    version: Any
    input: Any
    trial: Any
    outcome: Any

    def __len__(self) -> int:
        return len(self.trial)


@dataclass(frozen=True)
class OutcomeSequences:
    """Each input's outcomes in trial order, one byte a run, as
    :meth:`fluke.ledger.Ledger.outcome_sequences` reads them: what the fix check's re-run rule needs.

    ``inputs`` are the ``(scenario, condition)`` pairs in order, ``sizes`` the runs of each,
    ``outcome`` (0 passed, 1 failed, 2 unknown) the runs of the first input, then of the
    second, ..., each input's in the order of :class:`TrialOutcomes` (trial, version, ingest,
    key); ``versions`` the versions with runs among them.
    """

    versions: tuple[str, ...]
    inputs: tuple[tuple[str, str], ...]
    sizes: Any
    outcome: Any

    def __len__(self) -> int:
        return len(self.outcome)


@dataclass(frozen=True)
class UnitCell:
    """The runs of one version in one sampling unit, scenario and condition, summed.

    ``unit`` is the runs' declared ``unit`` (their scenario when none was declared); ``trials``,
    ``passes`` and ``unknowns`` count outcomes as :class:`CountRow` does; ``rewarded`` runs
    carry an ``outcome.reward``, whose sum and sum of squares are ``reward_sum`` and
    ``reward_squares``.
    """

    version: str
    unit: str
    scenario: str
    condition: str
    trials: int
    passes: int
    unknowns: int
    rewarded: int
    reward_sum: float
    reward_squares: float


class Places(Mapping):
    """Runs per place ``(scenario, condition, cause, step, event)``, held as the columns the
    ledger read them in (what :meth:`fluke.ledger.Ledger.places` returns). It reads as a mapping
    (a dict is built on first look-up), and ``columns`` hands the six columns to code that works
    on whole columns (``fluke.comparison.compare_counted``) without a tuple per place being built
    and hashed: a million runs come as a hundred thousand places or more.

    >>> p = Places([("s", "", "censored", 3, "", 2), ("s", "", "died_at", 1, "pay", 1)])
    >>> p[("s", "", "died_at", 1, "pay")], len(p), p == {("s", "", "censored", 3, ""): 2, ("s", "", "died_at", 1,
    ... "pay"): 1}
    (1, 2, True)
    >>> p.columns[3], p.columns[5]
    ((3, 1), (2, 1))
    """

    __slots__ = ("columns", "_map")

    #: Rows taken from ``rows`` at a time while the columns are built.
    BATCH = 4096

    def __init__(self, rows: Iterable[Sequence[Any]]):
        # ``rows`` may be a stream: read a batch at a time, each text (scenario, condition, cause,
        # event) kept once however many places repeat it (a database hands each row new strings:
        # ten million runs over 20,000 scenarios are 200,000 places an arm, 50 MB of repeats)
        columns: list[list] = [[] for _ in range(6)]
        same: dict[str, str] = {}
        once, rows = same.setdefault, iter(rows)
        while batch := [r for r in islice(rows, self.BATCH) if r[5]]:
            for i, column in enumerate(columns):
                got = list(map(itemgetter(i), batch))
                column.extend(got if i in (3, 5) else map(once, got, got))
        self.columns: tuple[tuple, ...] = tuple(map(tuple, columns))
        self._map: dict | None = None

    def _mapping(self) -> dict:
        if self._map is None:
            s, c, cause, step, event, runs = self.columns
            self._map = dict(zip(zip(s, c, cause, step, event, strict=True), runs, strict=True))
        return self._map

    def __getitem__(self, key):
        return self._mapping()[key]

    def __iter__(self) -> Iterator:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self.columns[5])

    def __repr__(self) -> str:
        return repr(self._mapping())
