"""``fluke calibration``: score the predictions recorded before a batch against its runs."""

from __future__ import annotations

import click

from ._believe_print import _print_calibration, _score_json
from ._common import Context, cli_errors, console, emit_json, json_option, pass_context


def _scored(ledger, version_sel: str | None) -> tuple[list[float], list[int], list[str | None], int, int]:
    """Pair each run with the latest prediction for its cell made before it was recorded."""
    docs = [d.body for d in ledger.documents("prediction")]
    if version_sel:
        wanted = ledger.resolve_version(version_sel)
        docs = [d for d in docs if d["version"] == wanted]
    by_cell: dict[tuple[str, str, str], list[dict]] = {}
    for d in docs:
        by_cell.setdefault((d["version"], d["scenario"], d.get("condition", "")), []).append(d)
    for preds in by_cell.values():
        preds.sort(key=lambda d: d["made_at"])
    probs, outcomes, families, unknown = [], [], [], 0
    for version in sorted({key[0] for key in by_cell}):
        times = ledger.recorded_times(version=version)
        for run in ledger.runs(version=version):
            preds = by_cell.get((version, run.scenario, run.condition_key()))
            if not preds:
                continue
            recorded = times[run.hash]
            before = [p for p in preds if p["made_at"] < recorded]
            if not before:
                continue
            if run.outcome.passed is None:
                unknown += 1
                continue
            probs.append(before[-1]["probability"])
            outcomes.append(int(run.outcome.passed))
            families.append(before[-1].get("family"))
    return probs, outcomes, families, len(docs), unknown


@click.command()
@click.option("--version", "version_sel", help="Only predictions for this version.")
@click.option("--bins", type=click.IntRange(min=1, max=50), default=10, show_default=True,
              help="Forecast bins of the reliability table.")
@json_option
@pass_context
def calibration(ctx: Context, version_sel, bins) -> None:
    """Score the recorded predictions against the runs recorded after them.

    The Brier score, the always-predict-the-average baseline beside it, a reliability table
    overall and by family, and Spiegelhalter's test of whether the errors fit the predictions.

    \b
    Example:
      fluke predict --version model=gpt-4o
      fluke ingest next-batch.json
      fluke calibration --bins 5
    """
    from .. import inference as inf

    with cli_errors():
        probs, outcomes, families, n_docs, unknown = _scored(ctx.ledger(), version_sel)
        report = inf.score_predictions(probs, outcomes, families=families, bins=bins) if probs else None
    if ctx.as_json:
        emit_json("calibration", {"predictions": n_docs, "scored_runs": len(probs), "unknown_outcomes": unknown,
                                  "overall": _score_json(report.overall) if report else None,
                                  "by_family": {f: _score_json(s) for f, s in report.by_family.items()} if report else {}})
        return
    out = console()
    if report is None:
        out.print(f"nothing to score yet: {n_docs} predictions, and no run with a known outcome was recorded "
                  "after one (ingest the next batch, then run fluke calibration)", markup=False)
        return
    _print_calibration(out, report)


