"""``fluke report``: one self-contained HTML file, a terminal summary, and ``--json``."""

from __future__ import annotations

import re
from pathlib import Path

import click

from ..errors import SelectorError
from ._common import Context, console, emit_json, fmt_p, fmt_share, json_option, pass_context


def _versions(ctx: Context, selectors: tuple[str, ...]) -> list[str] | None:
    if not selectors:
        return None
    chosen: list[str] = []
    for selector in selectors:
        found = ctx.ledger().select_versions(selector)
        if not found:
            ctx.ledger().resolve_version(selector)  # raises, listing what the ledger holds
        chosen.extend(v for v in found if v not in chosen)
    return chosen


@click.command()
@click.option("--out", "-o", type=click.Path(dir_okay=False, writable=True), default="fluke-report.html",
              show_default=True, help="Where to write the HTML report.")
@click.option("--version", "selectors", multiple=True,
              help="Versions to include (repeatable): hash prefix or field=value, e.g. model=gpt-4o. Default: all.")
@click.option("--bar", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.9, show_default=True,
              help="The pass-rate bar each scenario is judged against.")
@click.option("--level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True, help="Credible level of the intervals.")
@click.option("--max-runs", type=click.IntRange(min=0), default=1000, show_default=True,
              help="At most this many runs in the run explorer.")
@click.option("--title", help="The report's title.")
@click.option("--spec", type=click.Path(exists=True, dir_okay=False),
              help="Grading spec: adds the luck rate, marks violations in the explorer, and lets a failed run "
                   "die at its first hard violation in the comparison.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level of the two-version comparison.")
@click.option("--power", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.8, show_default=True,
              help="Power used for the comparison's detection limit.")
@click.option("--ceiling", type=click.FloatRange(1, None, min_open=True), default=1.3, show_default=True,
              help="Largest detection limit (hazard ratio) you accept.")
@json_option
@pass_context
def report(ctx: Context, out: str, selectors: tuple[str, ...], bar: float, level: float, max_runs: int,
           title: str | None, spec: str | None, alpha: float, power: float, ceiling: float) -> None:
    """Write the HTML report (opens from disk, no network) and print a summary.

    With exactly two versions selected, the report compares them (stratified log-rank, per-step
    q-values, detection limit). With --spec, it grades the runs for the luck rate and the
    explorer's violations. With --json, print the report's data (format_version, every section, and the path of
    the HTML file under "html") instead of the summary.

    \b
    Example:
      fluke ingest ../shared/data/tau-bench/historical_trajectories/gpt-4o-airline.json --identity model=gpt-4o
      fluke report --out report.html --version model=gpt-4o
    """
    from ..report import collect_report, enrich, grade_for_report, redacted, render_html, violations_from

    ledger = ctx.ledger()
    versions = _versions(ctx, selectors)
    if ledger.count(version=versions) == 0:
        raise SelectorError(f"{ledger.url}: no runs to report on; add some with: fluke ingest FILE")
    runs = list(ledger.runs(version=versions))
    grades, _ = grade_for_report(runs, spec)
    data = collect_report(ledger, versions=versions, bar=bar, level=level, max_runs=max_runs, title=title,
                          runs=runs, violations=violations_from(grades) if grades is not None else None)
    data = enrich(data, runs, grades, spec_path=spec, alpha=alpha, power=power, ceiling=ceiling)
    path = Path(out)
    path.write_text(render_html(data), encoding="utf-8")
    if ctx.as_json:
        emit_json("report", {**redacted(data).model_dump(mode="json"), "html": str(path)})
        return
    _print_summary(redacted(data), path)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _plain(text: str) -> str:
    r"""Untrusted text for the terminal: no control characters (ANSI escapes), no rich markup.

    >>> print(_plain("[bold]x\x1b[31m"))
    \[bold]x[31m
    """
    from rich.markup import escape

    return escape(_CONTROL.sub("", text))


def _print_summary(data, path: Path) -> None:
    from rich.table import Table

    from ..report import SECTIONS
    from ..report._charts import natural_key
    from ..report._svg import fmt_prob

    out = console()
    for board in data.suite_board or []:
        k = sum(r.successes for r in board.rows)
        n = sum(r.trials for r in board.rows)
        clear = sum(r.p_above_bar >= 0.95 for r in board.rows)
        table = Table(title=f"{_plain(board.label)} ({board.version[:12]}): {fmt_share(k, n)} runs passed; "
                            f"{clear} of {len(board.rows)} scenario cells clear {board.bar:g} with P ≥ 0.95",
                      caption=f"lowest five by P(θ > {board.bar:g}); prior Beta(1, 1), {board.level:.0%} credible interval")
        for column in ("scenario", "passed", "mean", "interval", f"P(θ > {board.bar:g})"):
            table.add_column(column, justify="left" if column == "scenario" else "right")
        for r in sorted(board.rows, key=lambda r: (r.p_above_bar, r.mean, natural_key(r.scenario)))[:5]:
            name = r.scenario + (f" [{r.condition}]" if r.condition else "")
            table.add_row(_plain(name), fmt_share(r.successes, r.trials), f"{r.mean:.3f}", f"{r.lo:.3f}–{r.hi:.3f}",
                          fmt_prob(r.p_above_bar))
        out.print(table)
    for block in data.suite_questions or []:
        for q in block.questions:
            out.print(f"{_plain(block.label)}: {_plain(q.name)}: [bold]{_plain(q.display)}[/]")
    if data.luck is not None and data.luck.pooled is not None:
        p = data.luck.pooled
        interval = "" if p.lo is None else f" [{100 * p.lo:.1f}–{100 * p.hi:.1f}%]"
        out.print(f"luck rate, pooled: {fmt_share(p.lucky, p.green)} of green runs had a broken path{interval}")
    if data.comparison is not None:
        c = data.comparison
        if c.verdict is not None:
            out.print(f"comparison: [bold]{_plain(c.verdict)}[/] (p {fmt_p(c.pvalue)}); could not have detected a "
                      f"hazard ratio below {c.detection_limit:.3g} (ceiling {c.ceiling:g})")
            flagged = [(s, (c.step_labels or [None] * len(c.steps))[j], q) for j, (s, q)
                       in enumerate(zip(c.steps, c.qvalues or [])) if q is not None and q < c.alpha]
            for step, label, q in flagged:
                where = f" ({_plain(label)})" if label else ""
                out.print(f"  step {step}{where}: deaths differ between the arms, q {fmt_p(q)}")
            out.print("[dim]a difference between two stored runs is a difference between those runs[/]")
        for arm in data.comparison.arms:
            top = sorted(((d, s) for s, d in zip(data.comparison.steps, arm.deaths) if d), reverse=True)[:3]
            where = ", ".join(f"step {s}: {d}" for d, s in top) or "none"
            out.print(f"deaths by step, {_plain(arm.label)}: {sum(arm.deaths)} of {arm.runs} runs died; most at {where}")
    status = Table(title="report sections", show_header=True)
    status.add_column("section")
    status.add_column("status")
    for name in SECTIONS:
        status.add_row(name.replace("_", " "), "[green]shown[/]" if getattr(data, name) is not None
                       else f"[dim]not computed: {data.missing.get(name, 'no data')}[/]")
    out.print(status)
    out.print(f"report written to [bold]{_plain(str(path))}[/] ({path.stat().st_size / 1024:.0f} KB); open it in a browser, "
              "no network needed")
