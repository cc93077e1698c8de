"""``fluke run``: run an agent suite k times per case into the ledger."""

from __future__ import annotations

import sys

import click

from ._common import Context, output_options, pass_context, progress_bar


@click.command("run")
@click.argument("suite_file", metavar="SUITE.py", type=click.Path(dir_okay=False))
@click.option("--k", "k", type=int, default=None, help="Runs per case (default: the suite's k, else 5).")
@click.option("--spec", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Grading spec (YAML/JSON/TOML); validated before any agent call.")
@click.option("--seed", type=int, default=None, help="Base seed of every run's rng (default 0).")
@click.option("--identity", "identity", multiple=True, metavar="KEY=VALUE",
              help="Identity fields of the agent version (model, harness, tools, world, grader, policy).")
@click.option("--executor", type=click.Choice(["local", "threads", "ray"]), default="local",
              show_default=True, help="Where agent calls run; ray needs pip install 'fluke[ray]'.")
@click.option("--workers", type=int, default=None, help="Calls at once (threads, ray).")
@click.option("--no-ledger", is_flag=True, help="Do not record the runs (a dry run).")
@output_options
@pass_context
def run(ctx: Context, suite_file: str, k: int | None, spec: str | None, seed: int | None,
        identity: tuple[str, ...], executor: str, workers: int | None, no_ledger: bool) -> None:
    """Run the agent of SUITE.py k times on each of its cases, grade and record every run.

    SUITE.py defines `cases` (Case objects or dicts with scenario, input and an optional
    check(output) -> bool) and `agent(input, *, trial, rng)` returning a Trajectory; it may
    define `identity`, `spec`, `k` and `seed`. Each finished run goes to the ledger at once;
    running the same suite again with the same identity runs only what is missing.
    Exit 1 when the gate fails (a hard violation, a run that raised, or soft violations
    in most of a case's runs).

    \b
    Example:
      fluke run suite.py --k 5 --spec spec.yaml --identity model=gpt-4.1
      fluke run suite.py --k 3 --no-ledger --json
    """
    from ..analysis import parse_identity, run_suite

    ledger = None if no_ledger else ctx.ledger()
    with progress_bar(enabled=not ctx.as_json and sys.stderr.isatty()) as bar:
        result = run_suite(ledger, suite_file, k=k, spec=spec, seed=seed, identity=parse_identity(identity),
                           executor=executor, workers=workers, progress=bar.for_runs() if bar else None)
    ctx.emit(result)
    if not result.passed:
        sys.exit(1)
