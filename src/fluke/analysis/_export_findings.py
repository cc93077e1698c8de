"""``export --format otel|eee|junit|mlflow``: fluke's findings written in the formats other tools read.

One call per format, each returning the :class:`~fluke.analysis.ExportWritten` the command line
prints (a line on standard error, or with ``--json`` one document): what was written, where, how
many bytes and how many records of each kind. The mappings themselves live in
:mod:`fluke.exports`; this module only chooses the runs, calls the writer and says what it did.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> folder = tempfile.mkdtemp()
>>> led = open_ledger(os.path.join(folder, "f.db"))
>>> _ = led.ingest([Run(scenario=f"s{i}", trial=t, identity=Identity(model="m"),
...                     outcome=Outcome(passed=t > 0)) for i in range(3) for t in range(4)])
>>> written = export_findings(led, "eee", os.path.join(folder, "out.eee.jsonl"))
>>> written.records, written.text().startswith("wrote 1 Every Eval Ever")
({'documents': 1}, True)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ._summary import ExportWritten

#: The findings formats and the options each reads (any other one given is a usage error, not ignored).
FINDINGS_OPTIONS: dict[str, frozenset[str]] = {
    "otel": frozenset({"spec", "baseline", "endpoint"}), "eee": frozenset(), "junit": frozenset({"rule"}),
    "mlflow": frozenset({"rule", "mlflow_uri", "mlflow_run"})}


def _written(fmt: str, output: str | None, records: dict, said: str, notes: tuple[str, ...] = (),
             extra: dict | None = None) -> ExportWritten:
    path = None if output is None else "standard output" if output == "-" else output
    size = None if output in (None, "-") else os.path.getsize(output)
    return ExportWritten(fmt, path, size, records, said, notes, extra)


def export_findings(ledger: Any, fmt: str, output: str = "-", *, spec: str | None = None,
                    baseline: str | None = None, endpoint: str | None = None, rule: str | None = None,
                    version: str | None = None, scenario: str | None = None, unknown: str = "exclude",
                    mlflow_uri: str | None = None, mlflow_run: str | None = None,
                    experiment: str = "fluke") -> ExportWritten:
    """Write ``ledger``'s findings as ``fmt`` (otel, eee, junit or mlflow) to ``output`` (``-``: standard output).

    ``ledger`` is a ledger or a function that opens one (opened only once the arguments are
    known to be good). otel grades the runs against ``spec`` (default: the spec last stored)
    and compares each version with ``baseline``; junit and mlflow export the checks of the gate
    ``rule``. Every format is redacted and its strings inert. Options a format does not read
    are a usage error. See the module docstring for an example.
    """
    from ..errors import UsageError

    if fmt not in FINDINGS_OPTIONS:
        raise UsageError(f"--format {fmt}: not a findings format (choose from {', '.join(FINDINGS_OPTIONS)})",
                         argument="--format")
    options = {"spec": spec, "baseline": baseline, "endpoint": endpoint, "rule": rule, "mlflow_uri": mlflow_uri,
               "mlflow_run": mlflow_run}
    wrong = next((k for k, v in options.items() if v and k not in FINDINGS_OPTIONS[fmt]), None)
    if wrong:
        raise UsageError(f"--{wrong.replace('_', '-')} does not apply to --format {fmt}")
    if fmt in ("junit", "mlflow"):
        return _gate_checks(ledger, fmt, output, rule, version, mlflow_uri, mlflow_run, experiment)
    from ..exports import collect, write_eee

    opened: Callable[[], Any] = ledger if callable(ledger) and not hasattr(ledger, "runs") else (lambda: ledger)
    led = opened()
    found = collect(led, spec=spec, baseline=baseline, version=version, scenario=scenario, unknown=unknown,
                    compare=fmt == "otel", runs=fmt == "otel", stream=True)
    if fmt == "otel":
        from ..exports._otel import emit_otlp

        count = emit_otlp(found, output, endpoint)   # one pass: the graded runs stream
        graded, verdicts = count - len(found.verdicts), len(found.verdicts)
        return _written(fmt, output, {"gen_ai.evaluation.result": count, "graded runs": graded, "verdicts": verdicts},
                        f"wrote {count} gen_ai.evaluation.result records ({graded} graded runs, {verdicts} verdicts) "
                        "as OTLP/JSON", (*([f"sent them to {endpoint}"] if endpoint else []),
                                       *(f"not compared: {reason}" for reason in found.not_compared)),
                        {"sent_to": endpoint})
    count = write_eee(found, output, ledger=led)
    return _written(fmt, output, {"documents": count},
                    f"wrote {count} Every Eval Ever v0.2.1 documents (one per version)")


def _gate_checks(ledger: Any, fmt: str, output: str, rule: str | None, version: str | None, mlflow_uri: str | None,
                 mlflow_run: str | None, experiment: str) -> ExportWritten:
    from ..errors import UsageError
    from ._gate import gate

    if rule is None:
        raise UsageError(f"--format {fmt} exports a gate rule's checks: name the rule with --rule", argument="--rule")
    result = gate(ledger, rule, version=version)
    if fmt == "junit":
        from ..exports._junit import gate_junit
        from ..exports._write import write_atomic

        write_atomic(output, gate_junit(result).encode("utf-8"))
        return _written(fmt, output, {"test cases": len(result.claims)},
                        f"wrote {len(result.claims)} test cases (gate {result.status}) as JUnit XML", (),
                        {"gate": result.status})
    from ..exports import log_to_mlflow

    done = log_to_mlflow(result.claims, tracking_uri=mlflow_uri, run_id=mlflow_run, experiment=experiment,
                         title=f"fluke gate: {result.name}", status=result.status)
    return _written(fmt, None, {"assessments": done["assessments"]},
                    f"logged {done['assessments']} claims as feedback on MLflow run {done['run_id']} "
                    f"(trace {done['trace_id']})",
                    (), {"gate": result.status, "run_id": done["run_id"], "trace_id": done["trace_id"]})


__all__ = ["FINDINGS_OPTIONS", "export_findings"]
