"""``fluke demo``: the main job on the embedded default (a SQLite ledger, a simulated agent)."""

from __future__ import annotations

import time

import click

from ._common import Context, console, emit_json, json_option, pass_context


@click.command()
@click.option("--out", type=click.Path(file_okay=False), default="fluke-demo", show_default=True,
              help="Folder for the demo's ledger, spec and report (its ledger is made afresh).")
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the simulated agent.")
@json_option
@pass_context
def demo(ctx: Context, out: str, seed: int) -> None:
    """Simulate a support agent at two versions, record, grade, analyse, compare, report.

    Version 2 carries a planted change (one tool step fails four times as often). The runs go
    into a fresh SQLite ledger in OUT, are graded against a path spec, and the HTML report is
    written beside them; the terminal shows what the runs let you believe.

    \b
    Example:
      fluke demo --out /tmp/fluke-demo && xdg-open /tmp/fluke-demo/report.html
    """
    from ..report import redacted, run_demo
    from ._report import _print_summary

    start = time.perf_counter()
    result = run_demo(out, seed=seed)
    seconds = time.perf_counter() - start
    if ctx.as_json:
        emit_json("demo", {"ledger": str(result.ledger), "spec": str(result.spec), "html": str(result.html),
                           "runs": result.runs, "planted_step": result.planted_step, "seconds": seconds,
                           "report": redacted(result.data).model_dump(mode="json")})
        return
    out_ = console()
    out_.print(f"simulated a support desk at two versions: {result.runs} runs recorded into {result.ledger}, "
               f"graded against {result.spec}")
    _print_summary(redacted(result.data), result.html)
    out_.print(f"the planted change was in [bold]{result.planted_step}[/]: compare it with the per-step q-values "
               f"in the report ({seconds:.1f} s in all)")
    out_.print(f"next: fluke --ledger {result.ledger} believe   ·   "
               f"fluke --ledger {result.ledger} compare model=support-desk-v1 model=support-desk-v2")
