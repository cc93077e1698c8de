"""``fluke runs``, ``summary`` and ``schema``: look at what the ledger holds (``export`` is in :mod:`._export`)."""

from __future__ import annotations

import sys
from typing import Any, Callable

import click
import orjson

from ..errors import UsageError
from ._common import Context, json_option, output_options, pass_context, unknown_option


def _filters(func: Callable) -> Callable:
    for option in reversed(
        [
            click.option("--scenario", help="Scenario id; * matches any characters."),
            click.option(
                "--version", "version", help="Versions: hash prefix or field=value[,field=value] (e.g. model=gpt-4.1)."
            ),
            click.option("--condition", help="Condition pairs key=value[,key=value]."),
            click.option("--since", help="Identity date on or after (YYYY-MM-DD)."),
            click.option("--until", help="Identity date on or before (YYYY-MM-DD)."),
        ]
    ):
        func = option(func)
    return func



@click.command()
@_filters
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show at most this many runs.")
@click.option("--jsonl", is_flag=True, help="Stream one JSON line per run ({hash, version, run}).")
@output_options
@pass_context
def runs(ctx: Context, limit: int | None, jsonl: bool, **filters: Any) -> None:
    """List runs, filtered by scenario, version, condition and date.

    --json and --jsonl stream the runs (any number); text shows the first rows and a count.

    \b
    Example:
      fluke runs --scenario 'airline/1*' --version model=gpt-4o --limit 20
      fluke runs --jsonl > runs.jsonl
    """
    from ..analysis import TABLE_ROWS, list_runs, write_runs

    if jsonl or ctx.fmt == "json":
        write_runs(ctx.ledger(), sys.stdout.buffer, lines=jsonl, limit=limit, **filters)
        sys.stdout.buffer.flush()
        return
    ctx.emit(list_runs(ctx.ledger(), limit=limit, rows=None if ctx.all_rows else TABLE_ROWS, **filters))


@click.command()
@_filters
@unknown_option
@output_options
@pass_context
def summary(ctx: Context, since: str | None, until: str | None, **filters: Any) -> None:
    """Runs and passes per version and scenario.

    \b
    Example:
      fluke summary --scenario 'airline/*'
    """
    from ..analysis import summary as summarise

    if since or until:
        raise UsageError("summary counts every run of a version; --since/--until apply to fluke runs and export")
    ctx.emit(summarise(ctx.ledger(), **filters))


def runs_document_schema() -> dict[str, Any]:
    """The JSON Schema of ``fluke --json runs`` output, with the Run schema inside.

    >>> runs_document_schema()["properties"]["format_version"]["const"]
    1
    """
    from ..record import run_schema

    run = run_schema()
    defs = run.pop("$defs", {})
    defs["Run"] = run
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "fluke runs listing",
        "type": "object",
        "required": ["format_version", "kind", "runs"],
        "properties": {
            "format_version": {"const": 1},
            "kind": {"const": "runs"},
            "runs": {"type": "array", "items": {
                "type": "object", "required": ["hash", "version", "run"], "additionalProperties": False,
                "properties": {"hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                               "version": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                               "run": {"$ref": "#/$defs/Run"}}}},
        },
        "$defs": defs,
    }


@click.command()
@click.argument("what", type=click.Choice(["run", "runs"]), default="run")
@json_option
def schema(what: str) -> None:
    """Print the JSON Schema of the run record (or of the runs --json listing).

    The schema is JSON whatever the format; --json is accepted like on every verb.

    \b
    Example:
      fluke schema > run.schema.json
      fluke schema runs > runs.schema.json
    """
    from ..record import run_schema

    doc = run_schema() if what == "run" else runs_document_schema()
    sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")


__all__ = ["runs", "schema", "summary"]
