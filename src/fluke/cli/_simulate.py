"""``fluke simulate`` and ``fluke calibrate``: the staged synthetic agent with a known answer.

>>> from click.testing import CliRunner
>>> CliRunner().invoke(simulate, ["--help"]).exit_code
0
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path

import click
import numpy as np

from ..errors import InputError
from ._common import Context, console, emit_json, fmt_share, json_option, pass_context

#: The ledger document kind holding a planted change's digest (the body stays in the seal file).
SEAL_KIND = "planted-change-seal"


def _write_private(path: Path, doc: dict) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(doc, handle, indent=2)


@click.command()
@click.option("--tasks", type=click.IntRange(min=1), default=50, show_default=True, help="Tasks (scenarios).")
@click.option("--runs-per-task", type=click.IntRange(min=1), multiple=True, default=(2, 40), show_default=True,
              help="Episodes per task in each arm; repeat for several sizes under one seal.")
@click.option("--factor", type=click.FloatRange(0, None, min_open=True), default=2.0, show_default=True,
              help="Arm B multiplies one stage's failure rate by this.")
@click.option("--seal-file", type=click.Path(dir_okay=False), default=None,
              help="Where the sealed body goes (default ./planted-<digest>.json). Do not read it until "
                   "you have compared the arms.")
@click.option("--reveal", "reveal_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Open a seal file: check its digest against the ledger and that B was compared first.")
@click.option("--force", is_flag=True, help="With --reveal: open it even though B has not been compared.")
@json_option
@pass_context
def simulate(ctx: Context, tasks: int, runs_per_task: tuple[int, ...], factor: float, seal_file: str | None,
             reveal_file: str | None, force: bool) -> None:
    """Run the staged synthetic agent: arms A, A′ (fresh salt) and B (one stage made worse).

    Each episode calls review, sample and measure (each fails at 10%), then replies. Which
    stage B changes is drawn from the OS random source and sealed by digest in the ledger
    before any run; the stage itself goes to a private seal file. Each size (2 and 40 runs per
    task by default) gets its own three arms under the one seal. Compare the arms, then
    ``--reveal`` the file (it refuses to open before every B arm has been compared, unless
    ``--force``).

    \b
    Example:
      fluke simulate --runs-per-task 2 --runs-per-task 40
      fluke compare <A prefix> <B prefix>
      fluke simulate --reveal planted-<digest>.json
    """
    if reveal_file:
        _reveal(ctx, Path(reveal_file), force)
        return
    from ..simulate import BASELINE_RATES, draw_arm, plant_change

    ledger = ctx.ledger()
    change = plant_change(factor=factor)
    digest = change.digest
    path = Path(seal_file or f"planted-{digest[:12]}.json")
    if path.exists():
        raise InputError(str(path), None, None, "already exists", hint="choose another --seal-file")
    _write_private(path, {"digest": digest, "sealed": change.body()})
    sizes = tuple(dict.fromkeys(runs_per_task))
    ledger.put_document(SEAL_KIND, {"digest": digest, "workload": "staged", "tasks": tasks,
                                    "runs_per_task": list(sizes)})
    b_rates = change.rates(BASELINE_RATES)
    del change  # nothing below may read the planted stage
    arms = {}
    for size in sizes:
        for name, rates in (("A", BASELINE_RATES), ("A'", BASELINE_RATES), ("B", b_rates)):
            arms[f"{name}/{size}"] = draw_arm(rates, tasks=tasks, runs_per_task=size,
                                              salt=secrets.token_hex(8), name=name)
    info = {}
    for name, arm in arms.items():
        result = ledger.ingest(arm.runs())
        info[name] = {"version": arm.identity().version, "runs": int(arm.died.size),
                      "failed": int(arm.died.sum()), "added": result.added}
    with open(path) as handle:
        doc = json.load(handle)
    doc["arms"] = {k: v["version"] for k, v in info.items()}
    path.write_text(json.dumps(doc, indent=2))
    if ctx.as_json:
        emit_json("simulation", {"seal_digest": digest, "seal_file": str(path), "arms": info,
                                 "tasks": tasks, "runs_per_task": list(sizes)})
        return
    from rich.table import Table

    table = Table(title=f"staged workload: {tasks} tasks; arm/runs per task")
    for col in ("arm", "version", "failed"):
        table.add_column(col)
    for name, row in info.items():
        table.add_row(name, row["version"][:12], fmt_share(row["failed"], row["runs"]))
    out = console()
    out.print(table)
    out.print(f"sealed before any run: {digest}")
    out.print(f"the planted stage is in {path}; compare first, e.g. "
              f"fluke compare {info[f'A/{sizes[-1]}']['version'][:12]} {info[f'B/{sizes[-1]}']['version'][:12]}, then "
              f"fluke simulate --reveal {path}")


def _reveal(ctx: Context, path: Path, force: bool) -> None:
    from ..simulate import verify_seal

    try:
        doc = json.loads(path.read_text())
        digest, body = doc["digest"], doc["sealed"]
    except (ValueError, KeyError) as exc:
        raise InputError(str(path), None, "digest/sealed", f"not a seal file ({exc})") from None
    ledger = ctx.ledger()
    seals = {d.digest: d for d in ledger.documents(SEAL_KIND)}
    stored = next((d for d in seals.values() if d.body.get("digest") == digest), None)
    checks = {"digest_matches": verify_seal(digest, body), "sealed_in_ledger": stored is not None}
    arms = doc.get("arms") or {}
    infos = {v.version: v for v in ledger.versions()}
    present = [infos[v] for v in arms.values() if v in infos]
    checks["sealed_before_runs"] = bool(stored is not None and present and len(present) == len(arms)
                                        and all(stored.recorded_at <= i.first_recorded for i in present))
    compared = set()
    for d in ledger.documents("comparison"):
        compared.update(d.body.get("a", {}).get("versions", []) + d.body.get("b", {}).get("versions", []))
    b_versions = [v for k, v in arms.items() if k.split("/")[0] == "B"]
    checks["compared_before_reveal"] = bool(b_versions) and all(v in compared for v in b_versions)
    ok = all(checks.values())
    if ctx.as_json:
        emit_json("reveal", {"checks": checks, "stage": body.get("stage") if ok or force else None,
                             "factor": body.get("factor")})
    else:
        out = console()
        for name, passed in checks.items():
            out.print(f"{'[green]ok[/]' if passed else '[red]NO[/]'}  {name.replace('_', ' ')}")
        if ok or force:
            out.print(f"planted change: stage [bold]{body.get('stage')}[/], rate × {body.get('factor')}")
    if not ok:
        if not force and not ctx.as_json:
            click.echo("fluke: the seal was not opened: a check above failed (compare B first, or --force)", err=True)
        sys.exit(1)


@click.command()
@click.option("--pairs", type=click.IntRange(min=1), default=200, show_default=True, help="Unchanged pairs.")
@click.option("--tasks", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--runs-per-task", type=click.IntRange(min=1), default=40, show_default=True)
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option("--ceiling", type=click.FloatRange(1, None, min_open=True), default=1.3, show_default=True)
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh from the OS, printed).")
@json_option
@pass_context
def calibrate(ctx: Context, pairs: int, tasks: int, runs_per_task: int, alpha: float, ceiling: float,
              seed: int | None) -> None:
    """False-alarm calibration: compare many unchanged pairs of the staged agent.

    Prints how many pairs the log-rank called different (with a Wilson interval that should
    contain alpha), the p-value histogram in 20 bins and two uniformity tests. Exit 1 when the
    interval misses alpha. Nothing is written to the ledger.

    \b
    Example:
      fluke calibrate --pairs 200 --seed 1
    """
    from ..simulate import calibrate_null

    seed = seed if seed is not None else secrets.randbits(63)
    run = calibrate_null(pairs, tasks=tasks, runs_per_task=runs_per_task, alpha=alpha, ceiling=ceiling,
                         rng=np.random.default_rng(seed))
    cal = run.calibration
    if ctx.as_json:
        emit_json("calibration", {
            "pairs": cal.pairs, "false_alarms": cal.false_alarms, "share": cal.share,
            "interval": list(cal.interval), "alpha": alpha, "contains_alpha": cal.contains_nominal,
            "verdicts": run.verdicts, "detection_limit_range": [run.limit_min, run.limit_max],
            "histogram": list(cal.histogram), "ks": {"statistic": cal.ks_statistic, "pvalue": cal.ks_pvalue},
            "chi2": {"statistic": cal.chi2_statistic, "pvalue": cal.chi2_pvalue}, "seed": seed,
            "tasks": tasks, "runs_per_task": runs_per_task,
            "conditional_on": "the staged synthetic agent (every stage 0.10); stratified log-rank"})
    else:
        out = console()
        lo, hi = cal.interval
        out.print(f"{cal.pairs} unchanged pairs ({tasks} tasks × {runs_per_task} runs per arm), seed {seed}")
        out.print(f"called different: {fmt_share(cal.false_alarms, cal.pairs)}, Wilson 95% "
                  f"[{100 * lo:.1f}%, {100 * hi:.1f}%] — {'contains' if cal.contains_nominal else 'MISSES'} "
                  f"the nominal {100 * alpha:g}%")
        out.print("verdicts: " + ", ".join(f"{k} {v}" for k, v in run.verdicts.items())
                  + f"; detection limit {run.limit_min:.3f} to {run.limit_max:.3f}")
        top = max(cal.histogram) or 1
        for i, count in enumerate(cal.histogram):
            out.print(f"  {i / len(cal.histogram):.2f}–{(i + 1) / len(cal.histogram):.2f} "
                      f"{'█' * round(30 * count / top):<30} {count}")
        out.print(f"uniform p-values? KS p = {cal.ks_pvalue:.3f}, chi-square over {len(cal.histogram)} bins "
                  f"p = {cal.chi2_pvalue:.3f}")
        out.print("[dim]Conditional on the synthetic staged agent: this measures the test's calibration on "
                  "that null, not on any real agent.[/]")
    if not cal.contains_nominal:
        sys.exit(1)
