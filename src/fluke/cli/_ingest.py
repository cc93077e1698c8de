"""``fluke ingest``: read runs from files into the ledger."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..adapters import FORMATS, read_file
from ..errors import InputError
from ..record import IDENTITY_FIELDS
from ._common import Context, console, emit_json, json_option, pass_context


def parse_identity(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``("model=gpt-4o", ...)`` as a dict, refusing unknown identity fields.

    >>> parse_identity(("model=gpt-4o", "date=2024-06-01"))
    {'model': 'gpt-4o', 'date': '2024-06-01'}
    """
    fields = IDENTITY_FIELDS + ("date",)
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key.strip() not in fields:
            raise InputError(None, None, "--identity", f"{pair!r} is not field=value with field one of "
                             + ", ".join(fields))
        out[key.strip()] = value.strip()
    return out


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), help="Force the input format.")
@click.option("--identity", "identity", multiple=True, metavar="FIELD=VALUE",
              help="Fill an identity field the file lacks (model, harness, tools, world, grader, policy, date).")
@json_option
@pass_context
def ingest(ctx: Context, files: tuple[str, ...], fmt: str | None, identity: tuple[str, ...]) -> None:
    """Read runs from FILES into the ledger (format auto-detected).

    Each file is stored in one transaction: a bad record leaves the ledger as it was.
    Ingesting the same runs again stores nothing new.

    \b
    Example:
      fluke ingest ../shared/data/tau-bench/historical_trajectories/gpt-4o-airline.json --identity model=gpt-4o
    """
    supplied = parse_identity(identity)
    ledger = ctx.ledger()
    results = []
    show_progress = not ctx.as_json and sys.stderr.isatty()
    for path in files:
        runs = read_file(path, format=fmt, identity=supplied)
        if show_progress:
            from rich.progress import Progress

            with Progress(transient=True) as bar:
                task = bar.add_task(f"ingesting {path}", total=None)
                result = ledger.ingest(runs, progress=lambda n: bar.update(task, completed=n))
        else:
            result = ledger.ingest(runs)
        results.append({"file": path, "added": result.added, "skipped": result.skipped})
    if ctx.as_json:
        emit_json("ingest", {"ledger": ctx.ledger_url, "files": results})
        return
    out = console()
    for r in results:
        out.print(f"{r['file']}: {r['added']} runs added, {r['skipped']} already in the ledger")
    if "model" not in supplied and any(v.identity.model is None for v in ledger.versions()):
        out.print("[yellow]note:[/] some versions have no model in their identity; "
                  "pass --identity model=NAME when you ingest them")
