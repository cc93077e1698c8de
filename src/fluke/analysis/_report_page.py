"""The report's sections, each read off the JSON document of the verb that answers it.

The page shows what the verbs print: a suite board is ``fluke believe --json``, the comparison
``fluke compare --json``, a luck rate one version of ``fluke grade --json``'s ``luck``, the
leaderboard ``fluke leaderboard --json``, and the demo's extra sections ``fluke calibration``,
``fluke contrast`` and ``fluke calibrate``. Each function here takes that document (a verb's
``to_dict()``) and only moves its numbers into the page's layout types; nothing is computed.

>>> doc = {"pairs": 4, "false_alarms": 1, "alpha": 0.05, "histogram": [1, 1, 1, 1], "interval": [0.01, 0.7],
...        "conditional_on": "4 unchanged pairs"}
>>> section = null_section(doc)
>>> section.histogram, section.false_alarms, section.pairs
([1, 1, 1, 1], 1, 4)
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..format import fmt_p, fmt_points, fmt_points_interval, natural_key
from ..policies import UnknownPolicy
from ..report._model import (
    InterventionRow,
    InterventionSection,
    Boundary,
    BoundaryCell,
    Calibration,
    CalibrationBin,
    Comparison,
    DeathArm,
    DecisionRow,
    DecisionSection,
    Forest,
    ForestRow,
    LeaderboardSection,
    LeaderRow,
    LuckCase,
    LuckSection,
    NeverNamed,
    NullSection,
    ScenarioPosterior,
    SuiteBoard,
    SuiteQuestion,
    SuiteQuestions,
)

_BETA = re.compile(r"Beta\(([0-9.eE+-]+), ([0-9.eE+-]+)\)")


def _label(doc_label: str) -> str:
    """``"3f2a9c1b0d4e (gpt-4o)"`` → ``"gpt-4o"`` (believe prints the hash beside the label)."""
    return doc_label.split(" (", 1)[-1][:-1] if doc_label.endswith(")") and " (" in doc_label else doc_label


def board_section(doc: Mapping[str, Any]) -> SuiteBoard:
    """A suite board from ``fluke believe --json``: one row per scenario cell, as believe lists them.

    >>> doc = {"version": "ab" * 32, "label": "abababababab (m)", "bar": 0.9, "level": 0.95, "prior": "uniform",
    ...        "unknowns": 0, "unknown_policy": "fail", "scenarios": [{"scenario": "s", "condition": "",
    ...        "passes": 5, "trials": 5, "mean": 6 / 7, "interval": [0.6, 0.99], "p_above": 0.47,
    ...        "prior": "uniform Beta(1, 1)"}]}
    >>> board = board_section(doc)
    >>> board.label, board.prior, board.rows[0].successes, board.rows[0].p_above_bar
    ('m', (1.0, 1.0), 5, 0.47)
    """
    version, label, bar, level = doc["version"], _label(doc["label"]), float(doc["bar"]), float(doc["level"])
    rows = [ScenarioPosterior(scenario=c["scenario"], condition=c["condition"], successes=int(c["passes"]),
                              trials=int(c["trials"]), mean=float(c["mean"]), lo=float(c["interval"][0]),
                              hi=float(c["interval"][1]), p_above_bar=float(c["p_above"])) for c in doc["scenarios"]]
    priors = {c["prior"] for c in doc["scenarios"]}
    found = _BETA.search(next(iter(priors))) if len(priors) == 1 else None
    prior = (float(found.group(1)), float(found.group(2))) if found else (1.0, 1.0)
    prior_text = next(iter(priors)) if len(priors) == 1 else f"{doc['prior']} (per cell)"
    return SuiteBoard(version=version, label=label, bar=bar, level=level, prior=prior, rows=rows, conditional_on=(
        f"version {version[:12]} ({label}); prior {prior_text}, nothing carried from other versions; "
        f"{level:.0%} equal-tailed credible intervals; bar {bar:g}; runs exchangeable within a scenario cell; "
        f"{UnknownPolicy.of(doc['unknown_policy']).describe(int(doc['unknowns']))} (--unknown {doc['unknown_policy']}, "
        "as in fluke believe)"))


def questions_section(doc: Mapping[str, Any]) -> SuiteQuestions:
    """The suite questions from ``fluke believe --json``'s ``suite`` (its intervals are 90%).

    >>> doc = {"version": "ab" * 32, "label": "abababababab (m)", "bar": 0.9, "prior": "uniform", "suite": {
    ...     "scenarios": 2, "average_mean": 0.5, "average_sd": 0.1, "expected_below": 1.5, "below_interval": [1, 2],
    ...     "p_all_clear": 0.01, "expected_failures": 1.0, "failures_interval": [0, 2]}}
    >>> [q.display for q in questions_section(doc).questions]
    ['0.500 (sd 0.100)', '1.5 of 2 expected (90%: 1–2)', '0.010', '1.0 of 2 expected (90%: 0–2)']
    """
    s, bar, label, version = doc["suite"], float(doc["bar"]), _label(doc["label"]), doc["version"]
    n = int(s["scenarios"])
    cond = f"version {version[:12]} ({label}); {doc['prior']} prior per scenario; bar {bar:g}"
    (below_lo, below_hi), (fail_lo, fail_hi) = s["below_interval"], s["failures_interval"]
    questions = [
        SuiteQuestion(name="average pass rate", value=float(s["average_mean"]),
                      display=f"{s['average_mean']:.3f} (sd {s['average_sd']:.3f})",
                      conditional_on=f"{cond}; scenarios weighted equally"),
        SuiteQuestion(name=f"scenarios below the bar {bar:g}", value=float(s["expected_below"]),
                      display=f"{s['expected_below']:.1f} of {n} expected (90%: {below_lo}–{below_hi})",
                      conditional_on=cond),
        SuiteQuestion(name=f"P(every scenario clears {bar:g})", value=float(s["p_all_clear"]),
                      display=fmt_p(float(s["p_all_clear"])), conditional_on=f"{cond}; scenarios independent"),
        SuiteQuestion(name="failures in the next full execution", value=float(s["expected_failures"]),
                      display=f"{s['expected_failures']:.1f} of {n} expected (90%: {fail_lo}–{fail_hi})",
                      conditional_on=f"{cond}; one run per scenario"),
    ]
    return SuiteQuestions(version=version, label=label, questions=questions)


def _number(value: Any) -> float:
    """A JSON number, null (NaN or infinity in the result) as infinity."""
    return math.inf if value is None else float(value)


def comparison_section(doc: Mapping[str, Any], labels: Mapping[str, str]) -> Comparison:
    """Two arms from ``fluke compare --json``: the pass-rate verdict, detection limit and interval,
    and the deaths per step of where runs die (only the runs whose failure step is known, as
    compare counts them; none when that analysis was skipped)."""
    where = doc["where"]
    rows = sorted(where["steps"]["steps"], key=lambda r: r["step"]) if not where["skipped"] else []
    arms = []
    for side in ("a", "b"):
        version = doc[side]["versions"][0]
        arms.append(DeathArm(label=labels.get(version, version[:12]), version=version, runs=int(doc[side]["compared"]),
                             deaths=[int(r[f"deaths_{side}"]) for r in rows]))
    died = ", ".join(f"{n} at {cause}" for cause, n in doc["died_from"].items() if n)
    basis = (f"where: skipped ({where['reason']})" if where["skipped"] else
             f"deaths per step over runs whose failure step is known ({died or 'none'}), as fluke compare "
             + ("--spec grades them" if doc.get("spec") else "reads them (no spec: a recorded died_at or a failed "
                                                             "tool call)"))
    lo, hi = doc["interval_points"]
    needed = doc.get("runs_needed_per_arm")
    note = (f"To resolve a difference of {doc['ceiling']:g} points, about {int(needed)} runs per arm would be "
            "needed." if needed and doc["verdict"] == "too small to tell" else "")
    return Comparison(
        arms=arms, steps=[int(r["step"]) for r in rows],
        qvalues=[None if r["qvalue"] is None else float(r["qvalue"]) for r in rows] if rows else None,
        step_labels=[r.get("label") for r in rows] if rows else None, verdict=doc["verdict"],
        pvalue=_number(doc["pvalue"]), detection_limit=_number(doc["detection_limit"]), ceiling=float(doc["ceiling"]),
        limit_text=doc["pass_rates"].get("limit_text") or _limit_text(doc),
        alpha=float(doc["alpha"]), difference=_number(doc["difference_points"]),
        difference_lo=_number(lo), difference_hi=_number(hi),
        difference_level=float(doc["pass_rates"].get("confidence_level", 0.95)),
        passes=[int(doc["a"]["passes"]), int(doc["b"]["passes"])], uninformative=int(doc["uninformative"]),
        where=basis, note=note, conditional_on=f"{doc['conditional_on']}; {basis}")


def _limit_text(doc: Mapping[str, Any]) -> str:
    """compare's wording of the limit, for a stored comparison document written before it kept one."""
    from ..comparison import limit_phrase

    rates = doc["pass_rates"]
    difference = math.nan if doc["difference_points"] is None else float(doc["difference_points"])
    return limit_phrase(doc["verdict"], rates.get("direction"), difference, _number(doc["detection_limit"]),
                        _number(rates.get("improvement_limit")), power=float(doc["power"]),
                        ceiling=float(doc["ceiling"]))


