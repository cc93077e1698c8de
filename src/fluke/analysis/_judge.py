"""``judge`` and ``judge audit``: label a ledger's runs with a declared judge, then check the
judge against a blinded human sample and correct its pass rate (PPI++).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> from fluke.judging import JudgeConfig
>>> led = open_ledger(os.path.join(tempfile.mkdtemp(), "j.db"))
>>> _ = led.ingest([Run(scenario=f"s{i}", identity=Identity(model="agent"), outcome=Outcome(passed=i % 4 != 0))
...                 for i in range(200)])
>>> config = JudgeConfig(model="fake", prompt="PASS or FAIL?", endpoint="fake", replicates=3,
...                      target={"sensitivity": 0.97, "specificity": 0.6, "seed": 1})
>>> result = judge(led, config)
>>> result.judged, result.stored, round(result.pass_rate, 3)
(200, 200, 0.845)
>>> draw = judge_audit_draw(led, config.digest[:12], os.path.join(tempfile.mkdtemp(), "audit.jsonl"), size=60)
>>> draw.size, draw.population
(60, 200)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, UsageError
from ..format import fmt_interval, fmt_points
from ._document import Column, Table, blank, line, note
from ._result import Result


def _find_judge(ledger, selector: str):
    """The stored judge configuration a digest prefix (or its model name, when unique) names."""
    from ..judging import JUDGE_KIND, JudgeConfig
    from ._select import require_runs

    require_runs(ledger)
    docs = ledger.documents(JUDGE_KIND)
    found = [d for d in docs if d.digest.startswith(selector)] or \
            [d for d in docs if d.body.get("model") == selector]
    if not found:
        raise UsageError(f"no judge {selector!r} in this ledger; judge the runs first (fluke judge run JUDGE.yaml)")
    if len({d.digest for d in found}) > 1:
        raise UsageError(f"{selector!r} names {len(found)} judges: give more of the digest "
                         f"({', '.join(d.digest[:12] for d in found[:5])})")
    return JudgeConfig.model_validate(found[0].body)


def stratum_of(run, by: str | None) -> str:
    """The audit stratum of a run: ``scenario``, ``family`` (the scenario up to its first ``/``),
    ``version`` (each version its own stratum: the audit then corrects and compares versions),
    ``condition.KEY``, or one stratum for all (None).

    >>> from fluke.record import Run
    >>> run = Run(scenario="airline/12", condition={"lang": "fr"})
    >>> stratum_of(run, "family"), stratum_of(run, "condition.lang"), stratum_of(run, None)
    ('airline', 'fr', 'all')
    """
    if not by:
        return "all"
    if by == "scenario":
        return run.scenario
    if by == "family":
        return run.scenario.split("/", 1)[0]
    if by == "version":
        return f"{run.identity.version[:12]} ({run.identity.label()})"
    if by.startswith("condition."):
        return str(run.condition.get(by[len("condition."):]))
    raise UsageError(f"--strata {by!r}: give scenario, family, version or condition.KEY")


@dataclass(frozen=True)
class JudgeRunResult(Result):
    """Runs labelled by a judge: how many, how many stored now, the judge's pass rate and, with
    K ≥ 2 replicates, how often the judge disagreed with itself."""

    kind = "judge"
    digest: str
    model: str
    replicates: int
    judged: int
    stored: int
    pass_rate: float
    unknown: int
    consistency: Any = None
    version: str | None = None

    def payload(self) -> dict[str, Any]:
        return {"judge": self.digest, "model": self.model, "replicates": self.replicates, "judged": self.judged,
                "stored": self.stored, "judge_pass_rate": None if math.isnan(self.pass_rate) else self.pass_rate,
                "unknown": self.unknown, "self_consistency": self.consistency.to_dict() if self.consistency else None,
                "judged_version": self.version}

    def blocks(self) -> list:
        out = [line(f"judge {self.digest[:12]} ({self.model}, K = {self.replicates}): {self.judged} runs judged, "
                    f"{self.stored} judgments stored now; judge pass rate {100 * self.pass_rate:.1f}%", style="bold")]
        if self.unknown:
            out.append(line(f"{self.unknown} runs got no verdict (the judge said neither pass nor fail, or tied "
                            "under tie: unknown)"))
        if self.consistency is not None:
            c = self.consistency
            out.append(line(f"self-consistency over K = {c.replicates}: runs whose label flips {c.flips}; "
                            f"Krippendorff's alpha {c.alpha}; Fleiss' kappa {c.fleiss}"))
        if self.version:
            out.append(line(f"judged runs recorded as version {self.version[:12]} (grader = this judge)"))
        out.append(blank())
        out.append(note("The judge saw each run without its identity, condition, tags or outcome. Its pass rate "
                        "is what the judge says, not what people would: audit it (fluke judge audit)."))
        return out


def judge(ledger, config, *, version: str | None = None, scenario: str | None = None, judge_obj: Any = None,
          record: bool = False) -> JudgeRunResult:
    """Judge every run of ``version`` (every run when None) with ``config``; store the judgments.

    ``judge_obj`` overrides the judge the configuration declares (a Python object with ``label``);
    a ``fake`` judge takes the runs' recorded outcomes as its truth. With ``record``, the judged
    copies are ingested as their own version (grader = the judge), for ``compare`` and ``gate``.
    """
    from ..judging import judge_runs, make_judge, self_consistency
    from ._select import require_runs

    require_runs(ledger)
    wanted = ledger.resolve_version(version) if version else None
    runs = [r for r in ledger.runs(version=wanted, scenario=scenario)
            if not (isinstance(r.identity.grader, dict) and "judge" in r.identity.grader)]
    if not runs:
        raise UsageError("no unjudged runs match; check --version and --scenario")
    if judge_obj is None:
        truth = {r.hash: bool(r.outcome.passed) for r in runs if r.outcome.passed is not None} \
            if config.endpoint == "fake" else None
        judge_obj = make_judge(config, truth)
    result = judge_runs(runs, config, judge_obj, ledger=ledger)
    labels = [j.label for j in result.judgments]
    known = [x for x in labels if x is not None]
    consistency = self_consistency(result.replicate_matrix()) if config.replicates >= 2 else None
    judged_version = None
    if record:
        judged = result.judged_runs()
        ledger.ingest(judged)
        judged_version = judged[0].identity.version
    return JudgeRunResult(config.digest, config.model, config.replicates, len(runs), result.stored,
                          sum(known) / len(known) if known else math.nan, len(labels) - len(known), consistency,
                          judged_version)


def _judged(ledger, config, strata: str | None) -> tuple[dict[str, dict], dict[str, str], dict[str, Any]]:
    """The stored judgments of a judge, each judged run's stratum, and the runs by hash."""
    stored = ledger.grades(config.digest)
    runs = {r.hash: r for r in ledger.runs() if r.hash in stored}
    return stored, {h: stratum_of(r, strata) for h, r in runs.items()}, runs


