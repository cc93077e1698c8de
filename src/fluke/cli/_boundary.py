"""``fluke boundary`` and ``fluke incident``: the chart of a condition space, and what production found.

>>> import os, tempfile
>>> from click.testing import CliRunner
>>> from fluke.cli import group
>>> from fluke.ledger import open_ledger
>>> from fluke.simulate import planted_agent
>>> folder = tempfile.mkdtemp()
>>> path, space = os.path.join(folder, "doc.db"), os.path.join(folder, "space.yaml")
>>> _ = open(space, "w").write("axes:\\n  case: [unique, same_name, missing_id, no_permission]\\n"
...                            "  records: {levels: [1, 2, 5, 10, 20, 50], ordered: true}\\n")
>>> with open_ledger(path) as ledger:
...     _ = ledger.ingest(planted_agent().suite(4, seed=2))
>>> out = CliRunner().invoke(group, ["--ledger", path, "boundary", "--space", space, "--bar", "0.8"]).output
>>> out.splitlines()[0]
'space 24 points (case 4 levels, records 6 levels, ordered); 24 run (100.0%), 0 named but not run'
"""

from __future__ import annotations

import click

from ._common import Context, output_options, pass_context, unknown_option

SPACE = click.option("--space", required=True, type=click.Path(dir_okay=False),
                     help="The condition space: a YAML file of axes with their levels (see fluke boundary --help).")


def thresholds(func):
    """--bar, --floor and --prob, shared by boundary, plan --explore and incident."""
    for option in reversed([
        click.option("--bar", type=float, default=0.9, show_default=True,
                     help="A point works when P(θ > BAR) ≥ PROB."),
        click.option("--floor", type=float, default=0.5, show_default=True,
                     help="A point fails when P(θ < FLOOR) ≥ PROB."),
        click.option("--prob", type=float, default=0.9, show_default=True,
                     help="How sure the chart must be to call a region."),
    ]):
        func = option(func)
    return func


@click.command()
@SPACE
@click.option("--version", "version", help="The version: hash prefix or field=value (default: the latest).")
@thresholds
@unknown_option
@output_options
@pass_context
def boundary(ctx: Context, **options) -> None:
    """The chart of a condition space: each point's region, colour and what would settle it.

    Regions: works (P(θ > bar) ≥ prob), fails (P(θ < floor) ≥ prob), uncertain, or named but
    not run; incidents recorded with fluke incident add the never-named. Colours: what the
    runs at the point did most: completed, asked (asked, obtained authorisation or stopped:
    the label should_ask), or failed. An uncertain point needs evidence (more runs decide
    it) or needs a change (its runs already say it is below the bar). Scenarios whose
    outcomes split by an axis are named, and pass rates are given per case kind (a kind:
    tag: regression, frontier, adversarial, production).

    \b
    The space file:
      name: refund desk
      axes:
        case: {levels: [unique, same_name, missing_id]}
        records: {levels: [1, 5, 20], ordered: true}

    \b
    Example:
      fluke boundary --space space.yaml --bar 0.9 --floor 0.5
      fluke plan --explore --space space.yaml --budget 40
    """
    from ..analysis import boundary as answer

    ctx.emit(answer(ctx.ledger(), **options))


@click.group(invoke_without_command=True)
@click.pass_context
def incident(click_ctx: click.Context) -> None:
    """Production incidents against the chart: record them, then see the suite's coverage.

    \b
    Example:
      fluke incident add --space space.yaml --at case=same_name,records=5 --when 2026-11-02 --id INC-7
      fluke incident add --space space.yaml --file incidents.jsonl
      fluke incident show --space space.yaml
    """
    if click_ctx.invoked_subcommand is None:
        click.echo(click_ctx.get_help())


def _pairs(text: str | None) -> dict:
    from ..errors import UsageError

    out: dict = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise UsageError(f"--at {text!r}: give KEY=VALUE pairs separated by commas")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


