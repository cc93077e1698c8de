"""``fluke export``: runs as fluke JSONL, or fluke's findings in the formats other tools read."""

from __future__ import annotations

from typing import Any

import click

from ..errors import UsageError
from ._common import Context, json_option, pass_context, unknown_option
from ._runs import _filters

FORMATS = ("jsonl", "otel", "eee", "junit", "mlflow")
#: The options each findings format reads (any other one given is a usage error, not ignored).
_OPTIONS = {"otel": {"spec", "baseline", "endpoint"}, "eee": set(), "junit": {"rule"},
            "mlflow": {"rule", "mlflow_uri", "mlflow_run"}}


def _say(text: str) -> None:
    from ..format import safe

    click.echo(safe(f"fluke: {text}", newlines=False), err=True)


def _written(ctx: Context, fmt: str, output: str | None, records: dict, said: str, notes: tuple[str, ...] = (),
             extra: dict | None = None) -> None:
    """Say what an export wrote: one line on standard error, or with --json one JSON document on
    standard output (the export itself then went to a file, never to standard output)."""
    import os

    from ..analysis import ExportWritten

    path = None if output is None else "standard output" if output == "-" else output
    size = None if output in (None, "-") else os.path.getsize(output)
    report = ExportWritten(fmt, path, size, records, said, notes, extra)
    if ctx.as_json:
        ctx.emit(report)
        return
    _say(report.text())
    for text in notes:
        _say(text)


@click.command()
@_filters
@click.option("--output", "-o", type=click.Path(), default="-", help="Write here instead of standard output.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="jsonl", show_default=True,
              help="jsonl: the runs; otel: OTLP/JSON gen_ai.evaluation.result records; eee: Every Eval Ever "
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
      fluke export --format otel -o evals.otlp.json --endpoint http://127.0.0.1:4318
      fluke export --format eee -o results.eee.jsonl
      fluke export --format junit --rule release.yaml -o gate.junit.xml
    """
    if fmt == "jsonl":
        _jsonl(ctx, output, redact, no_scan, filters)
        return
    if ctx.as_json and output == "-" and fmt != "mlflow":
        raise UsageError(f"--format {fmt} writes its document to standard output; with --json give -o FILE, and "
                         "what was written comes to standard output as JSON")
    if redact or no_scan:
        raise UsageError(f"--redact and --no-scan are for --format jsonl; {fmt} is always redacted")
    given = [k for k in ("since", "until", "condition") if filters.get(k)]
    if given:
        raise UsageError(f"--{given[0]} applies to --format jsonl; {fmt} selects by --version and --scenario")
    options = {"spec": spec, "baseline": baseline, "endpoint": endpoint, "rule": rule, "mlflow_uri": mlflow_uri,
               "mlflow_run": mlflow_run}
    wrong = next((k for k, v in options.items() if v and k not in _OPTIONS[fmt]), None)
    if wrong:
        raise UsageError(f"--{wrong.replace('_', '-')} does not apply to --format {fmt}")
    if fmt in ("junit", "mlflow"):
        _claims(ctx, fmt, output, rule, filters.get("version"), mlflow_uri, mlflow_run, experiment)
        return
    from ..exports import collect

    ledger = ctx.ledger()
    found = collect(ledger, spec=spec, baseline=baseline, version=filters.get("version"),
                    scenario=filters.get("scenario"), unknown=unknown, compare=fmt == "otel", runs=fmt == "otel",
                    stream=True)
    if fmt == "otel":
        from ..exports._otel import emit_otlp

        count = emit_otlp(found, output, endpoint)   # one pass: the graded runs stream
        graded, verdicts = count - len(found.verdicts), len(found.verdicts)
        _written(ctx, fmt, output, {"gen_ai.evaluation.result": count, "graded runs": graded, "verdicts": verdicts},
                 f"wrote {count} gen_ai.evaluation.result records ({graded} graded runs, {verdicts} verdicts) "
                 "as OTLP/JSON", (*([f"sent them to {endpoint}"] if endpoint else []),
                                *(f"not compared: {reason}" for reason in found.not_compared)),
                 {"sent_to": endpoint})
        return
    from ..exports import write_eee

    count = write_eee(found, output, ledger=ledger)
    _written(ctx, fmt, output, {"documents": count},
             f"wrote {count} Every Eval Ever v0.2.1 documents (one per version)")


def _jsonl(ctx: Context, output: str, redact: bool, no_scan: bool, filters: dict) -> None:
    from ..analysis import export as write

    if redact and no_scan:
        raise UsageError("--redact needs the scan: drop --no-scan")
    if ctx.as_json and output == "-":
        raise UsageError("export writes the runs to standard output; with --json give -o FILE, and the report "
                         "comes to standard output as JSON")
    report = write(ctx.ledger(), output, redact=redact, scan=not no_scan, **filters)
    if ctx.as_json:
        ctx.emit(report)
        return
    _say(report.blocks()[0].plain())


def _claims(ctx: Context, fmt: str, output: str, rule: str | None, version: str | None, mlflow_uri: str | None,
            mlflow_run: str | None, experiment: str) -> None:
    from .. import analysis

    if rule is None:
        raise UsageError(f"--format {fmt} exports a gate rule's checks: name the rule with --rule")
    result = analysis.gate(ctx.ledger, rule, version=version)
    if fmt == "junit":
        from ..exports._junit import gate_junit
        from ..exports._write import write_atomic

        write_atomic(output, gate_junit(result).encode("utf-8"))
        _written(ctx, fmt, output, {"test cases": len(result.claims)},
                 f"wrote {len(result.claims)} test cases (gate {result.status}) as JUnit XML", (),
                 {"gate": result.status})
        return
    from ..exports import log_to_mlflow

    done = log_to_mlflow(result.claims, tracking_uri=mlflow_uri, run_id=mlflow_run, experiment=experiment,
                         title=f"fluke gate: {result.name}", status=result.status)
    _written(ctx, fmt, None, {"assessments": done["assessments"]},
             f"logged {done['assessments']} claims as feedback on MLflow run {done['run_id']} "
             f"(trace {done['trace_id']})",
             (), {"gate": result.status, "run_id": done["run_id"], "trace_id": done["trace_id"]})


__all__ = ["export"]
