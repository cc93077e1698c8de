"""``fluke believe`` and ``predict``: what the runs let you believe (``calibration`` checks it).

>>> import os, tempfile
>>> from click.testing import CliRunner
>>> from fluke.cli import group
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> path = os.path.join(tempfile.mkdtemp(), "doc.db")
>>> with open_ledger(path) as ledger:
...     _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True))
...                        for t in range(5)])
>>> out = CliRunner().invoke(group, ["--ledger", path, "believe"]).output
>>> "What we infer: average rate 0.857" in out
True
"""

from __future__ import annotations

import click

from ._common import Context, output_options, pass_context, unknown_option

_PRIOR_HELP = "uniform, beta:a,b (e.g. beta:2,2), or family (empirical Bayes within declared mechanism tags)."


def _belief_options(func):
    for option in reversed([
        click.option("--version", "version", help="The version: hash prefix or field=value (default: the latest)."),
        click.option("--prior", default="uniform", show_default=True, help=_PRIOR_HELP),
        click.option("--family-prefix", default="", help="With --prior family: only tags starting with this "
                     "(e.g. tool:) name a mechanism family."),
        click.option("--carry-from", help="Carry evidence from this earlier version."),
        click.option("--account", is_flag=True, help="Carry evidence through every earlier version, in the order "
                     "recorded (the running account); with --odds, reset a scenario when a change is likely."),
        click.option("--discount", "delta", type=click.FloatRange(0, 1), default=0.5, show_default=True,
                     help="δ: the share of the carried evidence kept (1 keeps all, 0 starts over)."),
        click.option("--touched", multiple=True, help="Tags the change touched: only scenarios carrying one are "
                     "discounted; the rest carry at δ = 1. Repeatable."),
        click.option("--odds", type=click.FloatRange(min=0, min_open=True), default=None,
                     help="Check each scenario for a change: prior odds for 'unchanged' (e.g. 4 for 4:1)."),
        unknown_option,
    ]):
        func = option(func)
    return func


@click.command()
@_belief_options
@click.option("--bar", type=float, default=0.9, show_default=True, help="The reliability bar θ must clear.")
@click.option("--level", type=float, default=0.9, show_default=True, help="Credible interval level.")
@click.option("--next", "next_m", type=click.IntRange(min=1), default=8, show_default=True,
              help="m in P(next m runs all pass).")
@click.option("--statements", is_flag=True, help="Print the four-part statement of every scenario.")
@click.option("--against", help="Also compare with this version, scenario by scenario (week over week).")
@click.option("--clean-batch", type=click.IntRange(min=1), default=10, show_default=True,
              help="With --against: runs in a clean batch that graduates a frontier scenario.")
@click.option("--costs", is_flag=True,
              help="Add the cost per success (every run charged), spend, latency and tokens per run with intervals "
                   "(streams the version's runs once).")
@click.option("--cost", default="usd", show_default=True, help="With --costs: the cost keys that make the spend.")
@click.option("--spec", type=click.Path(exists=True, dir_okay=False),
              help="Also the runs breaking a check of each severity of this spec, with exact upper bounds.")
@click.option("--by", type=click.Choice(["condition"]), help="Per point of a condition space instead of per "
              "scenario: each point's region and colour, as fluke boundary prints them (needs --space; --level is "
              "how sure a region must be).")
@click.option("--space", type=click.Path(dir_okay=False), help="With --by condition: the condition space (YAML).")
@click.option("--floor", type=float, default=0.5, show_default=True,
              help="With --by condition: a point fails when P(θ < FLOOR) ≥ --level.")
@output_options
@pass_context
def believe(ctx: Context, by: str | None, space: str | None, floor: float, **options) -> None:
    """Posteriors per scenario, the suite questions, and the four-part statement.

    \b
    Example:
      fluke believe --version model=gpt-4o --bar 0.9
      fluke believe --by condition --space space.yaml --bar 0.9 --floor 0.5
      fluke believe --version model=v2 --carry-from model=v1 --discount 0.5 --odds 4
      fluke believe --account --discount 0.9 --odds 4
      fluke believe --version model=v2 --against model=v1 --clean-batch 10
      fluke believe --version model=tradeoff-b --costs --spec spec.yaml
    """
    if by or space:
        from ._boundary import believe_by_condition

        if options.get("costs") or options.get("spec"):
            from ..errors import UsageError

            raise UsageError("--costs and --spec go with believe per scenario, not with --by condition")
        ctx.emit(believe_by_condition(ctx, by=by, space=space, floor=floor, **options))
        return
    from ..analysis import believe as answer

    ctx.emit(answer(ctx.ledger(), **options))


@click.command()
@_belief_options
@output_options
@pass_context
def predict(ctx: Context, **options) -> None:
    """Record, before the next batch runs, each scenario's probability that a run passes.

    The predictions go into the ledger as documents; fluke calibration scores them
    against the runs recorded afterwards.

    \b
    Example:
      fluke predict --version model=gpt-4o --prior uniform
      fluke ingest next-batch.json && fluke calibration
    """
    from ..analysis import predict as record

    ctx.emit(record(ctx.ledger(), **options))