def _case(name: str, rate: Mapping[str, Any]) -> LuckCase:
    interval = rate.get("interval")
    return LuckCase(case=name, green=int(rate["green"]), lucky=int(rate["lucky"]),
                    share=None if rate["statistic"] is None else float(rate["statistic"]),
                    lo=None if interval is None else float(interval[0]),
                    hi=None if interval is None else float(interval[1]))


def luck_section(doc: Mapping[str, Any], version: str) -> LuckSection:
    """One version's luck rate from ``fluke grade --json`` (``doc`` is the whole document).

    >>> rate = {"lucky": 1, "green": 4, "statistic": 0.25, "interval": [0.03, 0.66]}
    >>> doc = {"spec": {"name": "desk", "path": "desk.yaml", "digest": "ab" * 32}, "luck": {"v": {"label": "m",
    ...        "pooled": rate, "cases": {"s": rate}}}}
    >>> luck = luck_section(doc, "v")
    >>> luck.spec, luck.pooled.lucky, luck.pooled.green
    ('desk.yaml', 1, 4)
    """
    entry, spec = doc["luck"][version], doc["spec"]
    pooled = entry["pooled"]
    prior = pooled.get("prior") or {}
    name = spec.get("path") or spec.get("name") or spec["digest"][:12]
    how = (f"sampling unit: the run; {100 * float(pooled.get('level', 0.95)):.0f}% equal-tailed credible interval "
           f"under a Beta({prior.get('alpha', 0.5):g}, {prior.get('beta', 0.5):g}) prior; path ok means no violation "
           "of any severity")
    vocabulary = doc.get("vocabulary") or {}
    return LuckSection(version=version, label=entry.get("label", ""), spec=name, spec_digest=spec["digest"],
                       warning=vocabulary.get("warning") or "",
                       cases=[_case(c, entry["cases"][c]) for c in sorted(entry["cases"], key=natural_key)],
                       pooled=_case("pooled", pooled),
                       conditional_on=f"spec {name} (sha256 {spec['digest'][:12]}); {how}; as fluke grade --json")