@dataclass(frozen=True)
class AuditDrawResult(Result):
    """A blinded sample written for people to label."""

    kind = "judge_audit_draw"
    digest: str
    path: str
    size: int
    population: int
    strata: dict[str, int]
    width: float | None

    def payload(self) -> dict[str, Any]:
        return {"judge": self.digest, "path": self.path, "size": self.size, "population": self.population,
                "strata": self.strata, "target_width": self.width}

    def blocks(self) -> list:
        why = f" (a human-only 95% interval about {100 * self.width:.0f} points wide at worst)" if self.width else ""
        out = [line(f"{self.size} of {self.population} judged runs drawn for people to label{why}: {self.path}",
                    style="bold")]
        if len(self.strata) > 1:
            out.append(Table("sample by stratum", [Column("stratum", key=True), Column("runs", "right")],
                             [[s, str(n)] for s, n in sorted(self.strata.items())], limit=20, more="strata"))
        out.append(note("Each line shows the run without its policy labels or the judge's verdict. Fill label "
                        "with pass or fail, then: fluke judge audit JUDGE --labels FILE."))
        return out


def judge_audit_draw(ledger, judge_sel: str, path: str, *, size: int | None = None, width: float | None = None,
                     strata: str | None = None, seed: int = 0) -> AuditDrawResult:
    """Draw the blinded audit sample of a judge's runs into ``path`` (JSON lines), ``size`` runs or
    as many as a human-only interval of full ``width`` needs; stratified by ``strata``. The draw
    is kept in the ledger (document ``judge_audit``) with its seed, so it can be shown to be random."""
    from ..judging import blind_view, labels_for_width
    from ..judging._audit import draw_sample, write_sample

    config = _find_judge(ledger, judge_sel)
    stored, by_stratum, runs = _judged(ledger, config, strata)
    if not by_stratum:
        raise UsageError(f"judge {config.digest[:12]} has judged no stored run; nothing to draw")
    if size is None:
        if width is None:
            raise UsageError("give --size N or --width W (the full width of the interval to reach, e.g. 0.1)")
        size = labels_for_width(width)
    chosen = draw_sample(by_stratum, size, seed=seed)
    if os.path.exists(path):
        raise UsageError(f"{path} exists; the audit sample is never written over (give another path)")
    rows = [{"run": h, "stratum": by_stratum[h], "view": blind_view(runs[h])} for h in chosen]
    tmp = path + ".part"
    with open(tmp, "w", encoding="utf-8") as handle:
        write_sample(handle, rows)
    os.replace(tmp, path)
    counts: dict[str, int] = {}
    for h in chosen:
        counts[by_stratum[h]] = counts.get(by_stratum[h], 0) + 1
    ledger.put_document("judge_audit", {"judge": config.digest, "runs": chosen, "seed": seed, "strata": strata})
    return AuditDrawResult(config.digest, path, len(chosen), len(by_stratum), counts, width)


