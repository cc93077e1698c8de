"""``report`` and ``demo``: write the self-contained HTML report, and say in the terminal what it shows.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> folder = tempfile.mkdtemp()
>>> ledger = open_ledger(os.path.join(folder, "r.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True))
...                    for t in range(5)])
>>> result = report(ledger, out=os.path.join(folder, "r.html"))
>>> "100.0% (5/5) runs passed" in result.render(), os.path.exists(result.path)
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..format import fluke_command, fmt_interval, fmt_is, fmt_prob, fmt_share, natural_key
from ._document import Column, Span, Table, line, note
from ._result import Result
from ._select import EmptyLedger, check_level, require_runs


def _summary_blocks(data) -> list:
    """The terminal summary of a report's data: the boards' worst rows, the suite questions, luck, comparison."""
    from ..report import SECTIONS

    out: list = [line(Span(f"warning: {w}", "warn")) for w in data.warnings]
    out += [line(Span(f"{c.question} ", "dim"), Span(c.answer, "bold")) for c in data.headline or []]
    if data.leaderboard is not None:
        lb = data.leaderboard
        out.append(Table(f"leaderboard: {len(lb.rows)} versions on {lb.strata} strata, best first",
                         [Column("rank", "right"), Column("version", key=True), Column("pass rate", "right"),
                          Column("interval", "right"), Column("rank interval", "right"), Column("group")],
                         [[str(r.rank), r.label, f"{r.rate:.1f} ({r.passes}/{r.trials})", f"{r.low:.1f}–{r.high:.1f}",
                           f"{r.rank_low}–{r.rank_high}", r.group or "—"] for r in lb.rows],
                         limit=10, more="versions"))
    if data.decision is not None:
        d = data.decision
        out.append(line("decision: ", Span(f"{d.choice_label} has the least expected loss under {d.table}" if d.choice
                                           else f"none ({d.reason})", "bold"),
                        "" if d.p_wrong is None else f"; {fmt_is('P(wrong choice)', d.p_wrong)}"))
        for r in d.rows:
            cost = ("no cost recorded" if r.cost_per_success is None
                    else f"{r.cost_per_success:.4f} per success")
            hard = "" if r.hard_upper is None else f", {r.hard} hard failures (at most {100 * r.hard_upper:.1f}%)"
            out.append(line(f"  {r.label}: {fmt_share(r.passes, r.runs)} passed, {cost}{hard}"))
    if data.paired is not None:
        p = data.paired
        out.append(line(f"paired, {p.label_b} against {p.label_a}: "
                        + ", ".join(f"{n} {move}" for move, n in p.counts.items())))
    for board in data.suite_board or []:
        k = sum(r.successes for r in board.rows)
        n = sum(r.trials for r in board.rows)
        clear = sum(r.p_above_bar >= 0.95 for r in board.rows)
        rows = sorted(board.rows, key=lambda r: (r.p_above_bar, r.mean, natural_key(r.scenario)))
        out.append(Table(
            f"{board.label} ({board.version[:12]}): {fmt_share(k, n)} runs passed; {clear} of {len(board.rows)} "
            f"scenario cells clear {board.bar:g} with P ≥ 0.95",
            [Column("scenario", key=True), Column("passed", "right"), Column("mean", "right"),
             Column("interval", "right"), Column(f"P(θ > {board.bar:g})", "right")],
            [[r.scenario + (f" [{r.condition}]" if r.condition else ""), fmt_share(r.successes, r.trials),
              f"{r.mean:.3f}", fmt_interval(r.lo, r.hi), fmt_prob(r.p_above_bar)] for r in rows],
            limit=5, more="scenario cells", notes=(f"lowest by P(θ > {board.bar:g}); prior Beta(1, 1), "
                                                   f"{board.level:.0%} credible interval",)))
    for block in data.suite_questions or []:
        for q in block.questions:
            out.append(line(f"{block.label}: {q.name}: ", Span(q.display, "bold")))
    for luck in data.luck or []:
        if luck.pooled is None:
            continue
        p = luck.pooled
        interval = "" if p.lo is None else f" {fmt_interval(p.lo, p.hi, percent=True)}"
        out.append(line(f"luck rate, {luck.label}, pooled: {fmt_share(p.lucky, p.green)} of green runs had a path "
                        f"that broke spec {luck.spec}{interval}"))
    if data.comparison is not None:
        c = data.comparison
        if c.verdict is not None:
            out.append(line("comparison: ", Span(c.verdict, "bold"), f" ({fmt_is('p', c.pvalue, kind='p')}); "
                            f"{c.limit_text}"))
            labels = c.step_labels or [None] * len(c.steps)
            for j, (step, q) in enumerate(zip(c.steps, c.qvalues or [], strict=False)):
                if q is not None and q < c.alpha:
                    where = f" ({labels[j]})" if labels[j] else ""
                    out.append(line(f"  step {step}{where}: deaths differ between the arms, "
                                    f"{fmt_is('q', q, kind='p')}"))
            out.append(note("a difference between two stored runs is a difference between those runs"))
        for arm in c.arms:
            top = sorted(((d, s) for s, d in zip(c.steps, arm.deaths, strict=True) if d), reverse=True)[:3]
            where = ", ".join(f"step {s}: {d}" for d, s in top) or "none"
            out.append(line(f"deaths by step, {arm.label}: {sum(arm.deaths)} of {arm.runs} runs died; most at {where}"))
    out.append(Table("report sections", [Column("section"), Column("status", key=True)],
                     [[name.replace("_", " "), Span("shown", "good") if getattr(data, name) is not None
                       else Span(f"not computed: {data.missing.get(name, 'no data')}", "dim")] for name in SECTIONS],
                     limit=None))
    return out


@dataclass(frozen=True)
class ReportResult(Result):
    """The report written to ``path``; its data (redacted) is what ``--json`` prints."""

    kind = "report"
    data: Any
    path: Path

    def payload(self) -> dict[str, Any]:
        return {**self.data.model_dump(mode="json"), "html": str(self.path)}

    def blocks(self) -> list:
        size = self.path.stat().st_size / 1024 if self.path.exists() else 0
        return _summary_blocks(self.data) + [line("report written to ", Span(str(self.path), "bold"),
                                                  f" ({size:.0f} KB); open it in a browser, no network needed")]


def _versions(ledger, selectors: Sequence[str]) -> list[str] | None:
    if not selectors:
        return None
    chosen: list[str] = []
    for selector in selectors:
        found = ledger.select_versions(selector)
        if not found:
            ledger.resolve_version(selector)  # raises, listing what the ledger holds
        chosen.extend(v for v in found if v not in chosen)
    return chosen


#: What the report's explorer holds of one run of about 20 events (a parsed run: 40–120 KB).
REPORT_BYTES = 48_000

#: Page section → the function that lays out the JSON document of the verb answering it.
EXTRA_SECTIONS = {"calibration": "calibration_section", "contrasts": "contrast_section",
                  "null_calibration": "null_section", "decision": "decision_section"}


def _specs(ledger, spec_digest: str | None) -> list:
    """The stored specs to look for grades under: the one ``spec_digest`` names, else all, newest first."""
    from ..errors import SelectorError

    docs = ledger.documents("spec")
    if spec_digest is None:
        return list(reversed(docs))
    found = [d for d in docs if d.digest.startswith(spec_digest)]
    if len(found) != 1:
        held = ", ".join(d.digest[:12] for d in docs) or "none"
        raise SelectorError(f"--spec-digest {spec_digest}: {'no' if not found else len(found)} stored specs "
                            f"match; the ledger holds {held}")
    return found


@dataclass
class _Grades:
    """What the grades give the page: ``fluke grade``'s result per graded version, the versions left
    ungraded, the spec (loaded; None: no grades), its digest when stored, and the reason for none."""

    results: dict
    ungraded: list
    spec: Any = None
    stored: str | None = None
    why: str = ""


def _grades(ledger, chosen: Sequence[str], scan, spec: str | None, docs: Sequence[Any]) -> _Grades:
    """Each version graded by :func:`fluke.analysis.grade`: against ``spec`` when given (nothing is
    stored), else under the newest stored spec whose grades cover a selected version whole; a
    version its grades do not cover whole is ungraded, never graded anew behind the user's back."""
    from ..grading import load_spec
    from ._grade import grade

    if spec is not None:
        loaded = load_spec(spec)
        return _Grades({v: grade(ledger, spec, version=v, rows=0, store=False) for v in chosen}, [], loaded)
    for doc in docs:
        counted = scan.covered[doc.digest]
        whole = [v for v in chosen if scan.tally.runs.get(v) and counted.get(v, 0) == scan.tally.runs[v]]
        if not whole:
            continue
        loaded = load_spec(doc.body)
        return _Grades({v: grade(ledger, loaded, version=v, rows=0, store=False, reuse=True) for v in whole},
                       [v for v in chosen if v not in whole], loaded, doc.digest)
    how = fluke_command(ledger, "grade", "--spec", "SPEC")
    return _Grades({}, list(chosen), why="no grades stored in the ledger for the selected versions (pass --spec "
                                         f"SPEC, or grade the runs first with: {how})")