def leaderboard_section(doc: Mapping[str, Any]) -> LeaderboardSection:
    """The standings of ``fluke leaderboard --json``, best first, as it lists them."""
    rows = [LeaderRow(label=v["label"], version=v["version"], passes=int(v["passes"]), trials=int(v["trials"]),
                      rate=float(v["rate_points"]), low=float(v["interval_points"][0]),
                      high=float(v["interval_points"][1]), rank=int(v["rank"]), rank_low=int(v["rank_interval"][0]),
                      rank_high=int(v["rank_interval"][1]), p_first=float(v["p_first"]), group=v["group"] or "")
            for v in doc["versions"]]
    return LeaderboardSection(rows=rows, groups=doc["groups"], strata=int(doc["strata"]),
                              scenarios=int(doc["scenarios"]), level=float(doc["confidence_level"]),
                              conditional_on=str(doc["conditional_on"]))


def calibration_section(doc: Mapping[str, Any]) -> Calibration | None:
    """The reliability table of ``fluke calibration --json`` (``overall``); None when nothing was scored."""
    score = doc.get("overall")
    if score is None:
        return None
    bins = [CalibrationBin(lo=float(r["lower"]), hi=float(r["upper"]), mean_forecast=float(r["mean_forecast"]),
                           observed_share=float(r["observed"]), n=int(r["count"])) for r in score["table"]
            if r["count"] > 0]
    return Calibration(bins=bins, brier=float(score["brier"]), baseline_brier=float(score["baseline_brier"]),
                       n=int(score["predictions"]), conditional_on=(
                           f"{doc['scored_runs']} runs scored against the latest of {doc['predictions']} predictions "
                           f"recorded before each; "
                           f"{UnknownPolicy.of(doc['unknown_policy']).describe(int(doc['unknowns']))}; "
                           "as fluke calibration --json"))


