"""The report's judges section: every judge that judged the reported runs, read off the judge verbs'
own answers (the stored judgments, and ``judge audit`` on the people's labels the ledger kept).

Nothing here is drawn: the page (:mod:`fluke.report`) only lays out the figures this computes,
each with its interval: the judge's self-consistency over its K repeats, its agreement with
people (Cohen's κ beside the base rate, its bias in points), the pass rate corrected by the
people's labels (PPI++) beside the judge-only and human-only ones, and for a pairwise judge the
share of judgments that chose the first slot.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> from fluke.judging import JudgeConfig
>>> from ._judge import judge
>>> led = open_ledger(os.path.join(tempfile.mkdtemp(), "r.db"))
>>> runs = [Run(scenario=f"s{i}", identity=Identity(model="a"), outcome=Outcome(passed=i % 3 > 0)) for i in range(90)]
>>> _ = led.ingest(runs)
>>> _ = judge(led, JudgeConfig(model="j", prompt="p", endpoint="fake", replicates=3, target={"seed": 1}))
>>> section = judges_section(led, [runs[0].identity.version])
>>> entry = section.judges[0]
>>> entry.model, entry.judged, entry.replicates, entry.flips.n, entry.audit is None
('j', 90, 3, 90, True)
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Sequence

from ..report._model import Figure, JudgeAudit, JudgeEntry, JudgesSection


BALANCED = "; pairs shown in balanced order, each side first in turn"
UNBALANCED = "; order NOT balanced: the first slot's advantage is in the verdict"
AUDITED = "; audited over every run it judged, on the people's labels the last judge audit read"
NOT_AUDITED = "; not audited against people (fluke judge audit JUDGE --draw FILE)"


def _figure(doc: dict[str, Any] | None) -> Figure | None:
    if doc is None:
        return None
    return Figure(value=doc.get("value"), low=doc.get("low"), high=doc.get("high"),
                  n=int(doc.get("n", doc.get("labelled", 0)) or 0), method=doc.get("method", ""))


def _audit(doc: dict[str, Any], source: str) -> JudgeAudit:
    """The audit part of the section from ``fluke judge audit --json``."""
    a = doc["agreement"]
    return JudgeAudit(labelled=doc["labelled"], population=doc["population"], kappa=_figure(a["cohen_kappa"]),
                      agreement=_figure(a["agreement"]), bias_points=_figure(a["bias_points"]),
                      human_rate=a["human_pass_rate"], judge_rate=a["judge_pass_rate"], confusion=a["confusion"],
                      corrected=_figure(doc["corrected"]), human_only=_figure(doc["human_only"]),
                      judge_only=_figure(doc["judge_only"]), may_gate=doc["may_gate"]["status"],
                      reason=doc["may_gate"]["reason"], source=source)


def judges_section(ledger, versions: Sequence[str]) -> JudgesSection | None:
    """The judges of the runs of ``versions`` (None when no judge judged any of them)."""
    from ..errors import FlukeError
    from ..judging import JUDGE_KIND, Estimate, JudgeConfig, positional_bias, self_consistency, wilson
    from ._judge import LABELS_KIND, audit_labels

    docs = {d.digest: d.body for d in ledger.documents(JUDGE_KIND)}
    if not docs:
        return None
    hashes = {r.hash for r in ledger.runs(version=list(versions))}
    labels_by = {}
    for d in ledger.documents(LABELS_KIND):     # oldest first: the newest labels of each judge win
        labels_by[d.body.get("judge")] = d.body
    entries = []
    for digest, body in docs.items():
        config = JudgeConfig.model_validate(body)
        grades = {h: g for h, g in ledger.grades(digest).items() if h in hashes}
        if not grades:
            continue
        rests = (f"judge {digest[:12]} ({config.model}, endpoint {config.endpoint}, K = {config.replicates}); "
                 f"{len(grades)} judged runs of the reported versions")
        if config.pairwise:
            verdicts = [SimpleNamespace(slots=g.get("slots", [])) for g in grades.values()]
            a_wins = sum(int(g.get("a_wins", 0)) for g in grades.values())
            decided = a_wins + sum(int(g.get("b_wins", 0)) for g in grades.values())
            low, high = wilson(a_wins, decided)
            share = Estimate(a_wins / decided if decided else float("nan"), low, high, decided,
                             "share of decided judgments preferring a, Wilson interval")
            balanced = all(g.get("balanced", True) for g in grades.values())
            entries.append(JudgeEntry(digest=digest, model=config.model, endpoint=config.endpoint,
                                      replicates=config.replicates, pairwise=True, judged=len(grades),
                                      first_slot=_figure(positional_bias(verdicts).to_dict()),
                                      a_share=_figure(share.to_dict()),
                                      conditional_on=rests + (BALANCED if balanced else UNBALANCED)))
            continue
        known = [g["label"] for g in grades.values() if g.get("label") is not None]
        consistency = self_consistency([g["labels"] for _, g in sorted(grades.items())]) \
            if config.replicates >= 2 else None
        audit = None
        stored = labels_by.get(digest)
        if stored:
            try:
                found = audit_labels(ledger, config, {h: bool(v) for h, v in stored["labels"].items()},
                                     stored.get("source", "stored labels"))
                audit = _audit(found.to_dict(), stored.get("source", ""))
            except FlukeError:
                audit = None
        entries.append(JudgeEntry(
            digest=digest, model=config.model, endpoint=config.endpoint, replicates=config.replicates,
            judged=len(grades), pass_rate=sum(known) / len(known) if known else None,
            flips=_figure(consistency.flips.to_dict()) if consistency else None,
            alpha=_figure(consistency.alpha.to_dict()) if consistency else None, audit=audit,
            conditional_on=rests + (AUDITED if audit else NOT_AUDITED)))
    return JudgesSection(judges=entries) if entries else None
