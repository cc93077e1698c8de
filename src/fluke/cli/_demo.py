"""``fluke demo``: the main job on the embedded default (a SQLite ledger, a simulated agent)."""

from __future__ import annotations

import click

from ._common import Context, output_options, pass_context


@click.command()
@click.option("--out", type=click.Path(file_okay=False), default="fluke-demo", show_default=True,
              help="Folder for the demo's ledger, spec and report (its ledger is made afresh).")
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the simulated agent.")
@output_options
@pass_context
def demo(ctx: Context, out: str, seed: int) -> None:
    """Simulate a support agent at two versions, record, grade, analyse, compare, report.

    Version 2 carries a planted change (one tool step fails four times as often). The runs go
    into a fresh SQLite ledger in OUT, are graded against a path spec, and the HTML report is
    written beside them; the terminal shows what the runs let you believe.

    \b
    Example:
      fluke demo --out /tmp/fluke-demo && xdg-open /tmp/fluke-demo/report.html
    """
    from ..analysis import demo as run

    ctx.emit(run(out, seed=seed))
