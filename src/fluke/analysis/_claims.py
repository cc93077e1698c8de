"""Claims about one version, each decided by an analysis function: reliable, lucky, not worse, gated.

A :class:`Claim` says what was asked, what the runs say, and what that rests on (runs, prior,
version). It has three outcomes, never two: it *holds*, it *fails* (the runs say the opposite
with the same confidence), or it is *too small to tell* (and, where the answer knows, about how
many more runs would settle it). The pytest plugin's ``fluke.expect`` and ``fluke gate`` both
decide through these functions, so a test and the CI gate cannot disagree.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "c.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True))
...                    for t in range(5)])
>>> claim = claim_reliable(ledger, bar=0.9, prob=0.95)
>>> claim.status, claim.runs_needed
('too small to tell', 23.0)
>>> print(claim.message().splitlines()[1])
too small to tell: s: P(θ > 0.9) = 0.469 from 5/5 runs passed; about 23 more clean runs would be needed
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass
from typing import Any, Iterable

from ..errors import UsageError
from ..format import fmt_is
from ..policies import UnknownPolicy

HOLDS = "holds"
FAILS = "fails"
TOO_SMALL = "too small to tell"
_ORDER = {FAILS: 0, TOO_SMALL: 1, HOLDS: 2}


@dataclass(frozen=True)
class Claim:
    """One decided claim: what was asked, the status, what the runs say, what it rests on."""

    check: str                      # reliable | luck | not_worse_than | gate
    asked: str                      # the claim, e.g. "P(θ > 0.9) ≥ 0.95 on every scenario"
    status: str                     # holds | fails | too small to tell
    found: str                      # what the runs say, in one line
    rests_on: str                   # runs, prior, version
    reasons: tuple[str, ...] = ()   # one line per scenario (or check) that does not hold
    runs_needed: float | None = None
    limit: str | None = None        # the detection limit, for a comparison
    version: str = ""
    needed_unit: str | None = None  # what runs_needed counts when it is not runs (e.g. "human labels")

    @property
    def holds(self) -> bool:
        return self.status == HOLDS

    def message(self) -> str:
        """The claim, every reason it does not hold, and what it rests on (what an assertion prints)."""
        head = f"fluke claim {self.status.upper() if self.status != TOO_SMALL else 'TOO SMALL TO TELL'}: " \
               f"{self.asked}"
        body = list(self.reasons) or [self.found]
        lines = [head, *body]
        if self.limit:
            lines.append(f"detection limit: {self.limit}")
        lines.append(f"rests on: {self.rests_on}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "asked": self.asked, "status": self.status, "holds": self.holds,
                "found": self.found, "rests_on": self.rests_on, "reasons": list(self.reasons),
                "runs_needed": self.runs_needed, "limit": self.limit, "version": self.version}


def _unknowns(count: int, policy: str) -> str:
    """What a claim rests on about runs of unknown outcome (the one policy of every verb)."""
    return f"{UnknownPolicy.of(policy).describe(int(count))} (unknown: {policy})"


def _worst(statuses: Iterable[str]) -> str:
    return min(statuses, key=_ORDER.__getitem__, default=TOO_SMALL)


def _needed(value: float) -> str:
    if not math.isfinite(value):
        return "more clean runs than anyone would pay for would be needed (failures already seen)"
    return f"about {value:.0f} more clean runs would be needed"


def _pick(entries: list[dict], scenarios) -> list[dict]:
    if scenarios is None:
        return entries
    if isinstance(scenarios, str):
        return [e for e in entries if fnmatch.fnmatchcase(e["scenario"], scenarios)]
    wanted = set(scenarios)
    return [e for e in entries if e["scenario"] in wanted]


def _cell(entry: dict) -> str:
    return entry["scenario"] + (f" [{entry['condition']}]" if entry.get("condition") else "")


def claim_reliable(ledger, *, version: str | None = None, scenarios=None, bar: float = 0.9,
                   prob: float = 0.95, per: str = "scenario", prior: str = "uniform", unknown: str = "fail",
                   family: int | None = None) -> Claim:
    """Does P(θ > ``bar``) reach ``prob``, on every scenario (``per="scenario"``) or the suite?

    Decided by :func:`fluke.analysis.believe`. ``scenarios`` (ids, or one glob) limits the
    claim to a test's own cases. Fails when the runs put θ below the bar with probability
    ``prob``; otherwise, short of ``prob``, it is too small to tell, with the clean runs
    that would certify it (the believe result's ``runs_to_certify``, at ``prob``).

    ``family``: the claim is one of that many (a pytest session's fluke tests) sharing one
    false-fail budget of 1 − ``prob``, split evenly (Bonferroni) over the family and over the
    claim's scenario cells: a cell then fails only at P(θ > bar) ≤ (1 − prob) / (family × cells).
    None: each cell fails at 1 − ``prob`` on its own, as ``believe`` and ``gate`` say it.
    """
    from ._believe import believe
    from ._select import check_level

    check_level(prob, "prob")
    if per not in ("scenario", "suite"):
        raise UsageError(f"per={per!r} is not one of scenario, suite")
    result = believe(ledger, version=version, bar=bar, prior=prior, unknown=unknown)
    doc = result.payload()
    picked = [(i, e) for i, e in enumerate(doc["scenarios"]) if e in _pick(doc["scenarios"], scenarios)]
    if not picked:
        raise UsageError(f"scenarios={scenarios!r} names no scenario of version {doc['label']}")
    idx = [i for i, _ in picked]
    certify = [e["runs_to_certify"] for _, e in picked]
    if prob != 0.95:  # believe certifies at 0.95; the claim's own level is asked of the same posterior
        certify = [float(x) for x in result.b.found.runs_to_certify(bar=bar, level=prob)[idx]]
    if family is not None and (not isinstance(family, int) or family < 1):
        raise UsageError(f"family={family!r} must be a whole number of claims, at least 1")
    fails_at = (1 - prob) / (family * (1 if per == "suite" else len(picked))) if family else 1 - prob
    passes = sum(e["passes"] for _, e in picked)
    trials = sum(e["trials"] for _, e in picked)
    rests = (f"{passes} of {trials} runs passed over {len(picked)} scenario cells of version {doc['label']}; "
             f"prior {result.b.prior_text[0] if len(set(result.b.prior_text)) == 1 else prior}; bar {bar:g}; "
             + _unknowns(0 if result.b.unknowns is None else int(result.b.unknowns[idx].sum()),
                         result.b.unknown_policy))
    if family:
        rests += f"; fails at P ≤ {fails_at:.2g} (1 − {prob:g} split over {family} claims × their cells)"
    if per == "suite":
        if len(picked) != len(doc["scenarios"]):
            raise UsageError("per='suite' asks about the whole version; leave scenarios unset")
        p_all = doc["suite"]["p_all_clear"]
        needed = doc["suite"]["runs_to_certify_suite"]
        status = HOLDS if p_all >= prob else FAILS if p_all <= fails_at else TOO_SMALL
        found = fmt_is(f"P(every scenario above {bar:g})", p_all)
        if status == TOO_SMALL:
            found += f"; {_needed(needed)} on every scenario (for P ≥ 0.95)"
        return Claim("reliable", f"P(every scenario's θ > {bar:g}) ≥ {prob:g}", status, found, rests,
                     () if status == HOLDS else (found,), None if status == HOLDS else needed,
                     version=doc["version"])
    reasons, statuses, small = [], [], []
    for (_, e), need in sorted(zip(picked, certify, strict=True), key=lambda pc: pc[0][1]["p_above"]):  # worst first
        p = e["p_above"]
        status = HOLDS if p >= prob else FAILS if p <= fails_at else TOO_SMALL
        statuses.append(status)
        said = f"{_cell(e)}: {fmt_is(f'P(θ > {bar:g})', p)} from {e['passes']}/{e['trials']} runs passed"
        if status == FAILS:
            reasons.append(f"fails: {said}; the runs put it below the bar")
        elif status == TOO_SMALL:
            reasons.append(f"too small to tell: {said}; {_needed(need)}")
            small.append(need)
    status = _worst(statuses)
    needed = max(small) if small and status == TOO_SMALL else None
    held = statuses.count(HOLDS)
    found = f"{held} of {len(picked)} scenario cells have P(θ > {bar:g}) ≥ {prob:g}"
    return Claim("reliable", f"P(θ > {bar:g}) ≥ {prob:g} on every scenario", status, found, rests,
                 tuple(reasons), needed, version=doc["version"])


def claim_luck(ledger, spec, *, version: str | None = None, at_most: float = 0.05,
               level: float = 0.95, unknown: str = "fail") -> Claim:
    """Is the luck rate at most ``at_most``? Decided by :func:`fluke.analysis.grade` (its pooled
    credible interval): holds when the whole interval is at or under the ceiling, fails when it
    lies wholly above, too small to tell otherwise (or with no output-ok run)."""
    from ._grade import grade
    from ._select import check_level, pick_version

    check_level(at_most, "at_most")
    chosen = pick_version(ledger, version)
    result = grade(ledger, spec, version=chosen, level=level, store=False, unknown=unknown)
    said = _unknowns((result.unknowns or {}).get(chosen, 0), result.unknown_policy)
    rate = result.luck[chosen].pooled if chosen in result.luck else None
    label = result.labels.get(chosen, chosen[:12])
    asked = f"luck rate ≤ {at_most:g} (at {level:g} credibility)"
    if rate is None or rate.statistic is None:
        return Claim("luck", asked, TOO_SMALL, "no output-ok run: the luck rate is undefined",
                     f"version {chosen[:12]} ({label}); spec {result.spec.digest[:12]}; {said}", version=chosen)
    lo, hi = rate.interval
    status = HOLDS if hi <= at_most else FAILS if lo > at_most else TOO_SMALL
    found = f"luck rate {rate}"
    rests = (f"{rate.green} output-ok runs of {rate.runs} of version {chosen[:12]} ({label}); spec "
             f"{result.spec.digest[:12]}; Beta({rate.prior[0]:g}, {rate.prior[1]:g}) prior; {said}")
    reasons = ()
    if status != HOLDS:
        lucky = sorted(((n, c) for n, c in result.luck[chosen].cases.items() if c.lucky),
                       key=lambda kv: -kv[1].lucky)
        reasons = (f"{status}: {found}",) + tuple(f"  {name}: {c.lucky} lucky of {c.green} output-ok"
                                                  for name, c in lucky[:10])
    return Claim("luck", asked, status, found, rests, reasons, version=chosen)


def claim_not_worse(ledger, baseline: str, *, version: str | None = None, margin: float | None = None,
                    alpha: float = 0.05, power: float = 0.8, unknown: str = "fail") -> Claim:
    """Is ``version`` not worse than ``baseline``? Decided by :func:`fluke.analysis.compare`.

    Holds on *no significant difference* (the runs could have seen a change of ``margin``, a
    share of the pass rate: 0.05 is 5 points, the comparison's ceiling; default the
    comparison's own) or a difference in the version's favour; fails on a difference against
    it; too small to tell otherwise, with the runs per arm that would be needed.
    """
    from ._compare import compare
    from ._verdict_reading import compare_options, read_comparison
    from ._select import pick_version, version_label

    chosen = pick_version(ledger, version)
    result = compare(ledger, baseline, chosen[:16], alpha=alpha, power=power, record=False, unknown=unknown,
                     **compare_options(margin))
    r = read_comparison(result)
    if r.verdict == "different":
        status = FAILS if r.worse else HOLDS
    else:
        status = HOLDS if r.verdict == "no significant difference" else TOO_SMALL
    found = r.summary
    said = found if found.startswith(status) else f"{status}: {found}"  # no "too small to tell: too small to tell"
    reasons = () if status == HOLDS else (said,)
    doc = result.payload()
    rests = (f"A = {result.a.line()}, B = {result.b.line()}; {r.conditional_on}; "
             + _unknowns(doc["unknowns"], doc["unknown_policy"]))
    needed = r.runs_needed_per_arm if status == TOO_SMALL else None
    named = f"{version} ({chosen[:12]})" if version and not chosen.startswith(str(version)) else \
        f"version {version_label(ledger, chosen)}"  # never a bare hash
    return Claim("not_worse_than", f"{named} is not worse than {baseline}", status, found, rests,
                 reasons, needed, limit=r.limit_text(), version=chosen)


def claim_gate(ledger, spec, *, version: str | None = None, unknown: str = "fail") -> Claim:
    """Does the grading gate pass (:func:`fluke.analysis.grade`)? A gate is a rule, so it is never too small."""
    from ._grade import grade
    from ._select import pick_version

    chosen = pick_version(ledger, version)
    result = grade(ledger, spec, version=chosen, store=False, unknown=unknown)
    gate = result.gate
    failing = [c for c in gate.cases if c.failed]
    status = HOLDS if gate.passed else FAILS
    found = ("no hard violation; no soft check failed by a majority of a case's runs" if gate.passed else
             f"fails in {len(failing)} of {len(gate.cases)} cases")
    return Claim("gate", "the grading gate passes", status, found,
                 f"{result.runs} runs of version {chosen[:12]}; spec {result.spec.digest[:12]}; "
                 + _unknowns((result.unknowns or {}).get(chosen, 0), result.unknown_policy),
                 tuple(gate.reasons), version=chosen)
