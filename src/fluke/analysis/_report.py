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

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..format import fmt_p, fmt_prob, fmt_share, natural_key
from ._document import Column, Span, Table, line, note
from ._result import Result
from ._select import EmptyLedger, check_level, require_runs


def _summary_blocks(data) -> list:
    """The terminal summary of a report's data: the boards' worst rows, the suite questions, luck, comparison."""
    from ..report import SECTIONS

    out: list = [line(Span(f"{c.question} ", "dim"), Span(c.answer, "bold")) for c in data.headline or []]
    if data.leaderboard is not None:
        lb = data.leaderboard
        out.append(Table(f"leaderboard: {len(lb.rows)} versions on {lb.strata} strata, best first",
                         [Column("rank", "right"), Column("version", key=True), Column("pass rate", "right"),
                          Column("interval", "right"), Column("rank interval", "right"), Column("group")],
                         [[str(r.rank), r.label, f"{r.rate:.1f} ({r.passes}/{r.trials})", f"{r.low:.1f}–{r.high:.1f}",
                           f"{r.rank_low}–{r.rank_high}", r.group or "—"] for r in lb.rows],
                         limit=10, more="versions"))
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
              f"{r.mean:.3f}", f"{r.lo:.3f}–{r.hi:.3f}", fmt_prob(r.p_above_bar)] for r in rows],
            limit=5, more="scenario cells", notes=(f"lowest by P(θ > {board.bar:g}); prior Beta(1, 1), "
                                                   f"{board.level:.0%} credible interval",)))
    for block in data.suite_questions or []:
        for q in block.questions:
            out.append(line(f"{block.label}: {q.name}: ", Span(q.display, "bold")))
    if data.luck is not None and data.luck.pooled is not None:
        p = data.luck.pooled
        interval = "" if p.lo is None else f" [{100 * p.lo:.1f}–{100 * p.hi:.1f}%]"
        out.append(line(f"luck rate, pooled: {fmt_share(p.lucky, p.green)} of green runs had a broken path{interval}"))
    if data.comparison is not None:
        c = data.comparison
        if c.verdict is not None:
            limit = f"{c.detection_limit:.1f} points" if math.isfinite(c.detection_limit) else "— (no information)"
            out.append(line("comparison: ", Span(c.verdict, "bold"), f" (p {fmt_p(c.pvalue)}); could not have "
                            f"detected a difference in pass rate below {limit} (ceiling {c.ceiling:g} points)"))
            labels = c.step_labels or [None] * len(c.steps)
            for j, (step, q) in enumerate(zip(c.steps, c.qvalues or [], strict=True)):
                if q is not None and q < c.alpha:
                    where = f" ({labels[j]})" if labels[j] else ""
                    out.append(line(f"  step {step}{where}: deaths differ between the arms, q {fmt_p(q)}"))
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


def _with_leaderboard(ledger, data, *, alpha: float, power: float, ceiling: float):
    """``data`` with the leaderboard of its versions (three or more), or the reason it has none."""
    from ..errors import FlukeError
    from ..report import headline_from, leaderboard_from
    from ._leaderboard import leaderboard

    try:
        found = leaderboard(ledger, [v.version for v in data.versions], alpha=alpha, power=power, ceiling=ceiling,
                            costs=False)
    except FlukeError as exc:
        return data.model_copy(update={"missing": {**data.missing, "leaderboard": f"not ranked: {exc}"}})
    missing = {k: v for k, v in data.missing.items() if k != "leaderboard"}
    data = data.model_copy(update={"leaderboard": leaderboard_from(found), "missing": missing})
    return data.model_copy(update={"headline": headline_from(data)})


def _boards(ledger, chosen, *, bar: float, level: float):
    """The suite board and suite questions of each version, from :func:`fluke.analysis.believe`: the
    report shows the same posteriors ``fluke believe`` prints (uniform prior, this version's runs)."""
    from ..format import describe_unknowns
    from ..report import board_from
    from ._believe import believe
    from ._select import versions as ledger_versions

    boards, suites = [], {}
    for v in (chosen if chosen is not None else [i.version for i in ledger_versions(ledger)]):
        found = believe(ledger, version=v, bar=bar, level=level)
        b = found.b
        cells = [(s, c, int(k), int(n)) for (s, c), k, n in zip(b.cells, b.k, b.n, strict=True)]
        label = b.label.split(" (", 1)[-1][:-1] if b.label.endswith(")") else b.label
        boards.append(board_from(b.belief, cells, version=v, label=label, bar=bar, level=level, conditional_on=(
            f"version {v[:12]} ({label}); prior {b.prior_text[0]}, nothing carried from other versions; "
            f"{level:.0%} equal-tailed credible intervals; bar {bar:g}; runs exchangeable within a scenario "
            f"cell; {describe_unknowns(b.total_unknowns, b.unknown_policy)} "
            f"(--unknown {b.unknown_policy}, as in fluke believe)")))
        suites[v] = found.suite
    return boards, suites


