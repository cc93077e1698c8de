"""``fluke run``: run an agent suite k times per case into the ledger."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import InputError
from ._common import Context, console, emit_json, fmt_share, json_option, pass_context


def _identity_pairs(values: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(None, None, "--identity", f"{item!r} is not key=value",
                             hint="e.g. --identity model=gpt-4.1")
        out[key.strip()] = value.strip()
    return out


def _summary(result: Any) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for r in result.results:
        row = rows.setdefault(r.run.scenario, {"scenario": r.run.scenario, "runs": 0, "passed": 0,
                                                "judged": 0, "errors": 0, "hard": 0, "resumed": 0})
        row["runs"] += 1
        passed = r.run.outcome.passed
        row["judged"] += passed is not None
        row["passed"] += passed is True
        row["errors"] += r.run.error is not None
        row["hard"] += r.hard
        row["resumed"] += r.resumed
    return list(rows.values())


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
@json_option
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
    from ..runner import evaluate, load_suite

    suite = load_suite(suite_file)
    ident = {**suite.identity, **_identity_pairs(identity)}
    k = k if k is not None else (suite.k or 5)
    ledger = None if no_ledger else ctx.ledger()
    total = len(suite.cases) * k

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    errors_seen = 0
    bar = Progress(TextColumn("running"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[note]}"),
                   TimeElapsedColumn(), console=Console(stderr=True), transient=True,
                   disable=not sys.stderr.isatty())
    with bar:
        task = bar.add_task("runs", total=total, note="")

        def progress(done: int, _total: int, result: Any) -> None:
            nonlocal errors_seen
            errors_seen += result.run.error is not None
            bar.update(task, completed=done, note=f"{errors_seen} raised" if errors_seen else "")

        result = evaluate(suite.cases, suite.agent, k=k, spec=spec if spec is not None else suite.spec,
                          ledger=ledger, identity=ident,
                          seed=seed if seed is not None else (suite.seed or 0),
                          executor=executor, workers=workers, progress=progress)
    verdict = result.gate()
    cases = _summary(result)
    luck = None
    if result.spec_digest is not None:
        from ..grading import luck_rate

        luck = luck_rate(result.grades())
    if ctx.as_json:
        emit_json("run", {
            "suite": suite_file, "version": result.version, "identity": ident, "k": k,
            "spec_digest": result.spec_digest, "ledger": None if no_ledger else ctx.ledger_url,
            "added": result.added, "resumed": result.resumed, "cases": cases,
            "runs": [{"scenario": r.run.scenario, "trial": r.run.trial, "hash": r.run.hash,
                      "passed": r.run.outcome.passed, "error": r.run.error, "hard": r.hard,
                      "resumed": r.resumed,
                      "violations": [{"check": v.check, "severity": v.severity, "index": v.index,
                                      "message": v.message} for v in r.violations]}
                     for r in result.results],
            "gate": verdict.to_dict(), "luck": luck.to_dict() if luck is not None else None})
    else:
        _print(result, cases, verdict, luck, ctx, no_ledger)
    if not verdict.passed:
        sys.exit(1)


def _print(result: Any, cases: list[dict[str, Any]], verdict: Any, luck: Any, ctx: Context,
           no_ledger: bool) -> None:
    from rich.table import Table
    from rich.markup import escape

    out = console()
    table = Table(title=f"{len(cases)} cases × k={result.k}")
    names = ["scenario", "output passed", "raised", "hard", "resumed"] + (["luck rate"] if luck else [])
    for name in names:
        table.add_column(name, justify="left" if name == "scenario" else "right")
    for c in cases:
        row = [escape(c["scenario"]), fmt_share(c["passed"], c["judged"]), str(c["errors"]),
               str(c["hard"]), str(c["resumed"])]
        if luck:
            row.append(str(luck.cases[c["scenario"]]))
        table.add_row(*row)
    out.print(table)
    passed, judged = result.passes()
    out.print(f"output passed {fmt_share(passed, judged)} of runs with a verdict; "
              f"{result.errors} raised (recorded as hard violations)")
    where = "not recorded (--no-ledger)" if no_ledger else \
        f"ledger {escape(ctx.ledger_url)}: {result.added} added, {result.resumed} already there"
    out.print(where)
    graded = f", graded by spec {result.spec_digest[:12]}" if result.spec_digest else ", not graded (no spec)"
    out.print(f"conditional on version {result.version[:12]}{graded}")
    raised = [r.run for r in result.results if r.run.error is not None]
    for run in raised[:10]:
        out.print(f"  raised: {escape(run.scenario)} trial {run.trial}: {escape(run.error[:200])}")
    if len(raised) > 10:
        out.print(f"  … and {len(raised) - 10} more (see --json)")
    if luck is not None:
        out.print(f"luck rate, pooled: {luck.pooled} ({escape(luck.conditional_on)})")
    if not verdict.passed:
        out.print(f"[bold red]gate FAILED[/] ({len(verdict.reasons)} reason(s)):")
        for reason in verdict.reasons[:20]:
            out.print(f"  - {escape(reason)}")
    else:
        out.print("[green]gate passed[/]")