@dataclass(frozen=True)
class AuditResult(Result):
    """A judge against people: agreement, self-consistency, and the corrected pass rate beside the
    judge-only and human-only ones; and whether the judge has earned the right to gate."""

    kind = "judge_audit"
    digest: str
    model: str
    labelled: int
    population: int
    corrected: Any
    human: Any
    judge_only: Any
    agreement: Any
    consistency: Any
    gate_status: str
    gate_reason: str
    labels_needed: int | None
    floor: dict
    strata: str | None
    notes: tuple[str, ...] = field(default=())
    by_stratum: tuple = ()      # (stratum, corrected rate) for each stratum, when strata are declared
    differences: tuple = ()     # (version, baseline version, corrected difference), with --strata version

    def payload(self) -> dict[str, Any]:
        return {"judge": self.digest, "model": self.model, "labelled": self.labelled, "population": self.population,
                "corrected": self.corrected.to_dict(), "human_only": self.human.to_dict(),
                "judge_only": self.judge_only.to_dict(), "agreement": self.agreement.to_dict(),
                "self_consistency": self.consistency.to_dict() if self.consistency else None,
                "may_gate": {"status": self.gate_status, "reason": self.gate_reason,
                             "labels_needed": self.labels_needed, "floor": self.floor},
                "strata": self.strata,
                "by_stratum": [{"stratum": s, **e.to_dict()} for s, e in self.by_stratum],
                "differences": [{"version": v, "baseline": b, **e.to_dict()} for v, b, e in self.differences]}

    def blocks(self) -> list:
        def rate(est) -> str:
            if math.isnan(est.value):
                return "too small to tell"
            return f"{100 * est.value:.1f}% {fmt_interval(est.low, est.high, percent=True)}"

        a = self.agreement
        out: list = [line(f"judge {self.digest[:12]} ({self.model}) audited on {self.labelled} human labels of "
                          f"{self.population} judged runs", style="bold"),
                     Table("pass rate", [Column("estimate", key=True), Column("rate", "right"),
                                         Column("width", "right"), Column("rests on")],
                           [["corrected (PPI++)", rate(self.corrected), f"{100 * self.corrected.width:.1f}",
                             self.corrected.method + ("" if self.corrected.lam is None
                                                      else f", lambda {self.corrected.lam:.2f}")],
                            ["human labels only", rate(self.human), f"{100 * self.human.width:.1f}", self.human.method],
                            ["judge only", rate(self.judge_only), f"{100 * self.judge_only.width:.1f}",
                             self.judge_only.method]], limit=None),
                     line(f"agreement with people: Cohen's kappa {a.kappa} at a human pass rate of "
                          f"{100 * a.human_rate:.1f}% (judge {100 * a.judge_rate:.1f}%); raw agreement {a.agreement}; "
                          f"judge bias {a.bias_points} points"),
                     Table("confusion (judge x people)", [Column("judge", key=True), Column("people pass", "right"),
                                                          Column("people fail", "right")],
                           [["pass", str(a.confusion["judge_pass_human_pass"]),
                             str(a.confusion["judge_pass_human_fail"])],
                            ["fail", str(a.confusion["judge_fail_human_pass"]),
                             str(a.confusion["judge_fail_human_fail"])]], limit=None)]
        if self.by_stratum:
            out.append(Table(f"corrected pass rate by {self.strata}", [Column(self.strata or "stratum", key=True),
                                                                      Column("rate", "right"),
                                                                      Column("labels", "right")],
                             [[s, rate(e), str(e.labelled)] for s, e in self.by_stratum], limit=20, more="strata"))
        for v, b, d in self.differences:
            if math.isnan(d.value):
                word = "too small to tell (too few labels)"
            else:
                word = (f"{fmt_points(d.value)} {fmt_interval(100 * d.low, 100 * d.high, digits=1, signed=True)}"
                        + (" (too small to tell apart)" if d.low <= 0 <= d.high else ""))
            out.append(line(f"corrected difference {v} minus {b}: {word}"))
        if self.consistency is not None:
            c = self.consistency
            out.append(line(f"self-consistency over K = {c.replicates}: runs whose label flips {c.flips}; "
                            f"Krippendorff's alpha {c.alpha}"))
        needed = f"; about {self.labels_needed} labels would settle it" if self.labels_needed else ""
        out.append(line(f"may this judge gate? {self.gate_status}: {self.gate_reason}{needed}",
                        style="good" if self.gate_status == "holds" else "warn"))
        out.append(blank())
        out.append(note(f"Conditional on: the labelled runs being a random sample of the judged ones"
                        f"{' within each ' + self.strata + ' stratum' if self.strata else ''}; the people's labels "
                        "being right; runs independent. Undefined figures are too small to tell, not agreement."))
        out += [note(n) for n in self.notes]
        return out


