"""``fluke grade``: grade run paths against a spec; per-run verdicts, luck rate, the gate."""

from __future__ import annotations

import sys

import click

from ._common import Context, output_options, pass_context, progress_bar, unknown_option


@click.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--spec", "spec_path", required=True, type=click.Path(dir_okay=False),
              help="The spec: a YAML, JSON or TOML file.")
@click.option("--input-format", "input_format", metavar="FORMAT",
              help="Force the input format of FILES (one of those `fluke formats` lists; default: detected).")
@click.option("--identity", "identity", multiple=True, metavar="FIELD=VALUE",
              help="Fill an identity field FILES lack (model, harness, ...).")
@click.option("--version", "version", help="Ledger only: versions by hash prefix or field=value.")
@click.option("--scenario", help="Ledger only: scenario id; * matches any characters.")
@click.option("--prior", default="0.5,0.5", show_default=True,
              help="Beta prior a,b of the luck-rate credible interval (0.5,0.5 is Jeffreys).")
@click.option("--level", type=float, default=0.95, show_default=True, help="Credible level of the interval.")
@click.option("--violations", "show_violations", is_flag=True, help="Print every violation's message.")
@click.option("--no-store", is_flag=True, help="Ledger only: do not store the grades (nor read back stored ones).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Ledger only: grade on this many cores (default: every core when there are more than "
                   "500 runs).")
@click.option("--executor", type=click.Choice(["local", "processes", "ray"]), default=None,
              help="Ledger only: where chunks of runs are graded: this process, --jobs worker processes, or "
                   "a Ray cluster (pip install 'fluke[ray]'). Default: processes when --jobs > 1.")
@click.option("--address", default=None, metavar="ADDR",
              help="With --executor ray: the cluster to join (host:port, as `ray start --head` prints).")
@click.option("--jsonl", is_flag=True,
              help="Stream one JSON line per run's grade as it is made, then one line with the answer.")
@click.option("--agreement-with", "agreement_with", type=click.Choice(["outcome"]), default=None,
              help="Also print how the reference's verdict agrees with the runs' recorded outcome: the share "
                   "with a credible interval, the 2x2 table and the disagreeing runs (the spec needs a reference).")
@unknown_option
@output_options
@pass_context
def grade(ctx: Context, files: tuple[str, ...], spec_path: str, input_format: str | None,
          identity: tuple[str, ...], version: str | None, scenario: str | None, prior: str, level: float,
          show_violations: bool, no_store: bool, jobs: int | None, executor: str | None, address: str | None,
          unknown: str, jsonl: bool, agreement_with: str | None) -> None:
    """Grade the path of every run against a spec: the gate, the luck rate, the worst runs.

    Runs come from the ledger, or from FILES when given (format auto-detected). Grading
    the ledger stores each run's grade under the spec's SHA-256 digest, with the spec
    itself, so any verdict can be re-created. The ledger is read in slices of about 500
    runs, each graded by a worker that reads it itself, on every core (--jobs, --executor
    processes) or on a Ray cluster (--executor ray --address, which is sent the runs);
    grades are stored as they are done, a few thousand to a transaction, so a grade that was
    interrupted (Ctrl-C, a killed process) and started again grades only what was not yet
    stored, and gives the same answer. --no-store grades every run afresh. The table of runs
    shows the worst 25 of each version and how many more (--all: every one); --json and
    --jsonl stream every run's grade as it is made, in the ledger's storage order, so
    memory stays flat however many runs there are. Exit code 1 when the gate fails (a hard
    violation anywhere, or a soft check failed by a strict majority of a case's runs).

    \b
    Example:
      fluke grade --spec examples/specs/airline.yaml \\
          ../shared/data/tau-bench/historical_trajectories/gpt-4o-airline.json --identity model=gpt-4o
      fluke grade --spec examples/specs/airline.yaml --format markdown > comment.md
      fluke grade --spec examples/specs/airline.yaml --jsonl > grades.jsonl
      fluke grade --spec examples/specs/airline.yaml --executor ray --address 10.0.0.5:6379
      fluke grade --spec examples/specs/reference.yaml --agreement-with outcome \\
          ../shared/data/tau-bench/historical_trajectories/gpt-4o-airline.json
    """
    from ..analysis import TABLE_ROWS, GradeWriter
    from ..analysis import grade as grade_runs
    from ._ingest import parse_identity

    if files and (jobs or executor or address):
        raise click.UsageError("--jobs/--executor/--address grade the ledger; FILES are graded in this process")
    if address and executor not in (None, "ray"):
        raise click.UsageError(f"--address is for --executor ray, not {executor}")
    writer = GradeWriter(sys.stdout.buffer, lines=jsonl) if jsonl or ctx.as_json else None
    with progress_bar(enabled=not files and writer is None and sys.stderr.isatty()) as bar:
        result = grade_runs(None if files else ctx.ledger, spec_path, files=files, input_format=input_format,
                            identity=parse_identity(identity), version=version, scenario=scenario, prior=prior,
                            level=level, store=not no_store, show_violations=show_violations, unknown=unknown,
                            executor="ray" if address and not executor else executor, jobs=jobs, address=address,
                            progress=bar.for_total("grading") if bar else None,
                            rows=None if ctx.all_rows and writer is None else TABLE_ROWS, sink=writer,
                            agreement_with=agreement_with)
    if writer is not None:
        writer.close(result)
    else:
        ctx.emit(result)
    if not result.passed:
        sys.exit(1)
