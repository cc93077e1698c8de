"""``fluke ingest``: read runs from files into the ledger."""

from __future__ import annotations

import sys

import click

from ._common import Context, json_option, pass_context, progress_bar


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--format", "input_format", metavar="FORMAT",
              help="Force the input format (one of those `fluke formats` lists; default: detected).")
@click.option("--identity", "identity", multiple=True, metavar="FIELD=VALUE",
              help="Fill an identity field the file lacks (model, harness, tools, world, grader, policy, date).")
@click.option("--score", help="Inspect AI: the scorer (or scorer.key) that decides pass/fail when a log has several; "
              "lm-eval: the metric (default: the first the samples list).")
@click.option("--pass-at", type=float, default=None,
              help="Inspect AI, lm-eval: a run passes when its score is at least this (default 1.0: partial credit "
                   "fails).")
@click.option("--option", "reader_options", multiple=True, metavar="KEY=VALUE",
              help="Another reader option (e.g. lm-eval's filter=flexible-extract); `fluke formats` lists each "
                   "reader's options.")
@click.option("--workers", default="auto", show_default=True, metavar="N|auto",
              help="Processes forked to read a fluke JSONL file of 8 MiB or more while this one stores it "
                   "(0: none; auto: 2 where there are two cores or more and the load average leaves one idle, "
                   "else none).")
@json_option
@pass_context
def ingest(ctx: Context, files: tuple[str, ...], input_format: str | None, identity: tuple[str, ...],
           score: str | None, pass_at: float | None, reader_options: tuple[str, ...], workers: str) -> None:
    """Read runs from FILES into the ledger (format auto-detected; a folder fluke export --format parquet wrote
    is read as a Parquet dataset).

    Each file is stored in one transaction: a bad record leaves the ledger as it was.
    Ingesting the same runs again stores nothing new.

    \b
    Example:
      fluke ingest ../shared/data/tau-bench/historical_trajectories/gpt-4o-airline.json --identity model=gpt-4o
    """
    from ..analysis import ingest as ingest_files
    from ..analysis import parse_identity

    supplied = parse_identity(identity)
    options = {k: v for k, v in (("score", score), ("pass_at", pass_at)) if v is not None}
    for pair in reader_options:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--option")
        options[key.strip()] = value.strip()
    if workers != "auto":
        try:
            workers = int(workers)
        except ValueError:
            raise click.BadParameter(f"{workers!r} is not a number of processes nor 'auto'",
                                     param_hint="--workers") from None
        if workers < 0:
            raise click.BadParameter(f"{workers} is below 0", param_hint="--workers")
    with progress_bar(enabled=not ctx.as_json and sys.stderr.isatty()) as bar:
        ctx.emit(ingest_files(ctx.ledger(), files, input_format=input_format, identity=supplied, options=options,
                              progress=bar.for_file if bar else None, workers=workers))


@click.command()
@json_option
@pass_context
def formats(ctx: Context) -> None:
    """List the formats fluke reads, in detection order, with the package each comes from.

    Other packages add readers through the fluke.readers entry-point group
    (docs/adapters.md shows one).

    \b
    Example:
      fluke formats
    """
    from ..analysis import formats as list_formats

    ctx.emit(list_formats())


def parse_identity(pairs: tuple[str, ...]):
    """``("model=gpt-4o", ...)`` as a dict (see :func:`fluke.analysis.parse_identity`).

    >>> parse_identity(("model=gpt-4o",))
    {'model': 'gpt-4o'}
    """
    from ..analysis import parse_identity as parse

    return parse(pairs)