def judge_audit(ledger, judge_sel: str, labels_path: str, *, strata: str | None = None,
                kappa: float = 0.6, flips: float = 0.1, min_labels: int = 50) -> AuditResult:
    """Read people's labels of a judge's runs (``labels_path``: the audit sample filled in, or a CSV
    of run, label) and report the corrected pass rate, agreement and whether the judge may gate."""
    from ..judging._audit import read_labels

    config = _find_judge(ledger, judge_sel)
    try:
        with open(labels_path, encoding="utf-8") as handle:
            labels = read_labels(handle, labels_path)
    except OSError as exc:
        raise InputError(labels_path, None, None, f"cannot read the labels ({exc.strerror})") from None
    result = audit_labels(ledger, config, labels, labels_path, strata=strata, kappa=kappa, flips=flips,
                          min_labels=min_labels)
    # kept, so the report can show the audit without the file (a document per distinct set of labels)
    ledger.put_document(LABELS_KIND, {"judge": config.digest, "source": os.path.basename(labels_path),
                                      "labels": dict(sorted(labels.items()))})
    return result


#: The ledger document kind of the people's labels an audit read.
LABELS_KIND = "judge_labels"


def audit_labels(ledger, config, labels: dict[str, bool], labels_path: str, *, strata: str | None = None,
                 kappa: float = 0.6, flips: float = 0.1, min_labels: int = 50) -> AuditResult:
    """:func:`judge_audit` on labels already read (``labels_path`` names where they came from)."""
    from ..judging import human_agreement, human_only, judge_only, ppi_mean, ppi_stratified, self_consistency
    from ..judging._audit import Floor, earned

    stored, by_stratum, _ = _judged(ledger, config, strata)
    notes = []
    outside = [h for h in labels if h not in stored]
    if outside:
        raise InputError(labels_path, None, "run", f"{len(outside)} labelled runs were not judged by judge "
                         f"{config.digest[:12]} (first: {outside[0][:12]})")
    drawn = {h for d in ledger.documents("judge_audit") if d.body.get("judge") == config.digest
             for h in d.body.get("runs", ())}
    undrawn = sum(h not in drawn for h in labels)
    if undrawn:
        notes.append(f"{undrawn} of the {len(labels)} labelled runs were not drawn by fluke judge audit --draw; the "
                     "correction assumes they are a random sample of the judged runs")
    verdict = {h: b["label"] for h, b in stored.items()}
    unknown = [h for h, v in verdict.items() if v is None]
    if unknown:
        notes.append(f"{len(unknown)} judged runs without a verdict are left out of the rates")
    known = {h: v for h, v in verdict.items() if v is not None}
    lab = sorted(h for h in labels if h in known)
    if len(lab) < 2:
        raise UsageError(f"{labels_path}: only {len(lab)} labelled runs with a judge verdict; label the audit sample")
    groups: dict[str, tuple[list, list, list]] = {}
    for h, v in sorted(known.items()):
        g = groups.setdefault(by_stratum[h], ([], [], []))
        if h in labels:
            g[0].append(labels[h])
            g[1].append(float(v))
        else:
            g[2].append(float(v))
    if len(groups) == 1:
        y, f, fu = next(iter(groups.values()))
        corrected = ppi_mean(y, f, fu)
    else:
        corrected = ppi_stratified(groups)
    by_stratum = tuple((name, ppi_mean(*groups[name])) for name in sorted(groups)) if strata else ()
    differences = ()
    if strata == "version" and len(by_stratum) > 1:
        from ..judging._ppi import ppi_difference

        base_name, base = by_stratum[0]
        differences = tuple((name, base_name, ppi_difference(est, base)) for name, est in by_stratum[1:])
    human = human_only([labels[h] for h in lab], unlabelled=len(known) - len(lab))
    jonly = judge_only([float(v) for v in known.values()])
    agreement = human_agreement([bool(known[h]) for h in lab], [labels[h] for h in lab])
    consistency = self_consistency([stored[h]["labels"] for h in sorted(stored)]) if config.replicates >= 2 else None
    from ..judging import Estimate

    flips_est = consistency.flips if consistency else Estimate(math.nan, math.nan, math.nan, 0, "")
    floor = Floor(kappa, flips, min_labels)
    status, reason, needed = earned(floor, agreement.kappa, flips_est)
    return AuditResult(config.digest, config.model, len(lab), len(known), corrected, human, jonly, agreement,
                       consistency, status, reason, needed, floor.to_dict(), strata, tuple(notes), by_stratum,
                       differences)


