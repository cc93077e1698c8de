"""Sealing into and unsealing from a ledger (anything with the ledger's document API).

What an unseal trusts, and why:

* *The seal's time* is the ``sealed_at`` inside the sealed body, covered by its digest. The
  ledger's own ``recorded_at`` column for the seal is not hashed; it is only compared, and
  a disagreement (the column was moved) is a problem, never a new time.
* *A run's time* is when it was executed where the record says so (its events' absolute
  timestamps, else its identity date to the day), and when it was ingested otherwise. A run
  confirms the seal only if it was ingested after it *and* nothing recorded says it ran
  before; the report says how many runs were judged on which basis.
* *A run's content* must still hash to the key it was stored under: an edited body (a
  flipped outcome, reordered events) is refused, not read.

Every unseal is recorded in the ledger, append-only (kind ``"unseal"``), with the content
hashes of the runs it used, so repeated looks at a seal are visible to whoever reads it.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> led = open_ledger(os.path.join(tempfile.mkdtemp(), "seal.db"))
>>> d = seal_rule(led, "decision: {statistic: mean, above: 0.5}\\n")
>>> report = unseal_rule(led, d[:10])
>>> report.intact, report.decision.reason, report.look
(True, 'no run in scope has an outcome.passed', 1)
>>> len(led.documents("unseal"))
1
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from .._time import utc_time
from ..errors import SelectorError
from ._seal import RuleDecision, SealCheck, check_seal, evaluate_rule, in_scope, seal_body

__all__ = ["UnsealReport", "execution_start", "find_seal", "seal_rule", "unseal_rule"]

#: How far the ledger's recorded time of a seal may sit from its sealed time (it is written
#: right after the body is made).
SEAL_CLOCK_SLACK = timedelta(minutes=1)
#: Event times below this (2000-01-01) are read as relative offsets, not as dates.
_EPOCH_FLOOR = 946_684_800.0


def seal_rule(ledger, text: str | bytes) -> str:
    """Validate a rule, store its seal in ``ledger`` (kind "seal"); return the digest."""
    return ledger.put_document("seal", seal_body(text))


def find_seal(ledger, prefix: str):
    """The stored seal whose digest starts with ``prefix`` (unique), or :class:`SelectorError`."""
    prefix = prefix.strip().lower()
    if len(prefix) < 6:
        raise SelectorError(f"digest prefix {prefix!r} is too short: give at least 6 hex digits")
    hits = [d for d in ledger.documents("seal") if d.digest.startswith(prefix)]
    if not hits:
        from ..format import fluke_command

        raise SelectorError(f"no seal with digest {prefix!r} in this ledger "
                            f"(list them with: {fluke_command(ledger, 'unseal', '--list')})")
    if len(hits) > 1:
        raise SelectorError(f"digest prefix {prefix!r} matches {len(hits)} seals; give more digits")
    return hits[0]


def execution_start(run) -> tuple[datetime | None, str]:
    """When a run started executing, as far as its record says, and on what basis.

    The earliest absolute event timestamp (``t`` or ``t_start``) if any; else the start of
    its identity date; else (None, "ingest").

    >>> from fluke.record import Identity, Run, UserMessage
    >>> execution_start(Run(scenario="s", events=[UserMessage(text="hi", t=1577836800.0)]))[1]
    'event times'
    >>> execution_start(Run(scenario="s", identity=Identity(date="2020-01-01")))
    (datetime.datetime(2020, 1, 1, 0, 0, tzinfo=datetime.timezone.utc), 'identity date')
    """
    stamps = []
    for event in run.events:
        for name in ("t", "t_start"):
            value = getattr(event, name, None)
            if isinstance(value, (int, float)) and value >= _EPOCH_FLOOR:
                stamps.append(float(value))
    if stamps:
        return datetime.fromtimestamp(min(stamps), timezone.utc), "event times"
    date = getattr(run.identity, "date", None)
    if date:
        day = utc_time(str(date)[:10])
        if day is not None:
            return day, "identity date"
    return None, "ingest"


@dataclass(frozen=True)
class UnsealReport:
    """Integrity, order and decision of a pre-registration. ``holds`` when all pass.

    ``early`` are the runs that cannot confirm the seal (ingested, or by their record
    executed, before it); ``edited`` the stored runs refused because their body no longer
    matches its content hash; ``basis`` how many runs were timed by what; ``look`` which
    unseal of this seal this is (1 for the first).
    """

    digest: str
    sealed_at: str
    check: SealCheck
    runs: int
    early: tuple[str, ...]
    decision: RuleDecision
    rule: dict
    edited: tuple[str, ...] = ()
    basis: dict[str, int] = field(default_factory=dict)
    clock: tuple[str, ...] = ()
    look: int = 1
    record: str | None = None

    @property
    def intact(self) -> bool:
        return self.check.intact and not self.clock

    @property
    def holds(self) -> bool:
        return (self.intact and not self.early and not self.edited and self.decision.passed
                and not self.decision.reason)

    def problems(self) -> list[str]:
        out = list(self.check.problems) + list(self.clock)
        if self.edited:
            out.append(f"{len(self.edited)} stored run(s) in scope no longer match their content hash "
                       f"(first stored as {self.edited[0]}): edited after ingest, refused")
        if self.early:
            out.append(f"{len(self.early)} of {self.runs} runs in scope were ingested or executed before the "
                       f"seal (first: {self.early[0][:12]}); they cannot confirm it")
        return out

    def timing(self) -> str:
        """How the runs were placed in time, in words."""
        parts = [f"{n} by {what}" for what, n in self.basis.items() if n]
        return ("runs timed against the sealed time " + self.sealed_at + ": " + ", ".join(parts)
                + " (every run must also have been ingested after it)") if parts else "no runs in scope"


def unseal_rule(ledger, digest_prefix: str, *, text: bytes | str | None = None, record: bool = True) -> UnsealReport:
    """Check a seal's digest, its time and the runs' order and content; decide the rule.

    With ``record`` (the default) the unseal is appended to the ledger as an ``"unseal"``
    document naming the seal, the outcome and the content hashes of the runs used.
    """
    doc = find_seal(ledger, digest_prefix)
    body = doc.body
    check = check_seal(doc.digest, body, text=text)
    rule = body.get("rule") or {}
    scope = rule.get("scope") or {}
    version = scope.get("version")
    if version:
        version = ledger.resolve_version(str(version))
    stored = list(ledger.stored_runs(version=version) if version else ledger.stored_runs())
    sealed = utc_time(body.get("sealed_at"))
    clock = list(_clock_problems(sealed, doc.recorded_at, body.get("sealed_at")))
    edited = []
    readable = []
    for s in stored:
        if s.run is None or not s.intact:
            if s.run is None or in_scope(rule, [s.run]):
                edited.append(s.key_hash)
            continue
        readable.append(s)
    clock += _ingest_clock(readable)
    chosen = {id(r) for r in in_scope(rule, [s.run for s in readable])}
    scoped = [s for s in readable if id(s.run) in chosen]
    runs = [s.run for s in scoped]
    early, basis = [], {"event times": 0, "identity date": 0, "ingest": 0}
    for s in scoped:
        ingested = utc_time(s.recorded_at)
        started, how = execution_start(s.run)
        basis[how] += 1
        before = sealed is None or ingested is None or ingested <= sealed
        if started is not None and sealed is not None:
            # A date says only the day: it is "before" when the whole day is.
            end = started + timedelta(days=1) if how == "identity date" else started
            before = before or end <= sealed
        if before:
            early.append(s.run.hash)
    if "decision" in rule:
        decision = evaluate_rule(rule, runs)
    else:
        decision = RuleDecision("?", float("nan"), None, None, float("nan"), float("nan"), "above",
                            False, len(runs), "the sealed rule has no decision")
    looks = 1 + sum(1 for d in ledger.documents("unseal") if d.body.get("seal") == doc.digest)
    report = UnsealReport(doc.digest, str(body.get("sealed_at")), check, len(runs), tuple(early), decision,
                          rule, tuple(edited), basis, tuple(clock), looks)
    if record:
        digest = ledger.put_document("unseal", {
            "seal": doc.digest, "look": looks, "unsealed_at": datetime.now(timezone.utc).isoformat(),
            "holds": report.holds, "problems": report.problems(), "decision": decision.text(),
            "runs": sorted(r.hash for r in runs), "early": sorted(early), "edited": sorted(edited),
            "basis": basis, "unknowns": decision.unknowns, "unknown_policy": decision.unknown_policy})
        report = UnsealReport(**{**report.__dict__, "record": digest})
    return report


def _clock_problems(sealed: datetime | None, recorded: Any, sealed_text: Any):
    if sealed is None:
        yield f"the seal's sealed_at ({sealed_text!r}) is not a time"
        return
    at = utc_time(recorded)
    if at is None or abs(at - sealed) > SEAL_CLOCK_SLACK:
        yield (f"the ledger says the seal was stored at {recorded}, but the sealed time inside it is "
               f"{sealed_text}: the ledger's record of it was moved; the sealed time is used")


def _ingest_clock(stored) -> list[str]:
    """Ingest times that cannot be true: in the future, or earlier than an earlier ingest's."""
    now = datetime.now(timezone.utc) + SEAL_CLOCK_SLACK
    out, latest = [], None
    future = out_of_order = 0
    for s in stored:                        # in ingest order
        t = utc_time(s.recorded_at)
        if t is None:
            continue
        future += t > now
        if latest is not None and t < latest - SEAL_CLOCK_SLACK:
            out_of_order += 1
        latest = t if latest is None else max(latest, t)
    if future:
        out.append(f"{future} run(s) carry an ingest time in the future: the ledger's ingest times were moved")
    if out_of_order:
        out.append(f"{out_of_order} run(s) were ingested later but carry an earlier ingest time than runs "
                   "ingested before them: the ledger's ingest times were moved")
    return out