def _compared(ledger, data, labels, grades: _Grades, *, spec, alpha, power, ceiling, hazard_ceiling):
    """``data`` with ``fluke compare``'s answer for its two versions (or the reason there is none)."""
    from ..errors import FlukeError
    from ._compare import compare
    from ._report_page import comparison_section

    a, b = (v.version for v in data.versions)
    try:
        found = compare(ledger, a, b, spec=spec, alpha=alpha, power=power, ceiling=ceiling,
                        hazard_ceiling=hazard_ceiling, record=False)
    except FlukeError as exc:
        return data.model_copy(update={"missing": {**data.missing, "comparison": f"not compared: {exc}"}})
    section = comparison_section(found.to_dict(), labels)
    if spec is None and grades.stored is not None:
        name = grades.spec.name or grades.stored[:12]
        lacking = [labels[v] for v in grades.ungraded]
        why = (f"{' and '.join(lacking)} {'is' if len(lacking) == 1 else 'are'} ungraded under it" if lacking else
               "pass --spec to let a failed run die at its first hard violation, as fluke compare --spec does")
        section = section.model_copy(update={"note": (section.note + " " if section.note else "") + (
            f"The grades stored under spec {name} ({grades.stored[:12]}) are not used for where runs die: {why}.")})
    return data.model_copy(update={"comparison": section})


