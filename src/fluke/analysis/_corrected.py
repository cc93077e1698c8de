"""Comparisons on corrected rates: ``compare``, ``leaderboard`` and ``gate`` on pass rates a judge
gave every run and people checked on a random few (PPI++ per version, :mod:`fluke.judging`).

A judge's own pass rate inherits its bias: a lenient judge passes some of a weak version's
failures and shrinks the gap between a good version and a weak one. Each version's rate here is
the judge's rate corrected by the human labels of that version's runs, with its interval; the
difference of two versions is the difference of two independent corrected estimates (separate
runs, separate labels), its standard error from theirs, and its verdict by the comparison's one
rule (:func:`fluke.comparison._verdict.verdict_of`): *different* when the test rejects, *no
significant difference* only when the labels could have seen a change of the ceiling, else *too
small to tell*. Every answer names what it rests on: the judge's digest, the labels file and how
many labels each version had, and the correction.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> from fluke.judging import JudgeConfig
>>> from ._judge import judge
>>> folder = tempfile.mkdtemp()
>>> led = open_ledger(os.path.join(folder, "c.db"))
>>> runs = [Run(scenario=f"s{i}", identity=Identity(model=m), outcome=Outcome(passed=i % 10 < (8 if m == "a" else 5)))
...         for m in ("a", "b") for i in range(300)]
>>> _ = led.ingest(runs)
>>> cfg = JudgeConfig(model="lenient", prompt="PASS or FAIL?", endpoint="fake",
...                   target={"sensitivity": 0.95, "specificity": 0.6, "seed": 3})
>>> _ = judge(led, cfg)
>>> labels = os.path.join(folder, "labels.csv")
>>> _ = open(labels, "w").write("run,label\\n" + "".join(f"{r.hash},{r.outcome.passed}\\n" for r in runs[::3]))
>>> result = compare_corrected(led, "model=a", "model=b", judge="lenient", labels=labels)
>>> result.verdict, result.a.corrected.labelled, result.b.corrected.labelled
('different', 100, 100)
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import InputError, UsageError
from ..format import fmt_interval, fmt_is, fmt_p, fmt_points, plural
from ._document import Column, Table, blank, line, note
from ._result import Result

CORRECTION = "PPI++ per version (lambda tuned per version)"


@dataclass(frozen=True)
class CorrectedBasis:
    """What a corrected rate rests on: the judge, the people's labels, the correction."""

    judge: str
    model: str
    labels: str
    labels_sha256: str
    labelled: int
    method: str
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "judge_model": self.model, "labels": self.labels,
                "labels_sha256": self.labels_sha256, "labelled": self.labelled, "correction": self.method,
                "notes": list(self.notes)}

    def text(self) -> str:
        return (f"pass rates corrected for judge {self.judge[:12]} ({self.model}) by "
                f"{plural(self.labelled, 'human label')} ({self.labels}, sha256 {self.labels_sha256[:12]}); "
                f"{self.method}; the labelled runs a random sample of each version's judged runs, the people right")


@dataclass(frozen=True)
class CorrectedArm:
    """One version's corrected rate beside its judge-only rate."""

    selector: str
    version: str
    label: str
    corrected: Any      # RateEstimate
    judge_only: Any     # RateEstimate
    judged: int
    unjudged: int

    def to_dict(self) -> dict[str, Any]:
        return {"selector": self.selector, "version": self.version, "label": self.label,
                "corrected": self.corrected.to_dict(), "judge_only": self.judge_only.to_dict(),
                "judged": self.judged, "unjudged": self.unjudged}


def _rate(est) -> str:
    if math.isnan(est.value):
        return "too small to tell"
    return f"{100 * est.value:.1f}% {fmt_interval(est.low, est.high, percent=True)}"