@incident.command("add")
@SPACE
@click.option("--at", "at", help="The incident's conditions: KEY=VALUE[,KEY=VALUE].")
@click.option("--when", help="When it happened: YYYY-MM-DD.")
@click.option("--id", "ident", default="", help="The incident's id in your tracker.")
@click.option("--note", default="", help="One line on what happened.")
@click.option("--file", "file", type=click.Path(exists=True, dir_okay=False),
              help="Read incidents from a YAML list or a JSON Lines file (at, when, id, note).")
@click.option("--version", "version", help="Chart this version's regions beside them (default: the latest).")
@thresholds
@output_options
@pass_context
def add(ctx: Context, space: str, at: str | None, when: str | None, ident: str, note: str, file: str | None,
        **options) -> None:
    """Record incidents (the ledger keeps them), then match every one to the chart."""
    from ..analysis import incident as answer
    from ..boundary import Incident, read_incidents
    from ..errors import UsageError

    if (file is None) == (at is None):
        raise UsageError("give --at KEY=VALUE,... (with --when) for one incident, or --file for many")
    if file is not None:
        if when or ident or note:
            raise UsageError("--file takes no --when, --id or --note: each record carries its own")
        found = read_incidents(file)
    else:
        found = [Incident.from_mapping({"at": _pairs(at), "when": when, "id": ident, "note": note},
                                       record="--at", file=None)]
    ctx.emit(answer(ctx.ledger(), space=space, add=found, **options))


@incident.command("show")
@SPACE
@click.option("--version", "version", help="Chart this version's regions beside them (default: the latest).")
@thresholds
@click.option("--level", type=float, default=0.95, show_default=True, help="Level of the coverage's interval.")
@output_options
@pass_context
def show(ctx: Context, **options) -> None:
    """Every recorded incident on its point or never named; coverage over time; what to add."""
    from ..analysis import incident as answer

    ctx.creates = False   # only ``incident add`` may start a ledger; showing reads one
    ctx.emit(answer(ctx.ledger(), **options))


def explore_plan(ctx: Context, *, explore: bool, space: str | None, floor: float, seal_it: bool, **options):
    """``plan --explore``: the plan verb's options checked, then :func:`fluke.analysis.explore`."""
    from ..analysis import explore as answer
    from ..errors import UsageError

    if not explore:
        raise UsageError("--space goes with --explore (where the next runs tell most about the boundary)")
    if not space or not options.get("budget"):
        raise UsageError("--explore needs --space SPACE.yaml and --budget RUNS")
    clash = [f"--{k}" for k in ("detect", "rate", "scenarios", "runs", "against", "scenario", "condition")
             if options.get(k) is not None] + (["--seal"] if seal_it else [])
    if clash:
        raise UsageError(f"--explore does not take {clash[0]}")
    return answer(ctx.ledger(), space=space, budget=options["budget"], version=options.get("version"),
                  bar=0.9 if options.get("bar") is None else options["bar"], floor=floor,
                  prob=options.get("level", 0.95), unknown=options.get("unknown", "fail"))


def believe_by_condition(ctx: Context, *, by: str | None, space: str | None, floor: float, **options):
    """``believe --by condition``: believe's options checked, then :func:`fluke.analysis.boundary`."""
    from ..analysis import boundary as answer
    from ..errors import UsageError

    if by != "condition":
        raise UsageError("--space goes with --by condition (each point's region and colour)")
    if not space:
        raise UsageError("--by condition needs --space SPACE.yaml (the axes and their levels)")
    defaults = {"prior": "uniform", "family_prefix": "", "carry_from": None, "account": False, "delta": 0.5,
                "touched": (), "odds": None, "statements": False, "against": None, "clean_batch": 10, "next_m": 8}
    clash = [k for k, v in defaults.items() if options.get(k, v) != v]
    if clash:
        name = {"delta": "discount", "next_m": "next"}.get(clash[0], clash[0]).replace("_", "-")
        raise UsageError(f"--by condition does not take --{name} (it charts the runs as "
                         "recorded, with a uniform prior per point)")
    return answer(ctx.ledger(), space=space, version=options.get("version"), bar=options["bar"], floor=floor,
                  prob=options["level"], unknown=options.get("unknown", "fail"))
