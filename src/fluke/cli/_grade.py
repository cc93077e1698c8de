"""``fluke grade``: grade run paths against a spec; per-run verdicts, luck rate, the gate."""

from __future__ import annotations

import sys

import click

from ..adapters import FORMAT_NAMES
from ._common import Context, output_options, pass_context, unknown_option


@click.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--spec", "spec_path", required=True, type=click.Path(dir_okay=False),
              help="The spec: a YAML, JSON or TOML file.")
@click.option("--input-format", "input_format", type=click.Choice(sorted(FORMAT_NAMES)),
              help="Force the input format of FILES (default: detected).")
@click.option("--identity", "identity", multiple=True, metavar="FIELD=VALUE",
              help="Fill an identity field FILES lack (model, harness, ...).")
@click.option("--version", "version", help="Ledger only: versions by hash prefix or field=value.")
@click.option("--scenario", help="Ledger only: scenario id; * matches any characters.")
@click.option("--prior", default="0.5,0.5", show_default=True,
              help="Beta prior a,b of the luck-rate credible interval (0.5,0.5 is Jeffreys).")
@click.option("--level", type=float, default=0.95, show_default=True, help="Credible level of the interval.")
@click.option("--violations", "show_violations", is_flag=True, help="Print every violation's message.")
@click.option("--no-store", is_flag=True, help="Ledger only: do not store the grades.")
@unknown_option
@output_options
@pass_context
def grade(ctx: Context, files: tuple[str, ...], spec_path: str, input_format: str | None,
          identity: tuple[str, ...], version: str | None, scenario: str | None, prior: str, level: float,
          show_violations: bool, no_store: bool, unknown: str) -> None:
    """Grade the path of every run against a spec: per-run verdicts, the luck rate, the gate.

    Runs come from the ledger, or from FILES when given (format auto-detected). Grading
    the ledger stores each run's grade under the spec's SHA-256 digest, with the spec
    itself, so any verdict can be re-created. Exit code 1 when the gate fails (a hard
    violation anywhere, or a soft check failed by a strict majority of a case's runs).

    \b
    Example:
      fluke grade --spec examples/specs/airline.yaml \\
          ../shared/data/tau-bench/historical_trajectories/gpt-4o-airline.json --identity model=gpt-4o
      fluke grade --spec examples/specs/airline.yaml --format markdown > comment.md
    """
    from ..analysis import grade as grade_runs
    from ._ingest import parse_identity

    result = grade_runs(None if files else ctx.ledger, spec_path, files=files, input_format=input_format,
                        identity=parse_identity(identity), version=version, scenario=scenario, prior=prior,
                        level=level, store=not no_store, show_violations=show_violations, unknown=unknown)
    ctx.emit(result)
    if not result.passed:
        sys.exit(1)