def claim_judge(ledger, section: dict[str, Any]) -> Any:
    """The gate's ``judge`` check: the named judge has earned the right to gate, against the
    people's labels in ``section["labels"]`` and the floor the section declares. Anything short of
    that is *too small to tell*, with the labels that would settle it where more labels could.

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> from fluke.record import Identity, Outcome, Run
    >>> from fluke.judging import JudgeConfig
    >>> folder = tempfile.mkdtemp()
    >>> led = open_ledger(os.path.join(folder, "c.db"))
    >>> runs = [Run(scenario=f"s{i}", identity=Identity(model="a"), outcome=Outcome(passed=i % 2 == 0))
    ...         for i in range(100)]
    >>> _ = led.ingest(runs)
    >>> _ = judge(led, JudgeConfig(model="j", prompt="p", endpoint="fake", replicates=2,
    ...                            target={"sensitivity": 1.0, "specificity": 1.0}))
    >>> path = os.path.join(folder, "labels.csv")
    >>> _ = open(path, "w").write("run,label\\n" + "".join(f"{r.hash},{r.outcome.passed}\\n" for r in runs[:20]))
    >>> c = claim_judge(led, {"judge": "j", "labels": path, "kappa": 0.6, "flips": 0.1, "min_labels": 50})
    >>> c.status, c.runs_needed
    ('too small to tell', 50.0)
    """
    from ._claims import HOLDS, TOO_SMALL, Claim

    selector = section["judge"]
    asked = (f"judge {selector} agrees with people (kappa's lower end >= {section['kappa']}, at most "
             f"{100 * section['flips']:.0f}% of runs flipping, >= {int(section['min_labels'])} labels)")
    if not section.get("labels"):
        return Claim("judge", asked, TOO_SMALL, "no human labels given (judge.labels)", f"judge {selector}",
                     ("too small to tell: draw a sample with fluke judge audit JUDGE --draw FILE and label it",),
                     runs_needed=float(section["min_labels"]), needed_unit="human labels")
    audit = judge_audit(ledger, selector, section["labels"], strata=section.get("strata"), kappa=section["kappa"],
                        flips=section["flips"], min_labels=int(section["min_labels"]))
    rests = (f"judge {audit.digest[:12]} ({audit.model}); {audit.labelled} human labels of {audit.population} "
             f"judged runs, a random sample; Cohen's kappa at a human pass rate of "
             f"{100 * audit.agreement.human_rate:.1f}%")
    if audit.gate_status == HOLDS:
        return Claim("judge", asked, HOLDS, audit.gate_reason, rests)
    why = audit.gate_reason + ("" if audit.labels_needed else "; more labels would not settle it: a better judge "
                               "(or people labelling every run) would")
    needed = float(audit.labels_needed) if audit.labels_needed else None
    return Claim("judge", asked, TOO_SMALL, why, rests, (f"too small to tell: {why}",), runs_needed=needed,
                 needed_unit="human labels")


