"""Pre-registration: seal a decision rule before the runs (``seal``), decide it after (``unseal``).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> folder = tempfile.mkdtemp()
>>> ledger = open_ledger(os.path.join(folder, "seal.db"))
>>> rule = os.path.join(folder, "rule.yaml")
>>> _ = open(rule, "w").write("name: half pass\\ndecision: {statistic: mean, above: 0.5}\\n")
>>> sealed = seal(ledger, rule)
>>> len(sealed.digest)
64
>>> result = unseal(ledger, sealed.digest[:12], rule=rule)
>>> result.holds, result.report.intact
(False, True)
>>> print(result.render())  # doctest: +ELLIPSIS
seal ... — half pass, sealed ...: pre-registration DOES NOT HOLD
intact: digest, text and rule match
...
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, SpecError
from ..format import fluke_command, fmt_num, plural
from ._document import Span, line, note
from ._result import Result
from ._unknowns import closing_notes


@dataclass(frozen=True)
class SealResult(Result):
    """A rule sealed in the ledger: its digest (what ``unseal`` takes), when, and what it says."""

    kind = "seal"
    digest: str
    recorded_at: str
    file: str
    text_sha256: str
    rule: dict
    ledger: str | None = None  # its URL, so that the hint names it

    def payload(self) -> dict[str, Any]:
        return {"digest": self.digest, "recorded_at": self.recorded_at, "file": self.file,
                "text_sha256": self.text_sha256, "rule": self.rule}

    def blocks(self) -> list:
        return [line(f"sealed {self.file} at {self.recorded_at}", style="bold"),
                line("digest: ", Span(self.digest, "bold")),
                line("only runs recorded after this moment can confirm it: ",
                     Span(fluke_command(self.ledger, "unseal", self.digest[:12]), "code"))]


def seal(ledger, rule: str | Path) -> SealResult:
    """Seal the rule file ``rule`` (its exact bytes, their SHA-256 and the parsed rule) in ``ledger``."""
    from ..design import seal_rule as put_seal

    raw = Path(rule).read_bytes()
    try:
        digest = put_seal(ledger, raw)
    except SpecError as exc:
        raise InputError(str(rule), None, None, str(exc)) from None
    doc = next(d for d in ledger.documents("seal") if d.digest == digest)
    return SealResult(digest, str(doc.recorded_at), str(rule), doc.body["text_sha256"], doc.body["rule"],
                      getattr(ledger, "url", None))


@dataclass(frozen=True)
class SealList(Result):
    """The seals a ledger holds, oldest first: digest, when, the rule's name and how often each was opened."""

    kind = "seals"
    seals: tuple[dict, ...]
    ledger: str | None = None

    def payload(self) -> dict[str, Any]:
        return {"seals": list(self.seals)}

    def blocks(self) -> list:
        from ._document import Column, Table

        if not self.seals:
            return [line("no seals in this ledger; seal a rule before the runs with: ",
                         Span(fluke_command(self.ledger, "seal", "RULE"), "code"))]
        rows = [[s["digest"][:12], s["sealed_at"], s["name"] or "(unnamed rule)", plural(s["looks"], "look")]
                for s in self.seals]
        first = self.seals[-1]["digest"][:12]
        return [Table(f"{plural(len(self.seals), 'seal')} in this ledger",
                      [Column("digest", key=True), Column("sealed at"), Column("rule"), Column("opened", "right")],
                      rows, limit=None),
                line("decide one after the runs with: ", Span(fluke_command(self.ledger, "unseal", first), "code"))]


def seals(ledger) -> SealList:
    """Every seal in ``ledger`` with how many times it has been unsealed (each look is recorded).

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> led = open_ledger(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> seals(led).seals
    ()
    """
    looks: dict[str, int] = {}
    for d in ledger.documents("unseal"):
        looks[d.body.get("seal")] = looks.get(d.body.get("seal"), 0) + 1
    found = tuple({"digest": d.digest, "sealed_at": str(d.body.get("sealed_at") or d.recorded_at),
                   "name": (d.body.get("rule") or {}).get("name"), "looks": looks.get(d.digest, 0)}
                  for d in ledger.documents("seal"))
    return SealList(found, getattr(ledger, "url", None))


@dataclass(frozen=True)
class UnsealResult(Result):
    """A seal checked (digest, text, order of events) and its rule decided. ``holds`` when all pass."""

    kind = "unseal"
    report: Any   # fluke.design.UnsealReport

    @property
    def holds(self) -> bool:
        return self.report.holds

    def payload(self) -> dict[str, Any]:
        r, dec = self.report, self.report.decision
        return {"digest": r.digest, "sealed_at": r.sealed_at, "intact": r.intact, "problems": r.problems(),
                "runs": r.runs, "early_runs": list(r.early), "decision": vars(dec), "decision_text": dec.text(),
                "holds": r.holds, "rule": r.rule, "edited": list(r.edited), "timing": dict(r.basis),
                "timing_text": r.timing(), "look": r.look, "recorded_as": r.record}

    def blocks(self) -> list:
        r, dec = self.report, self.report.decision
        name = r.rule.get("name") or "(unnamed rule)"
        verdict = Span("HOLDS", "good") if r.holds else Span("DOES NOT HOLD", "bad")
        out: list = [line(f"seal {r.digest[:12]} — {name}, sealed {r.sealed_at}: pre-registration ", verdict,
                          style="bold")]
        out.append(line(Span("intact", "good"), ": digest, text and rule match") if r.intact
                   else line(Span("NOT intact", "bad")))
        out += [line("  ", Span("✗ ", "bad"), p) for p in r.problems()]
        if not r.early:
            out.append(line(f"order: all {r.runs} runs in scope ran and were recorded after the seal"))
        out.append(note(r.timing()))
        bounds = "" if dec.low is None else f" ({fmt_num(dec.low, 4)} to {fmt_num(dec.high, 4)})"
        out.append(line(f"decision: {dec.statistic} = {fmt_num(dec.estimate, 4)}{bounds} on {dec.runs} runs; "
                        f"{dec.text()}"))
        if r.look > 1:
            out.append(line(Span(f"look {r.look}: ", "warn"),
                            f"this seal has been opened {plural(r.look - 1, 'time')} before; "
                            "every look is recorded in the ledger with the runs it used"))
        out += closing_notes("the rule as sealed, and the runs in its scope that ran and were recorded after the "
                             "seal; stored runs whose body no longer matches its content hash are refused",
                             dec.unknowns, dec.unknown_policy, declared="the sealed rule's decision.unknown")
        return out


def unseal(ledger, digest: str, *, rule: str | Path | bytes | None = None) -> UnsealResult:
    """Check the seal ``digest`` names (a prefix of at least 6 hex digits) and decide its rule on the
    runs recorded after it; ``rule`` (a path or the bytes) must then be byte-for-byte the sealed file."""
    from ..design import unseal_rule as open_seal

    text = rule if isinstance(rule, bytes) or rule is None else Path(rule).read_bytes()
    return UnsealResult(open_seal(ledger, digest, text=text))