def corrected_arms(ledger, judge_sel: str, labels_path: str, selectors: Sequence[str], *,
                   guard: bool = True) -> tuple[list[CorrectedArm], CorrectedBasis]:
    """Each selected version's PPI++-corrected pass rate: the judge's verdicts (stored by ``fluke
    judge run``) on every judged run of the version, corrected by the people's labels
    (``labels_path``: the filled audit sample, or a CSV of run, label) of that version's runs.
    ``guard=False`` gives ppi-python's plain normal interval (the oracle tests use it)."""
    from ..judging import judge_only, ppi_mean
    from ..judging._audit import read_labels
    from ._judge import _find_judge
    from ._select import version_label

    config = _find_judge(ledger, judge_sel)
    try:
        with open(labels_path, "rb") as handle:
            raw = handle.read()
        with open(labels_path, encoding="utf-8") as handle:
            labels = read_labels(handle, labels_path)
    except OSError as exc:
        raise InputError(labels_path, None, None, f"cannot read the labels ({exc.strerror})") from None
    stored = ledger.grades(config.digest)
    arms, used, notes = [], 0, []
    for selector in selectors:
        version = ledger.resolve_version(selector)
        hashes = [r.hash for r in ledger.runs(version=version)]
        verdicts = {h: stored[h]["label"] for h in hashes if h in stored and stored[h].get("label") is not None}
        unjudged = len(hashes) - sum(h in stored for h in hashes)
        if not verdicts:
            raise UsageError(f"judge {config.digest[:12]} has judged no run of {selector}; judge them first "
                             f"(fluke judge run JUDGE.yaml --version {selector})")
        if unjudged:
            notes.append(f"{unjudged} runs of {selector} were not judged: its rate is over the {len(verdicts)} "
                         "judged ones")
        lab = sorted(h for h in verdicts if h in labels)
        rest = [float(v) for h, v in sorted(verdicts.items()) if h not in labels]
        est = ppi_mean([labels[h] for h in lab], [float(verdicts[h]) for h in lab], rest, guard=guard)
        used += len(lab)
        arms.append(CorrectedArm(selector, version, version_label(ledger, version), est,
                                 judge_only([float(v) for v in verdicts.values()]), len(verdicts), unjudged))
    unused = len(labels) - used
    if unused:
        notes.append(f"{unused} of the {len(labels)} labels are of runs outside these versions' judged runs "
                     "(left out)")
    method = CORRECTION + (", t interval with small-sample guard" if guard else ", normal interval")
    basis = CorrectedBasis(config.digest, config.model, labels_path, hashlib.sha256(raw).hexdigest(), used, method,
                           tuple(notes))
    return arms, basis


@dataclass(frozen=True)
class CorrectedDifference:
    """B − A on corrected rates: the difference, its interval, the test and the detection limit."""

    value: float
    low: float
    high: float
    se: float
    pvalue: float
    limit: float        # points the labels could have detected at the given power
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        def clean(x: float) -> float | None:
            return None if x is None or math.isnan(x) else float(x)

        return {"value": clean(self.value), "low": clean(self.low), "high": clean(self.high), "se": clean(self.se),
                "pvalue": clean(self.pvalue), "detection_limit_points": clean(self.limit), "verdict": self.verdict}

    def text(self) -> str:
        if math.isnan(self.value):
            return "too small to tell (too few labels in a version)"
        interval = fmt_interval(100 * self.low, 100 * self.high, digits=1)
        return f"{self.verdict}: B − A = {fmt_points(self.value)} {interval}"


def corrected_difference(a, b, *, alpha: float = 0.05, power: float = 0.8, ceiling: float = 5.0) -> CorrectedDifference:
    """``b − a`` of two independent corrected rates (:class:`fluke.judging.RateEstimate` with ``se``):
    the normal interval at 1 − α, the two-sided p-value, the detection limit in points at ``power``
    and the verdict by the comparison's rule (``ceiling`` in points).

    >>> from fluke.judging import RateEstimate
    >>> d = corrected_difference(RateEstimate(0.8, 0, 0, "", 100, 200, se=0.03), RateEstimate(0.6, 0, 0, "", 100, 200,
    ...                          se=0.04))
    >>> round(d.value, 3), round(d.se, 3), round(d.limit, 1), d.verdict
    (-0.2, 0.05, 14.0, 'different')
    """
    from scipy import special

    from ..comparison._verdict import TOO_SMALL, detection_z, verdict_of

    if any(x is None or math.isnan(x) for x in (a.value, b.value, a.se, b.se)):
        nan = math.nan
        return CorrectedDifference(nan, nan, nan, nan, nan, nan, TOO_SMALL)
    se = math.sqrt(a.se ** 2 + b.se ** 2)
    value = b.value - a.value
    half = float(special.ndtri(1 - alpha / 2)) * se
    pvalue = float(2 * special.ndtr(-abs(value) / se)) if se > 0 else (1.0 if value == 0 else 0.0)
    limit = 100 * detection_z(alpha, power) * se
    return CorrectedDifference(value, value - half, value + half, se, pvalue, limit,
                               verdict_of(pvalue, limit, alpha=alpha, ceiling=ceiling))


def _arm_table(arms: Sequence[CorrectedArm], title: str, *, ranked: bool = False) -> Table:
    first = Column("rank", "right") if ranked else Column("arm")
    cols = [first, Column("version", key=True), Column("corrected (PPI++)", "right"), Column("labels", "right"),
            Column("judged", "right"), Column("judge only", "right")]
    rows = [[str(i + 1) if ranked else f"{'AB'[i]} {a.selector}", a.label, _rate(a.corrected),
             str(a.corrected.labelled), str(a.judged), _rate(a.judge_only)] for i, a in enumerate(arms)]
    return Table(title, cols, rows, limit=None)