def contrast_section(doc: Mapping[str, Any]) -> Forest:
    """The contrasts of ``fluke contrast --json``, each with its interval."""
    return Forest(measure=f"difference in mean {doc['outcome']}", contrasts=[
        ForestRow(label=str(c["name"]), estimate=float(c["statistic"]), lo=float(c["low"]), hi=float(c["high"]))
        for c in doc["contrasts"]], conditional_on=str(doc["conditional_on"]))


def null_section(doc: Mapping[str, Any], *, conditional_on: str | None = None) -> NullSection:
    """The p-value histogram of ``fluke calibrate --json`` (unchanged pairs)."""
    lo, hi = doc["interval"]
    return NullSection(histogram=[int(c) for c in doc["histogram"]], alpha=float(doc["alpha"]),
                       false_alarms=int(doc["false_alarms"]), pairs=int(doc["pairs"]), lo=float(lo), hi=float(hi),
                       conditional_on=conditional_on if conditional_on is not None else str(doc["conditional_on"]))


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def intervention_section(ledger: Any, chosen: Any, labels: Mapping[str, str],
                         comparison: Comparison | None) -> InterventionSection | None:
    """The interventions stored for ``chosen`` (:func:`fluke.replay.stored_interventions`), beside
    the report's observational comparison when it has one; None when none is stored."""
    from ..replay import COUPLINGS, stored_interventions

    found = stored_interventions(ledger, list(chosen))
    if not found:
        return None
    targets = {COUPLINGS[0]: "conditional (coupled draws)", COUPLINGS[1]: "total (fresh continuations)"}
    rows = [InterventionRow(
        description="; ".join(i.describe() for i in s.interventions) or f"intervention {s.digest[:12]}",
        step=s.step, coupling=s.coupling, target=targets[s.coupling], stale=s.stale,
        baseline=labels.get(s.baseline, s.baseline[:12]), intervened=labels.get(s.intervened, s.intervened[:12]),
        baseline_passes=s.baseline_passes[0], baseline_trials=s.baseline_passes[1],
        intervened_passes=s.intervened_passes[0], intervened_trials=s.intervened_passes[1],
        effect=_finite(s.effect.estimate), low=_finite(s.effect.low), high=_finite(s.effect.high),
        level=s.effect.confidence_level, variance_factor=_finite(s.effect.variance_factor), reason=s.effect.reason)
        for s in found]
    observed = None
    if comparison is not None and comparison.difference is not None and math.isfinite(comparison.difference):
        a, b = (arm.label for arm in comparison.arms)
        observed = (f"{b} − {a}: {fmt_points(comparison.difference / 100)} "
                    f"{fmt_points_interval(comparison.difference_lo / 100, comparison.difference_hi / 100)}")
    return InterventionSection(rows=rows, observational=observed)


