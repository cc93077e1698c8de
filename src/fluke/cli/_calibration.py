"""``fluke calibration``: score the predictions recorded before a batch against its runs."""

from __future__ import annotations

import click

from ._common import Context, output_options, pass_context, unknown_option


@click.command()
@click.option("--version", "version_sel", help="Only predictions for this version.")
@click.option("--bins", type=click.IntRange(min=1, max=50), default=10, show_default=True,
              help="Forecast bins of the reliability table.")
@unknown_option
@output_options
@pass_context
def calibration(ctx: Context, version_sel: str | None, bins: int, unknown: str) -> None:
    """Score the recorded predictions against the runs recorded after them.

    The Brier score, the always-predict-the-average baseline beside it, a reliability table
    overall and by family, and Spiegelhalter's test of whether the errors fit the predictions.
    A run whose outcome is unknown is scored as a failure (--unknown fail) or left out.

    \b
    Example:
      fluke predict --version model=gpt-4o
      fluke ingest next-batch.json
      fluke calibration --bins 5
    """
    from ..analysis import calibration as answer

    ctx.emit(answer(ctx.ledger(), version=version_sel, bins=bins, unknown=unknown))