@dataclass(frozen=True)
class CorrectedComparison(Result):
    """B against A on PPI-corrected pass rates."""

    kind = "corrected_comparison"
    a: CorrectedArm
    b: CorrectedArm
    difference: CorrectedDifference
    alpha: float
    power: float
    ceiling: float
    basis: CorrectedBasis

    @property
    def verdict(self) -> str:
        return self.difference.verdict

    def payload(self) -> dict[str, Any]:
        return {"a": self.a.to_dict(), "b": self.b.to_dict(), "difference": self.difference.to_dict(),
                "verdict": self.verdict, "alpha": self.alpha, "power": self.power, "ceiling": self.ceiling,
                "rate": "corrected", "rests_on": self.basis.to_dict(), "conditional_on": self.basis.text()}

    def blocks(self) -> list:
        d = self.difference
        out = [line(d.text(), style="bold"),
               line(f"on PPI-corrected pass rates: judge {self.basis.judge[:12]} ({self.basis.model}) on every run, "
                    f"corrected by {plural(self.basis.labelled, 'human label')}")]
        if not math.isnan(d.value):
            out.append(line(f"normal test on the difference of two independent corrected rates "
                            f"{fmt_is('p', d.pvalue, kind='p')}; detection limit: the labels could have detected "
                            f"{d.limit:.1f} points at power {self.power:g}, α = {self.alpha:g} (ceiling "
                            f"{self.ceiling:g} points)"))
        out += [_arm_table([self.a, self.b], "pass rate per arm (A first)"), blank(),
                note(f"Conditional on: {self.basis.text()}."),
                note("The judge-only rates inherit the judge's bias and are shown to be compared, not trusted; "
                     "more labels narrow the corrected interval (fluke judge audit JUDGE --draw FILE)."),
                *(note(n) for n in self.basis.notes)]
        return out


def compare_corrected(ledger, a: str, b: str, *, judge: str, labels: str, alpha: float = 0.05, power: float = 0.8,
                      ceiling: float = 5.0, guard: bool = True) -> CorrectedComparison:
    """Compare version ``b`` against ``a`` on their PPI-corrected pass rates under ``judge`` (a digest
    prefix or model name) and the human ``labels`` file (see the module docstring)."""
    from ..comparison._verdict import check_level

    check_level(alpha, "alpha")
    check_level(power, "power")
    arms, basis = corrected_arms(ledger, judge, labels, [a, b], guard=guard)
    if arms[0].version == arms[1].version:
        raise UsageError(f"{a} and {b} name the same version")
    diff = corrected_difference(arms[0].corrected, arms[1].corrected, alpha=alpha, power=power, ceiling=ceiling)
    return CorrectedComparison(arms[0], arms[1], diff, alpha, power, ceiling, basis)


@dataclass(frozen=True)
class CorrectedLeaderboard(Result):
    """Every version on PPI-corrected pass rates, best first, each pair tested (Holm across pairs)."""

    kind = "corrected_leaderboard"
    arms: tuple[CorrectedArm, ...]
    pairs: tuple[tuple[str, str, CorrectedDifference, float], ...]     # (A, B, B − A, Holm-adjusted p)
    alpha: float
    power: float
    ceiling: float
    basis: CorrectedBasis

    def payload(self) -> dict[str, Any]:
        return {"versions": [dict(a.to_dict(), rank=i + 1) for i, a in enumerate(self.arms)],
                "pairs": [{"a": x, "b": y, **d.to_dict(), "adjusted_pvalue": None if math.isnan(q) else q}
                          for x, y, d, q in self.pairs],
                "correction": "holm", "alpha": self.alpha, "power": self.power, "ceiling": self.ceiling,
                "rate": "corrected", "rests_on": self.basis.to_dict(), "conditional_on": self.basis.text()}

    def blocks(self) -> list:
        out = [line(f"{len(self.arms)} versions on PPI-corrected pass rates (judge {self.basis.judge[:12]}, "
                    f"{plural(self.basis.labelled, 'human label')})", style="bold"),
               _arm_table(self.arms, "corrected pass rate per version, best first", ranked=True)]
        rows = [[x, y, fmt_points(d.value), "—" if math.isnan(d.low) else
                 fmt_interval(100 * d.low, 100 * d.high, digits=1), fmt_p(d.pvalue), fmt_p(q),
                 "—" if math.isnan(d.limit) else f"{d.limit:.1f}", d.verdict] for x, y, d, q in self.pairs]
        out.append(Table(f"pairs, B − A in points, Holm across {plural(len(self.pairs), 'pair')}",
                         [Column("A", key=True), Column("B"), Column("B − A", "right"), Column("95% interval", "right"),
                          Column("p", "right"), Column("adjusted", "right"), Column("limit", "right"),
                          Column("verdict")], rows, limit=None))
        out += [blank(), note(f"Conditional on: {self.basis.text()}; each pair a normal test on the difference of "
                              f"two independent corrected rates, Holm across pairs at α = {self.alpha:g}, detection "
                              f"limit at α/{max(1, len(self.pairs))} and power {self.power:g}."),
                *(note(n) for n in self.basis.notes)]
        return out