@dataclass(frozen=True)
class ImportResult(Result):
    """Judgments another tool made, stored as an imported judge's."""

    kind = "judge_import"
    digest: str
    name: str
    source: str
    imported: int
    unmatched: int
    pass_rate: float

    def payload(self) -> dict[str, Any]:
        return {"judge": self.digest, "name": self.name, "source": self.source, "imported": self.imported,
                "unmatched": self.unmatched, "judge_pass_rate": None if math.isnan(self.pass_rate) else self.pass_rate}

    def blocks(self) -> list:
        out = [line(f"imported judge {self.digest[:12]} ({self.name}): {self.imported} judgments from {self.source}; "
                    f"judge pass rate {100 * self.pass_rate:.1f}%", style="bold")]
        if self.unmatched:
            out.append(line(f"{self.unmatched} judged records match no stored run (ingest those runs first)"))
        out.append(note("Read, not re-judged: audit it like any judge (fluke judge audit "
                        f"{self.digest[:12]} --draw FILE)."))
        return out


def import_judgments(ledger, path: str, *, name: str, input_format: str | None = None,
                     options: dict[str, Any] | None = None, version: str | None = None) -> ImportResult:
    """Store the verdicts another tool made as an imported judge's (one replicate per run).

    ``path`` is a CSV of run hash and label (as :func:`fluke.judging._audit.read_labels` reads),
    or any file a fluke reader reads (an Inspect log, with ``options={"score": "scorer"}`` to choose
    the scorer): its runs' outcomes are the verdicts, matched to the stored runs by scenario and
    trial (within ``version`` when given). The judge's digest covers ``name``, the source's
    grader and the file's SHA-256, so another scorer or another file is another judge.
    """
    import hashlib

    from ..adapters._registry import read_file
    from ..judging import JudgeConfig
    from ..judging._audit import read_labels
    from ._select import require_runs

    require_runs(ledger)
    try:
        with open(path, "rb") as handle:
            sha = hashlib.sha256(handle.read()).hexdigest()
    except OSError as exc:
        raise InputError(path, None, None, f"cannot read the judgments ({exc.strerror})") from None
    wanted = ledger.resolve_version(version) if version else None
    stored = [r for r in ledger.runs(version=wanted)
              if not (isinstance(r.identity.grader, dict) and "judge" in r.identity.grader)]
    grader: Any = None
    if path.lower().endswith(".csv"):
        with open(path, encoding="utf-8") as handle:
            verdicts = read_labels(handle, path)
        known = {r.hash for r in stored}
        matched = {h: v for h, v in verdicts.items() if h in known}
        unmatched = len(verdicts) - len(matched)
    else:
        by_key: dict[tuple[str, int], list[str]] = {}
        for r in stored:
            by_key.setdefault((r.scenario, r.trial), []).append(r.hash)
        matched, unmatched = {}, 0
        for run in read_file(path, format=input_format, options=options):
            grader = run.identity.grader
            hashes = by_key.get((run.scenario, run.trial), [])
            if len(hashes) > 1:
                raise UsageError(f"{path}: {run.scenario} trial {run.trial} matches {len(hashes)} stored runs; "
                                 "name the version they belong to (--version)")
            if not hashes or run.outcome.passed is None:
                unmatched += 1
                continue
            matched[hashes[0]] = bool(run.outcome.passed)
    config = JudgeConfig(model=name, endpoint="imported", prompt=f"judgments imported from {os.path.basename(path)}",
                         target={"file_sha256": sha, "grader": grader, "options": dict(options or {})})
    ledger.put_document("judge", config.model_dump(mode="json"))
    rows = [(h, {"run": h, "labels": [v], "label": v, "judge": config.digest}) for h, v in sorted(matched.items())]
    ledger.put_grades(config.digest, rows)
    rate = sum(matched.values()) / len(matched) if matched else math.nan
    return ImportResult(config.digest, name, path, len(matched), unmatched, rate)


