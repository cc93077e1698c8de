"""``fluke demo``: the main job on the embedded default (a SQLite ledger, a simulated agent)."""

from __future__ import annotations

import click

from ..errors import UsageError
from ._common import Context, output_options, pass_context


@click.command()
@click.option("--out", type=click.Path(file_okay=False), default="fluke-demo", show_default=True,
              help="Folder for the demo's ledger, spec and report (its ledger is made afresh).")
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the simulated agent.")
@click.option("--ledger", "ledger", hidden=True, default=None, help="Refused: the demo's ledger is OUT/fluke.db.")
@output_options
@pass_context
def demo(ctx: Context, out: str, seed: int, ledger: str | None) -> None:
    """Simulate a support agent at two versions, record, grade, analyse, compare, report.

    Version 2 carries a planted change (one tool step fails four times as often). The runs go
    into a fresh SQLite ledger in OUT, are graded against a path spec, and the HTML report is
    written beside them; the terminal shows what the runs let you believe. The report's
    contrasts (a memory × retry policy study) and null calibration are simulated for the
    report alone and not recorded in the ledger, so fluke contrast has no study to read there.

    \b
    Example:
      fluke demo --out /tmp/fluke-demo && xdg-open /tmp/fluke-demo/report.html
    """
    from ..analysis import demo as run

    given = click.get_current_context().parent
    if ledger is not None or (given is not None
                              and given.get_parameter_source("ledger") == click.core.ParameterSource.COMMANDLINE):
        raise UsageError("the demo records into a fresh ledger of its own, OUT/fluke.db: choose its folder with "
                         "--out DIR, not --ledger")

    ctx.emit(run(out, seed=seed))