def _with_leaderboard(ledger, data, *, alpha: float, power: float, ceiling: float):
    """``data`` with ``fluke leaderboard``'s standings of its versions (three or more), or the reason it has none."""
    from ..errors import FlukeError
    from ._leaderboard import leaderboard
    from ._report_page import leaderboard_section

    try:
        found = leaderboard(ledger, [v.version for v in data.versions], alpha=alpha, power=power, ceiling=ceiling,
                            costs=False)
    except FlukeError as exc:
        return data.model_copy(update={"missing": {**data.missing, "leaderboard": f"not ranked: {exc}"}})
    missing = {k: v for k, v in data.missing.items() if k != "leaderboard"}
    return data.model_copy(update={"leaderboard": leaderboard_section(found.to_dict()), "missing": missing})


def _with_interventions(ledger, data, chosen: Sequence[str], labels: Mapping[str, str]):
    """``data`` with the stored interventions touching ``chosen`` beside its comparison, if any."""
    from ._report_page import intervention_section

    section = intervention_section(ledger, chosen, labels, data.comparison)
    if section is None:
        return data
    return data.model_copy(update={"interventions": section,
                                   "missing": {k: v for k, v in data.missing.items() if k != "interventions"}})


def report(ledger, *, out: str | Path = "fluke-report.html", versions: Sequence[str] = (), bar: float = 0.9,
           level: float = 0.95, max_runs: int = 1000, title: str | None = None, spec: str | None = None,
           alpha: float = 0.05, power: float = 0.8, ceiling: float = 5.0,
           hazard_ceiling: float = 1.3, spec_digest: str | None = None, family_prefix: str = "",
           extras: Mapping[str, Result] | None = None, space: Any = None, floor: float = 0.5,
           prob: float = 0.9) -> ReportResult:
    """Write the HTML report of ``versions`` (selectors; default all) to ``out`` and return its summary.

    The page draws what the verbs answer, each section from one verb's JSON document: the suite
    boards and questions are :func:`~fluke.analysis.believe`'s, the comparison of two versions
    :func:`~fluke.analysis.compare`'s (with ``spec``, as ``compare --spec``), the luck rate of
    each graded version :func:`~fluke.analysis.grade`'s, and the standings of three or more
    :func:`~fluke.analysis.leaderboard`'s. ``extras`` maps ``"calibration"``, ``"contrasts"`` or
    ``"null_calibration"`` to the result of ``calibration``, ``contrast`` or ``calibrate``.

    Grades: with ``spec`` the runs are graded against it (nothing is stored); without, the grades
    ``fluke grade`` stored are used, under ``spec_digest`` (a prefix) or else the newest stored
    spec whose grades cover a selected version whole; a version they do not cover is named as
    ungraded. When most tools the runs call are unknown to the spec, the page says so first.

    With ``space`` (a condition space: a YAML path, mapping or :class:`fluke.boundary.Space`) the
    boundary chart is :func:`~fluke.analysis.boundary`'s for each version: every point of the space
    with its region (works, uncertain, fails at ``bar``, ``floor`` and ``prob``; named but not run),
    its colour, and the recorded incidents at never-named conditions.

    One pass over the runs (:func:`fluke.analysis.scan_runs`) counts the rest (deaths by step of
    one version, the boundary chart, the families boards group by) and keeps at most ``max_runs``
    whole for the run explorer. Boards over 50 cells group the rest by the family tag their
    scenarios declare: the first tag starting with ``family_prefix``."""
    from ..report import headline_from, redacted_fields, write_redacted
    from . import _report_page as page
    from ._believe import believe
    from ._report_collect import frame
    from ._report_scan import TALLY_BYTES, explorer, scan_runs, stored_violations

    for value, name in ((bar, "bar"), (level, "level"), (alpha, "alpha"), (power, "power")):
        check_level(value, name)
    infos = require_runs(ledger)
    chosen = _versions(ledger, versions) or [i.version for i in infos]
    if ledger.count(version=chosen) == 0:
        raise EmptyLedger("no runs to report on")
    path = Path(out)
    if not path.parent.exists():
        from ..errors import UsageError

        raise UsageError(f"--out {out}: the folder {path.parent} does not exist (create it first)")
    if spec is not None and spec_digest is not None:
        from ..errors import UsageError

        raise UsageError("give --spec (grade now) or --spec-digest (use stored grades), not both")
    from ._budget import check_budget

    total = ledger.count(version=chosen)
    check_budget(total, "report", TALLY_BYTES, extra=min(total, max_runs) * (REPORT_BYTES - TALLY_BYTES),
                 hint="report on fewer versions (--version), show fewer runs in the explorer (--max-runs), or ask "
                      "the question directly with compare, believe or passk, which read counts or one reduction "
                      f"per run; the versions are listed by: {fluke_command(ledger, 'summary')}")
    known = {i.version: i for i in infos}
    labels = {v: known[v].label() if v in known else v[:12] for v in chosen}
    docs = _specs(ledger, spec_digest) if spec is None else []
    scan = scan_runs(ledger, chosen, digests=[d.digest for d in docs], max_runs=max_runs)
    believed = [believe(ledger, version=v, bar=bar, level=level).to_dict() for v in chosen if scan.tally.runs.get(v)]
    data = frame(ledger, chosen, labels, scan.tally, None, [page.board_section(d) for d in believed], title=title,
                 family_prefix=family_prefix)
    questions = [page.questions_section(d) for d in believed]
    del believed    # the verbs' documents, a row per scenario cell: drawn now, so not held to the end
    if space is not None:
        from ._boundary import boundary as chart_space

        charted = [page.boundary_section(chart_space(ledger, space=space, version=v, bar=bar, floor=floor,
                                                     prob=prob).to_dict()) for v in chosen if scan.tally.runs.get(v)]
        data = data.model_copy(update={"boundary": charted or None,
                                       "missing": {k: m for k, m in data.missing.items() if k != "boundary"}})
        del charted
    grades = _grades(ledger, chosen, scan, spec, docs)
    shown = explorer(ledger, scan, labels, spec=grades.spec if spec is not None else None,
                     violations=stored_violations(ledger, grades.stored) if grades.stored else None)
    scan.picked.clear()     # the explorer's runs are flattened now: their stored bodies are no longer needed
    del scan                # nor the pass's tallies (a row per version × scenario cell and step)
    missing = {k: v for k, v in data.missing.items() if k != "suite_questions"}
    warnings = list(dict.fromkeys(w for g in grades.results.values() if (w := g.vocabulary_warning)))
    luck = [page.luck_section(g.to_dict(), v) for v, g in grades.results.items() if v in g.luck]
    if grades.results and grades.ungraded:
        name = grades.spec.name or (grades.stored or "")[:12]
        missing["luck"] = (f"shown for the graded versions only: {', '.join(labels[v] for v in grades.ungraded)} "
                           f"{'has' if len(grades.ungraded) == 1 else 'have'} no grades under spec {name}")
    elif not grades.results:
        missing["luck"] = grades.why
    else:
        missing.pop("luck", None)
    data = data.model_copy(update={
        "suite_questions": questions or None, "luck": luck or None,
        "explorer": shown if shown.total else None, "warnings": warnings, "missing": missing})
    # only ``data`` holds the sections from here on, so that the copy ``redacted`` makes below
    # replaces them rather than sitting beside them while the page is written
    del shown, questions, luck
    if len(chosen) == 2:
        data = _compared(ledger, data, labels, grades, spec=spec, alpha=alpha, power=power, ceiling=ceiling,
                         hazard_ceiling=hazard_ceiling)
    del grades
    if len(chosen) >= 3:
        data = _with_leaderboard(ledger, data, alpha=alpha, power=power, ceiling=ceiling)
    data = _with_interventions(ledger, data, chosen, labels)
    from ._report_judges import judges_section

    judges = judges_section(ledger, chosen)
    if judges is not None:
        data = data.model_copy(update={"judges": judges})
    for name, result in (extras or {}).items():
        if name not in EXTRA_SECTIONS:
            from ..errors import UsageError

            raise UsageError(f"extras: {name!r} is not one of {', '.join(EXTRA_SECTIONS)}")
        section = getattr(page, EXTRA_SECTIONS[name])(result.to_dict())
        if section is not None:
            data = data.model_copy(update={name: section,
                                           "missing": {k: v for k, v in data.missing.items() if k != name}})
    data = data.model_copy(update={"headline": headline_from(data)})
    fields = dict(data)
    del data    # ``fields`` holds the only reference to each section: redacted a section at a time, in its place
    data = redacted_fields(fields)
    tmp = path.with_name(path.name + ".part")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:    # a section at a time: the page is never held whole
            write_redacted(data, fh)
        tmp.replace(path)  # nothing half-written: the report appears whole or not at all
    finally:
        tmp.unlink(missing_ok=True)
    return ReportResult(data, path)