def report(ledger, *, out: str | Path = "fluke-report.html", versions: Sequence[str] = (), bar: float = 0.9,
           level: float = 0.95, max_runs: int = 1000, title: str | None = None, spec: str | None = None,
           alpha: float = 0.05, power: float = 0.8, ceiling: float = 5.0,
           hazard_ceiling: float = 1.3, spec_digest: str | None = None, family_prefix: str = "") -> ReportResult:
    """Write the HTML report of ``versions`` (selectors; default all) to ``out`` and return its summary.

    Grades: with ``spec`` the runs are graded against it; without, the grades ``fluke grade`` stored
    in the ledger are used, under ``spec_digest`` (a prefix) or else the newest stored spec.

    The runs stream past once (:func:`fluke.analysis.scan_runs`): each is reduced to what the sections
    need, and at most ``max_runs`` are kept whole for the run explorer. Boards over 50 cells group
    the rest by the family tag their scenarios declare: the first tag starting with ``family_prefix``
    (as ``fluke believe --prior family --family-prefix``)."""
    from ..grading import load_spec
    from ..report import collect_report, enrich, redacted, render_redacted
    from ._select import versions as ledger_versions

    for value, name in ((bar, "bar"), (level, "level"), (alpha, "alpha"), (power, "power")):
        check_level(value, name)
    require_runs(ledger)
    chosen = _versions(ledger, versions)
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
    from ._reportscan import FACT_BYTES, TALLY_BYTES, scan_runs

    total = ledger.count(version=chosen)
    kept = FACT_BYTES if len(chosen or ledger_versions(ledger)) == 2 else TALLY_BYTES
    check_budget(total, "report", kept, extra=min(total, max_runs) * (REPORT_BYTES - kept),
                 hint="report on fewer versions (--version; fluke summary lists them), show fewer runs in the "
                      "explorer (--max-runs), or ask the question directly: fluke compare / believe / passk read "
                      "counts or one reduction per run")
    infos = {i.version: i for i in ledger.versions()}
    every = list(chosen) if chosen else list(infos)
    labels = {v: infos[v].identity.label() if v in infos else v[:12] for v in every}
    scan = scan_runs(ledger, every, labels, spec=None if spec is None else load_spec(spec), spec_digest=spec_digest,
                     max_runs=max_runs)
    boards, suites = _boards(ledger, chosen, bar=bar, level=level)
    data = collect_report(ledger, versions=chosen, bar=bar, level=level, max_runs=max_runs, title=title,
                          boards=boards, tally=scan.tally, explorer=scan.explorer, family_prefix=family_prefix)
    data = enrich(data, scan.facts, scan.luck, spec_path=spec, alpha=alpha, power=power, ceiling=ceiling,
                  hazard_ceiling=hazard_ceiling, no_grades=scan.why or None, suites=suites, hard=scan.hard)
    if len(data.versions) >= 3:
        data = _with_leaderboard(ledger, data, alpha=alpha, power=power, ceiling=ceiling)
    if spec is None and scan.used is not None and data.luck is not None:
        cond = f"grades stored in the ledger under spec {scan.used[:12]}; {data.luck.conditional_on}"
        data = data.model_copy(update={"luck": data.luck.model_copy(update={"conditional_on": cond})})
    data = redacted(data)
    html = render_redacted(data)
    tmp = path.with_name(path.name + ".part")
    try:
        tmp.write_text(html, encoding="utf-8")
        tmp.replace(path)  # nothing half-written: the report appears whole or not at all
    finally:
        tmp.unlink(missing_ok=True)
    return ReportResult(data, path)


@dataclass(frozen=True)
class DemoSummary(Result):
    """What ``fluke demo`` made and what its report shows."""

    kind = "demo"
    demo: Any
    seconds: float

    def payload(self) -> dict[str, Any]:
        from ..report import redacted

        d = self.demo
        return {"ledger": str(d.ledger), "spec": str(d.spec), "html": str(d.html), "runs": d.runs,
                "planted_step": d.planted_step, "seconds": self.seconds,
                "report": redacted(d.data).model_dump(mode="json")}

    def blocks(self) -> list:
        from ..report import redacted

        d = self.demo
        inner = ReportResult(redacted(d.data), Path(d.html))
        return [line(f"simulated a support desk at two versions: {d.runs} runs recorded into {d.ledger}, graded "
                     f"against {d.spec}"), *inner.blocks(),
                line("the planted change was in ", Span(d.planted_step, "bold"), ": compare it with the per-step "
                     f"q-values in the report ({self.seconds:.1f} s in all)"),
                line(f"next: fluke --ledger {d.ledger} believe   ·   fluke --ledger {d.ledger} compare "
                     "model=support-desk-v1 model=support-desk-v2")]


def demo(out: str | Path = "fluke-demo", *, seed: int = 7) -> DemoSummary:
    """The main job on the embedded default: simulate, record, grade, compare, report (into ``out``)."""
    import time

    from ..report import run_demo

    start = time.perf_counter()
    made = run_demo(out, seed=seed)
    return DemoSummary(made, time.perf_counter() - start)
