"""``fluke decide TABLE``: each version's cost, severe failures and expected loss; the choice the table implies."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ._common import Context, output_options, pass_context, unknown_option


@click.command()
@click.argument("table", type=click.Path(dir_okay=False))
@click.argument("versions", nargs=-1)
@click.option("--spec", type=click.Path(exists=True, dir_okay=False),
              help="Grading spec: count the runs that broke a check of each severity (hard, soft, warn).")
@click.option("--method", type=click.Choice(["delta", "bootstrap"]), default="delta", show_default=True,
              help="Interval of the cost per success: the delta method or the bootstrap-t, both over scenarios.")
@click.option("--level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True, help="Confidence level of the intervals and the upper bounds.")
@click.option("--draws", type=click.IntRange(min=100), default=4000, show_default=True,
              help="Posterior draws (Bayesian bootstrap over scenarios) for P(wrong choice).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draws and the bootstrap.")
@click.option("--seal", "do_seal", is_flag=True,
              help="Seal the table file in the ledger now, before the runs it will judge (then exit 0).")
@click.option("--sealed", is_flag=True, help="Require the table to have been sealed before every run it judges.")
@unknown_option
@output_options
@pass_context
def decide(ctx: Context, table: str, versions: tuple[str, ...], spec: str | None, method: str, level: float,
           draws: int, seed: int, do_seal: bool, sealed: bool, unknown: str) -> None:
    """Choose between versions by a declared loss table: expected loss per task, its interval, P(wrong choice).

    TABLE is a YAML loss table (failure, ask, severity, spend, cost, eligible; see docs/decisions.md).
    VERSIONS are selectors, one version each; none means every version. Every version shows its
    cost per success (failed and errored runs charged, runs without a cost counted apart), mean
    and p95 spend, latency and tokens per run, and with --spec the runs that broke a check of each
    severity with an exact upper bound. Exit 1 when no version is eligible or --sealed does not hold.

    \b
    Example:
      fluke decide loss.yaml --seal
      fluke decide loss.yaml model=tradeoff-a model=tradeoff-b --spec spec.yaml --sealed
      fluke decide loss.yaml --method bootstrap --json
    """
    from .. import analysis

    if do_seal:
        ctx.creates = True  # a seal comes before any run
        ctx.emit(analysis.seal_loss(ctx.ledger(), Path(table)))
        return
    result = analysis.decide(ctx.ledger(), Path(table), versions=list(versions) or None, spec=spec, unknown=unknown,
                             method=method, confidence_level=level, draws=draws, seed=seed, sealed=sealed)
    ctx.emit(result)
    if not result.holds:
        sys.exit(1)


__all__ = ["decide"]