@dataclass(frozen=True)
class PairwiseResult(Result):
    """Two versions judged side by side on the same scenarios, in balanced order: who won, and how
    much the judge favoured the first slot (which the balanced order keeps out of the verdict)."""

    kind = "judge_pairs"
    digest: str
    a: str
    b: str
    pairs: int
    a_wins: int
    b_wins: int
    ties: int
    share: Any          # Estimate: the share of decided judgments that preferred a
    first_slot: Any     # Estimate: the share of decided judgments that chose the first slot
    balanced: bool

    def payload(self) -> dict[str, Any]:
        return {"judge": self.digest, "a": self.a, "b": self.b, "pairs": self.pairs, "a_wins": self.a_wins,
                "b_wins": self.b_wins, "ties": self.ties, "a_share": self.share.to_dict(),
                "first_slot_share": self.first_slot.to_dict(), "balanced": self.balanced}

    def blocks(self) -> list:
        s, p = self.share, self.first_slot
        if not s.defined:
            verdict = "too small to tell (no decided judgment)"
        elif s.low > 0.5 or s.high < 0.5:
            verdict = f"{self.a if s.value > 0.5 else self.b} preferred"
        else:
            verdict = "too small to tell apart"
        out = [line(f"judge {self.digest[:12]} on {self.pairs} pairs: {self.a} {self.a_wins}, {self.b} {self.b_wins}, "
                    f"ties {self.ties}; share preferring {self.a} {s}: {verdict}", style="bold"),
               line(f"positional bias: share of decided judgments choosing the first slot {p}"
                    + (" (the judge favours a slot; the balanced order keeps it out of the verdict)"
                       if p.defined and not p.low <= 0.5 <= p.high else ""))]
        if not self.balanced:
            out.append(line("order NOT balanced: the first slot's advantage is in the verdict", style="warn"))
        out.append(note("Pairs are the two versions' runs of the same scenario, condition and trial; each pair is "
                        "shown with either side first in turn, blinded (no identity, condition or outcome)."))
        return out


