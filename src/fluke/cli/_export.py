"""``fluke export``: runs as fluke JSONL, or fluke's findings in the formats other tools read."""

from __future__ import annotations

from typing import Any

import click

from ..errors import UsageError
from ._common import Context, json_option, pass_context, unknown_option
from ._runs import _filters

FORMATS = ("jsonl", "parquet", "otel", "eee", "junit", "mlflow")


def _say(text: str) -> None:
    from ..format import safe

    click.echo(safe(f"fluke: {text}", newlines=False), err=True)


def _tell(ctx: Context, report: Any) -> None:
    """Say what an export wrote: one line (and its notes) on standard error, or with --json one JSON
    document on standard output (the export itself then went to a file, never to standard output)."""
    if ctx.as_json:
        ctx.emit(report)
        return
    for block in report.blocks():
        _say(block.plain())


@click.command()
@_filters
@click.option("--output", "-o", type=click.Path(), default="-", help="Write here instead of standard output.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="jsonl", show_default=True,
              help="jsonl: the runs; parquet: the runs and their tallies as a Parquet dataset in the new folder -o DIR "
                   "(re-ingests to the same hashes; --ledger parquet:DIR answers the count verbs from it); "
                   "otel: OTLP/JSON gen_ai.evaluation.result records; eee: Every Eval Ever "
                   "v0.2.1; junit: a gate rule's checks; mlflow: a gate rule's checks as MLflow feedback.")
@click.option("--redact", is_flag=True, help="jsonl: write secret-shaped values redacted (those runs' hashes change).")
@click.option("--no-scan", is_flag=True, help="jsonl: do not look for secret-shaped values (a plain, faster copy).")
@click.option("--spec", type=click.Path(dir_okay=False), default=None,
              help="otel: grade the runs against this spec (default: the spec last stored in the ledger).")
@click.option("--baseline", default=None,
              help="otel: each version's verdict is against this one (default: the first recorded).")
@click.option("--rule", type=click.Path(dir_okay=False), default=None,
              help="junit, mlflow: the gate rule whose checks are exported.")
@click.option("--endpoint", default=None, help="otel: also POST the records to this OTLP/HTTP endpoint (headers from "
                   "OTEL_EXPORTER_OTLP_HEADERS).")
@click.option("--mlflow-uri", default=None, help="mlflow: the tracking URI (default: MLflow's own).")
@click.option("--mlflow-run", default=None, help="mlflow: add to this run (default: a new run).")
@click.option("--experiment", default="fluke", show_default=True, help="mlflow: the experiment of a new run.")
@unknown_option
@json_option
@pass_context
def export(ctx: Context, output: str, fmt: str, redact: bool, no_scan: bool, spec: str | None,
           baseline: str | None, rule: str | None, endpoint: str | None, mlflow_uri: str | None,
           mlflow_run: str | None, experiment: str, unknown: str, **filters: Any) -> None:
    """Write runs as fluke JSONL (re-ingests to the same hashes), or findings for other tools.

    jsonl says (on stderr) how many runs hold secret-shaped values; --redact writes them
    redacted. Every other format is always redacted, its strings inert, and says on stderr what
    it wrote. With --json (and -o FILE) what was written is one JSON document on standard
    output instead, for every format. The mappings are in docs/exports.md.

    \b
    Example:
      fluke export --version model=gpt-4o -o gpt-4o.jsonl && fluke --ledger copy.db ingest gpt-4o.jsonl
      fluke export --format parquet -o lake && fluke --ledger parquet:lake summary
      fluke export --format otel -o evals.otlp.json --endpoint http://127.0.0.1:4318
      fluke export --format eee -o results.eee.jsonl
      fluke export --format junit --rule release.yaml -o gate.junit.xml
    """
    if fmt == "jsonl":
        _jsonl(ctx, output, redact, no_scan, filters)
        return
    if fmt == "parquet":
        _parquet(ctx, output, redact, no_scan, filters)
        return
    if ctx.as_json and output == "-" and fmt != "mlflow":
        raise UsageError(f"--format {fmt} writes its document to standard output; with --json give -o FILE, and "
                         "what was written comes to standard output as JSON")
    if redact or no_scan:
        raise UsageError(f"--redact and --no-scan are for --format jsonl; {fmt} is always redacted")
    given = [k for k in ("since", "until", "condition") if filters.get(k)]
    if given:
        raise UsageError(f"--{given[0]} applies to --format jsonl; {fmt} selects by --version and --scenario")
    from ..analysis import export_findings

    _tell(ctx, export_findings(ctx.ledger, fmt, output, spec=spec, baseline=baseline, endpoint=endpoint, rule=rule,
                               version=filters.get("version"), scenario=filters.get("scenario"), unknown=unknown,
                               mlflow_uri=mlflow_uri, mlflow_run=mlflow_run, experiment=experiment))


def _jsonl(ctx: Context, output: str, redact: bool, no_scan: bool, filters: dict) -> None:
    from ..analysis import export as write

    if redact and no_scan:
        raise UsageError("--redact needs the scan: drop --no-scan")
    if ctx.as_json and output == "-":
        raise UsageError("export writes the runs to standard output; with --json give -o FILE, and the report "
                         "comes to standard output as JSON")
    _tell(ctx, write(ctx.ledger(), output, redact=redact, scan=not no_scan, **filters))


def _parquet(ctx: Context, output: str, redact: bool, no_scan: bool, filters: dict) -> None:
    from ..analysis import export_parquet

    if redact:
        raise UsageError("--redact is for --format jsonl; a Parquet dataset is a lossless copy (export jsonl "
                         "with --redact to share one)")
    _tell(ctx, export_parquet(ctx.ledger(), output, **filters))


__all__ = ["export"]