def boundary_section(doc: Mapping[str, Any]) -> Boundary:
    """The boundary chart of one version over a condition space, from ``fluke boundary --json``.

    Each point is a cell (errors are among its failures there); incidents at never-named conditions
    get a row each."""
    cells = [BoundaryCell(condition=p["point"], works=int(p["completed"]), should_ask=int(p["asked"]),
                          fails=int(p["failed"]), region=p["region"], colour=p["colour"], label=p["label"],
                          p_works=None if p["runs"] == 0 else float(p["p_works"])) for p in doc["points"]]
    never: dict[str, int] = {}
    for inc in (doc.get("incidents") or {}).get("never_named", []):
        key = ",".join(f"{k}={inc['at'][k]}" for k in sorted(inc["at"]))
        never[key] = never.get(key, 0) + 1
    space = doc["space"]
    rule = (f"space {space['name'] + ': ' if space['name'] else ''}{space['size']} points, {doc['run_points']} run; "
            f"works: P(θ > {doc['bar']:g}) ≥ {doc['prob']:g}; fails: P(θ < {doc['floor']:g}) ≥ {doc['prob']:g}; "
            "uncertain otherwise; colours: what the runs did most (completed, asked, failed)")
    return Boundary(version=doc["version"], label=_label(doc["label"]), cells=cells, rule=rule,
                    never_named=[NeverNamed(condition=k, incidents=n) for k, n in sorted(never.items())],
                    conditional_on="; ".join(doc["conditional_on"]))


def _named(label: str) -> str:
    """A decide label ``HASH (name)`` as the page's other sections name a version: by its name.

    >>> _named("86d6e7deb321 (support-desk-v1)"), _named("86d6e7deb321")
    ('support-desk-v1', '86d6e7deb321')
    """
    found = re.fullmatch(r"[0-9a-f]{12} \((.+)\)", label)
    return found.group(1) if found else label


def decision_section(doc: Mapping[str, Any]) -> DecisionSection:
    """Every version's costs, severe failures and expected loss of ``fluke decide --json``, the chosen first."""
    losses = {v["version"]: v for v in doc["decision"]["losses"]}
    choice = doc["decision"]["choice"]
    rows = []
    for v in doc["versions"]:
        c, loss = v["cost_per_success"], losses[v["version"]]
        hard = next((s for s in v["severe"] if s["severity"] == "hard"), None)
        lo, hi = c["interval"]
        llo, lhi = loss["interval"]
        rows.append(DecisionRow(version=v["version"], label=_named(str(v["label"])), passes=int(v["passes"]),
                                runs=int(v["runs"]),
                                cost_per_success=c["estimate"], cost_low=lo, cost_high=hi,
                                unknown_cost=int(c["unknown_cost"]), severe=[s["summary"] for s in v["severe"]],
                                hard=0 if hard is None else int(hard["failures"]),
                                hard_upper=None if hard is None else hard["upper_bound"],
                                expected_loss=loss["expected_loss"], loss_low=llo, loss_high=lhi, p_best=loss["p_best"],
                                eligible=bool(loss["eligible"]), why_not=loss["why_not"]))
    rows.sort(key=lambda r: (r.version != choice, r.expected_loss if r.expected_loss is not None else math.inf))
    label = next((r.label for r in rows if r.version == choice), None)
    return DecisionSection(rows=rows, choice=choice, choice_label=label, p_wrong=doc["decision"]["p_wrong"],
                           reason=doc["decision"]["reason"], table=str(doc["table"]["name"]),
                           conditional_on=str(doc["conditional_on"]))
