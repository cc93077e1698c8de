"""``fluke report``: one self-contained HTML file, a terminal summary, and ``--json``."""

from __future__ import annotations

import click

from ._common import Context, output_options, pass_context


@click.command()
@click.option("--out", "-o", type=click.Path(dir_okay=False), default="fluke-report.html",
              show_default=True, help="Where to write the HTML report.")
@click.option("--version", "selectors", multiple=True,
              help="Versions to include (repeatable): hash prefix or field=value, e.g. model=gpt-4o. Default: all.")
@click.option("--bar", type=float, default=0.9, show_default=True,
              help="The pass-rate bar each scenario is judged against.")
@click.option("--level", type=float, default=0.95,
              show_default=True, help="Credible level of the intervals.")
@click.option("--max-runs", type=click.IntRange(min=0), default=1000, show_default=True,
              help="At most this many runs in the run explorer (past it: an equal share per version, failed "
                   "runs first, one per scenario cell before a second).")
@click.option("--title", help="The report's title.")
@click.option("--spec", type=click.Path(exists=True, dir_okay=False),
              help="Grading spec: grades the runs now (nothing is stored) for each version's luck rate and the "
                   "explorer's violations; the comparison is then fluke compare --spec's (a failed run dies at its "
                   "first hard violation).")
@click.option("--spec-digest", help="Use the grades stored under this spec (a digest prefix; default: the newest "
                                    "spec whose grades cover a selected version whole). Stored grades give the "
                                    "luck rate; they never move where runs die in the comparison.")
@click.option("--family-prefix", default="", show_default=True,
              help="Boards over 50 cells group the rest by the family tag each scenario declares: its first tag "
                   "(sorted) starting with this prefix, e.g. tool: (the rule of fluke believe --prior family).")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance level of the two-version comparison.")
@click.option("--power", type=float, default=0.8, show_default=True,
              help="Power used for the comparison's detection limit.")
@click.option("--ceiling", type=click.FloatRange(0, 100, min_open=True), default=5.0, show_default=True,
              help="Largest detection limit, in pass-rate points, you accept.")
@click.option("--loss", type=click.Path(dir_okay=False),
              help="A loss table (see docs/decisions.md): the summary shows each version's cost per success, severe "
                   "failures (with --spec) and expected loss beside its pass rate, and the version the table chooses.")
@click.option("--space", type=click.Path(exists=True, dir_okay=False),
              help="Chart this condition space (YAML; see fluke boundary --help): every point's region and colour, "
                   "named-but-not-run points, and incidents at never-named conditions.")
@click.option("--floor", type=float, default=0.5, show_default=True,
              help="With --space: a point fails when P(θ < FLOOR) ≥ PROB (it works when P(θ > BAR) ≥ PROB).")
@click.option("--prob", type=float, default=0.9, show_default=True, help="With --space: how sure a region must be.")
@output_options
@pass_context
def report(ctx: Context, out: str, selectors: tuple[str, ...], bar: float, level: float, max_runs: int,
           title: str | None, spec: str | None, spec_digest: str | None, family_prefix: str, alpha: float, power: float,
           ceiling: float, space: str | None, floor: float, prob: float, loss: str | None) -> None:
    """Write the HTML report (opens from disk, no network) and print a summary.

    Every section shows what a verb prints: the boards fluke believe's, the comparison of two
    versions fluke compare's, the luck rate of each graded version fluke grade's, the standings
    of three or more fluke leaderboard's. The spec a luck rate rests on is named, and a spec
    whose tools the runs do not call is warned about. With --json, print the report's data
    (format_version, every section, and the path of the HTML file under "html") instead of the
    summary.

    \b
    Example:
      fluke ingest ../shared/data/tau-bench/historical_trajectories/gpt-4o-airline.json --identity model=gpt-4o
      fluke report --out report.html --version model=gpt-4o
      fluke report --out report.html --loss loss.yaml --spec spec.yaml
    """
    from pathlib import Path

    from ..analysis import decide
    from ..analysis import report as write_report

    ledger = ctx.ledger()
    extras = {}
    if loss is not None:
        extras["decision"] = decide(ledger, Path(loss), versions=list(selectors) or None, spec=spec,
                                    confidence_level=level)
    ctx.emit(write_report(ledger, out=out, versions=selectors, bar=bar, level=level, max_runs=max_runs,
                          title=title, spec=spec, spec_digest=spec_digest, family_prefix=family_prefix, alpha=alpha,
                          power=power, ceiling=ceiling, space=space, floor=floor, prob=prob, extras=extras))