def leaderboard_corrected(ledger, versions: Sequence[str], *, judge: str, labels: str, alpha: float = 0.05,
                          power: float = 0.8, ceiling: float = 5.0, guard: bool = True) -> CorrectedLeaderboard:
    """The versions ``versions`` names (every version the judge judged, when empty) on their
    corrected rates, best first; every pair tested, Holm across pairs."""
    import numpy as np

    from ..comparison._leaderboard import holm_adjust
    from ..comparison._verdict import verdict_of
    from ._judge import _find_judge

    if not versions:
        config = _find_judge(ledger, judge)
        judged = set(ledger.grades(config.digest))
        versions = sorted({r.identity.version for r in ledger.runs() if r.hash in judged})
    if len(versions) < 2:
        raise UsageError("a corrected leaderboard needs two versions or more, judged by the judge")
    arms, basis = corrected_arms(ledger, judge, labels, list(versions), guard=guard)
    arms.sort(key=lambda a: (-(a.corrected.value if not math.isnan(a.corrected.value) else -1), a.label))
    m = len(arms) * (len(arms) - 1) // 2
    raw = [(x, y, corrected_difference(x.corrected, y.corrected, alpha=alpha / m, power=power, ceiling=ceiling))
           for i, x in enumerate(arms) for y in arms[i + 1:]]
    adjusted = holm_adjust(np.array([d.pvalue for _, _, d in raw]))
    pairs = []
    for (x, y, d), q in zip(raw, adjusted, strict=True):
        verdict = verdict_of(q, d.limit, alpha=alpha, ceiling=ceiling) if not math.isnan(d.value) else d.verdict
        pairs.append((x.label, y.label, CorrectedDifference(d.value, d.low, d.high, d.se, d.pvalue, d.limit, verdict),
                      float(q)))
    return CorrectedLeaderboard(tuple(arms), tuple(pairs), alpha, power, ceiling, basis)


def claim_not_worse_corrected(ledger, baseline: str, *, version: str, judge: str, labels: str,
                              margin: float | None = None, alpha: float = 0.05, power: float = 0.8) -> Any:
    """The gate's ``compare`` check on corrected rates: ``version`` is not worse than ``baseline``
    when their corrected difference is *no significant difference* (the labels could have seen
    ``margin``) or in the version's favour; fails on a difference against it; too small to tell
    otherwise, with the labels per version that would settle it."""
    from ._claims import FAILS, HOLDS, TOO_SMALL, Claim
    from ._verdict_reading import compare_options
    from ._select import version_label

    ceiling = compare_options(margin).get("ceiling", 5.0)
    result = compare_corrected(ledger, baseline, version[:16], judge=judge, labels=labels, alpha=alpha, power=power,
                               ceiling=ceiling)
    d = result.difference
    if d.verdict == "different":
        status = FAILS if d.value < 0 else HOLDS
    else:
        status = HOLDS if d.verdict == "no significant difference" else TOO_SMALL
    found = d.text() + " on PPI-corrected pass rates"
    needed = None
    if status == TOO_SMALL and not math.isnan(d.limit):
        labelled = max(result.a.corrected.labelled, result.b.corrected.labelled)
        needed = float(math.ceil(labelled * (d.limit / ceiling) ** 2))
    said = found if found.startswith(status) else f"{status}: {found}"
    rests = (f"A = {result.a.selector}: {result.a.label}, B = version {result.b.label}; {result.basis.text()}; "
             f"{result.a.corrected.labelled} and {result.b.corrected.labelled} labels")
    limit = None if math.isnan(d.limit) else (f"the labels could have detected {d.limit:.1f} points "
                                              f"(ceiling {ceiling:g})")
    return Claim("not_worse_than", f"version {version_label(ledger, version)} is not worse than {baseline} "
                 "(corrected rates)", status, found, rests, () if status == HOLDS else (said,),
                 needed, limit=limit, version=version, needed_unit="human labels per version")