def judge_pairwise(ledger, config, a_sel: str, b_sel: str, *, judge_obj: Any = None,
                   balance: bool = True) -> PairwiseResult:
    """Judge version ``a_sel`` against ``b_sel`` pair by pair (same scenario, condition, trial),
    ``config.replicates`` times each in balanced order; store each pair's verdict under the judge's
    digest (keyed by a's run) and report the winner beside the judge's positional bias.

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> from fluke.record import Identity, Outcome, Run
    >>> from fluke.judging import JudgeConfig
    >>> led = open_ledger(os.path.join(tempfile.mkdtemp(), "p.db"))
    >>> _ = led.ingest([Run(scenario=f"s{i}", identity=Identity(model=m), outcome=Outcome(passed=(m == "a") or i % 2))
    ...                 for m in ("a", "b") for i in range(60)])
    >>> cfg = JudgeConfig(model="fake", prompt="FIRST or SECOND?", endpoint="fake", pairwise=True, replicates=2,
    ...                   target={"first_slot": 0.3})
    >>> r = judge_pairwise(led, cfg, "model=a", "model=b")
    >>> r.pairs, r.a_wins > r.b_wins, r.first_slot.low > 0.5
    (60, True, True)
    """
    from ..judging import judge_pairs, make_judge, positional_bias, wilson
    from ..judging import Estimate
    from ._select import require_runs, version_label

    require_runs(ledger)
    va, vb = ledger.resolve_version(a_sel), ledger.resolve_version(b_sel)

    def keyed(version: str) -> dict[tuple, Any]:
        return {(r.scenario, r.condition_key(), r.trial): r for r in ledger.runs(version=version)}

    ra, rb = keyed(va), keyed(vb)
    common = sorted(set(ra) & set(rb))
    if not common:
        raise UsageError(f"{a_sel} and {b_sel} share no scenario, condition and trial to pair")
    pairs = [(ra[k], rb[k]) for k in common]
    if judge_obj is None:
        truth = {r.hash: bool(r.outcome.passed) for p in pairs for r in p if r.outcome.passed is not None} \
            if config.endpoint == "fake" else None
        judge_obj = make_judge(config, truth)
    ledger.put_document("judge", config.model_dump(mode="json"))
    verdicts = judge_pairs(pairs, config, judge_obj, balance=balance)
    ledger.put_grades(config.digest, [(v.a, {"against": v.b, "a_wins": v.a_wins, "b_wins": v.b_wins, "ties": v.ties,
                                             "slots": v.slots, "balanced": balance, "judge": config.digest})
                                      for v in verdicts])
    a_wins, b_wins = sum(v.a_wins for v in verdicts), sum(v.b_wins for v in verdicts)
    ties = sum(v.ties for v in verdicts)
    decided = a_wins + b_wins
    low, high = wilson(a_wins, decided)
    share = Estimate(a_wins / decided if decided else math.nan, low, high, decided,
                     "share of decided judgments preferring a, Wilson interval")
    return PairwiseResult(config.digest, version_label(ledger, va), version_label(ledger, vb), len(pairs), a_wins,
                          b_wins, ties, share, positional_bias(verdicts), balance)
