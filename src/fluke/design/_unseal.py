"""Sealing into and unsealing from a ledger (anything with the ledger's document API).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> led = open_ledger(os.path.join(tempfile.mkdtemp(), "seal.db"))
>>> d = seal(led, "decision: {statistic: mean, above: 0.5}\\n")
>>> report = unseal(led, d[:10])
>>> report.intact, report.decision.reason
(True, 'no run in scope has an outcome.passed')
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..errors import SelectorError
from ._seal import Decision, SealCheck, check_seal, evaluate_rule, in_scope, seal_body

__all__ = ["UnsealReport", "find_seal", "seal", "unseal"]


def seal(ledger, text: str | bytes) -> str:
    """Validate a rule, store its seal in ``ledger`` (kind "seal"); return the digest."""
    return ledger.put_document("seal", seal_body(text))


def find_seal(ledger, prefix: str):
    """The stored seal whose digest starts with ``prefix`` (unique), or :class:`SelectorError`."""
    prefix = prefix.strip().lower()
    if len(prefix) < 6:
        raise SelectorError(f"digest prefix {prefix!r} is too short: give at least 6 hex digits")
    hits = [d for d in ledger.documents("seal") if d.digest.startswith(prefix)]
    if not hits:
        raise SelectorError(f"no seal with digest {prefix!r} in this ledger "
                            "(list them with: fluke --json unseal --list)")
    if len(hits) > 1:
        raise SelectorError(f"digest prefix {prefix!r} matches {len(hits)} seals; give more digits")
    return hits[0]


def _time(value: Any) -> datetime:
    if isinstance(value, datetime):
        t = value
    else:
        t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class UnsealReport:
    """Integrity, order and decision of a pre-registration. ``holds`` when all three pass."""

    digest: str
    sealed_at: str
    check: SealCheck
    runs: int
    early: tuple[str, ...]
    decision: Decision
    rule: dict

    @property
    def intact(self) -> bool:
        return self.check.intact

    @property
    def holds(self) -> bool:
        return self.intact and not self.early and self.decision.passed and not self.decision.reason

    def problems(self) -> list[str]:
        out = list(self.check.problems)
        if self.early:
            out.append(f"{len(self.early)} of {self.runs} runs in scope were recorded before the seal "
                       f"(first: {self.early[0][:12]}); they cannot confirm it")
        return out


def unseal(ledger, digest_prefix: str, *, text: bytes | str | None = None) -> UnsealReport:
    """Check a seal's digest and the order of events, then decide the rule on the runs in scope."""
    doc = find_seal(ledger, digest_prefix)
    body = doc.body
    check = check_seal(doc.digest, body, text=text)
    rule = body.get("rule") or {}
    scope = rule.get("scope") or {}
    version = scope.get("version")
    if version:
        version = ledger.resolve_version(str(version))
    runs = in_scope(rule, ledger.runs(version=version) if version else ledger.runs())
    sealed = _time(doc.recorded_at)
    times = ledger.recorded_times(version=version)
    early = tuple(r.hash for r in runs if _time(times[r.hash]) <= sealed)
    if "decision" in rule:
        decision = evaluate_rule(rule, runs)
    else:
        decision = Decision("?", float("nan"), None, None, float("nan"), float("nan"), "above",
                            False, len(runs), "the sealed rule has no decision")
    return UnsealReport(doc.digest, str(doc.recorded_at), check, len(runs), early, decision, rule)
