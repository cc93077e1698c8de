"""``fluke compare``, ``fixcheck``, ``consistency``, ``simulate`` and ``calibrate``.

A thin shell: it picks runs out of the ledger and hands arrays to :mod:`fluke.comparison`;
the printing lives in :mod:`fluke.cli._compare_show`.

>>> from click.testing import CliRunner
>>> CliRunner().invoke(compare, ["--help"]).exit_code
0
"""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from ..errors import FlukeError, InputError, SelectorError
from ..comparison import compare_runs
from . import _compare_show as show
from ._common import Context, emit_json, json_option, pass_context

_ARM_HELP = ("a version selector (hash prefix or field=value[,field=value]), optionally with "
             "@TRIALS (e.g. model=gpt-4o@0-1 or @0,2,4)")


def _parse_trials(text: str, where: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                out.update(range(lo, hi + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise InputError(None, where, "trials", f"cannot read trials {text!r}",
                             hint="write @0-1 or @0,2,4 after the selector") from None
    return out


@dataclasses.dataclass(frozen=True)
class Arm:
    """Runs picked out of the ledger by one selector (maybe several versions, maybe some trials)."""

    selector: str
    versions: tuple[str, ...]
    labels: tuple[str, ...]
    trials: tuple[int, ...] | None
    runs: tuple[Any, ...]

    def describe(self) -> dict[str, Any]:
        return {"selector": self.selector, "versions": list(self.versions), "labels": list(self.labels),
                "trials": None if self.trials is None else list(self.trials), "runs": len(self.runs)}


def _arm(ctx: Context, text: str, *, scenario: str | None = None, condition: str | None = None) -> Arm:
    selector, _, trials_text = text.partition("@")
    ledger = ctx.ledger()
    versions = ledger.select_versions(selector) if selector else []
    if not versions:
        ledger.resolve_version(selector)  # raises, listing what the ledger holds
    trials = _parse_trials(trials_text, text) if trials_text else None
    runs = [r for r in ledger.runs(version=versions, scenario=scenario, condition=condition)
            if trials is None or r.trial in trials]
    if not runs:
        raise SelectorError(f"{text!r} names {len(versions)} version(s) but no runs"
                            + (f" in scenario {scenario!r}" if scenario else "")
                            + (f" with trials {sorted(trials)}" if trials else ""))
    labels = {r.version: r.identity.label() for r in runs}
    return Arm(text, tuple(v for v in versions if v in labels), tuple(labels[v] for v in versions if v in labels),
               tuple(sorted(trials)) if trials is not None else None, tuple(runs))


def _disjoint(a: Arm, b: Arm) -> None:
    shared = set(a.versions) & set(b.versions)
    if shared and (a.trials is None or b.trials is None or set(a.trials) & set(b.trials)):
        raise InputError(None, None, None, f"{a.selector!r} and {b.selector!r} select the same runs "
                         f"(version {min(shared)[:12]})",
                         hint="pick two different versions, or split one version's trials with @0-1 / @2-3")


def _hard_index(runs, spec_path: str | None) -> dict[str, int] | None:
    if not spec_path:
        return None
    try:
        from ..grading import first_hard_index, grade_run, load_spec
    except ImportError as exc:  # grading ships in its own sub-package
        raise FlukeError(f"--spec needs fluke.grading, which this build lacks ({exc})") from None
    spec = load_spec(spec_path)
    return {r.hash: first_hard_index(grade_run(r, spec)) for r in runs
            if r.outcome.passed is False and r.outcome.died_at is None}


def _common_options(func):
    for option in reversed([
        click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
                     show_default=True, help="Significance level."),
        click.option("--power", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.8,
                     show_default=True, help="Power used for the detection limit."),
        click.option("--ceiling", type=click.FloatRange(1, None, min_open=True), default=1.3,
                     show_default=True, help="Largest detection limit (hazard ratio) you accept."),
    ]):
        func = option(func)
    return func


@click.command()
@click.argument("version_a", metavar="A")
@click.argument("version_b", metavar="B")
@click.option("--scenario", help="Only scenarios matching this (* wildcards), e.g. 'airline/*'.")
@click.option("--condition", help="Only runs under these conditions key=value[,key=value].")
@click.option("--spec", type=click.Path(exists=True, dir_okay=False),
              help="Grading spec: failed runs with no recorded died_at die at their first hard violation.")
@_common_options
@click.option("--steps", "show_steps", type=click.IntRange(min=0), default=8, show_default=True,
              help="Print at most this many per-step and per-cell rows (lowest q first).")
@click.option("--no-record", is_flag=True, help="Do not record this comparison in the ledger.")
@json_option
@pass_context
def compare(ctx: Context, version_a: str, version_b: str, scenario: str | None, condition: str | None,
            spec: str | None, alpha: float, power: float, ceiling: float, show_steps: int,
            no_record: bool) -> None:
    """Compare B against A: stratified log-rank on when runs die, with the detection limit.

    A and B are version selectors (``@TRIALS`` picks trials). Runs are stratified by
    scenario × condition; only strata both arms ran are compared. The verdict is *different*,
    *no significant difference* or *too small to tell*, and the minimum detectable hazard ratio
    prints with every one. Per-step deaths and per-cell Fisher tests (BH q-values) show where.

    \b
    Example:
      fluke compare model=gpt-4.1 model=ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm
      fluke compare model=gpt-4.1 model=ft:gpt-4.1* --scenario 'telecom/*' --json
    """
    arm_a = _arm(ctx, version_a, scenario=scenario, condition=condition)
    arm_b = _arm(ctx, version_b, scenario=scenario, condition=condition)
    _disjoint(arm_a, arm_b)
    hard = _hard_index(arm_a.runs + arm_b.runs, spec)
    result, steps, cells, excluded, died_from, strata = compare_runs(
        arm_a.runs, arm_b.runs, hard_index=hard, alpha=alpha, power=power, ceiling=ceiling)
    payload = show.comparison_payload(arm_a, arm_b, result, steps, cells, excluded, died_from, strata,
                                      scenario=scenario, spec=spec)
    if not no_record:
        ctx.ledger().put_document("comparison", {k: payload[k] for k in ("a", "b", "verdict", "pvalue",
                                                                       "detection_limit", "scenario")})
    if ctx.as_json:
        emit_json("comparison", payload)
        return
    show.print_comparison(payload, result, steps, cells, show_steps)


@click.command()
@click.argument("first", metavar="FIRST")
@click.argument("candidate", metavar="CANDIDATE")
@click.option("--control", help="The unchanged agent re-run the same way: " + _ARM_HELP)
@click.option("--scenario", help="Only scenarios matching this (* wildcards).")
@click.option("--within", type=click.IntRange(min=1), default=3, show_default=True,
              help="'Fixed within N': any of up to N re-runs did not fail.")
@click.option("--q", "q_level", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="Flag inputs whose BH q-value is below this.")
@json_option
@pass_context
def fixcheck(ctx: Context, first: str, candidate: str, control: str | None, scenario: str | None,
             within: int, q_level: float) -> None:
    """Check a fix: the first run's failing inputs, re-run on the candidate and on a control.

    FIRST is the run whose failures the fix targets; CANDIDATE the re-run with the fix; the
    control is the unchanged agent re-run the same way. Without a control, the "fixed" share
    cannot be told from failures that come back by chance; the chance share is printed beside it.

    \b
    Example:
      fluke fixcheck model=gpt-4o@0-1 model=gpt-4o@2-3
      fluke fixcheck model=agent-v1@0 model=agent-v2 --control model=agent-v1@1-3
    """
    from ..comparison import consistency, failure_counts, fix_check, outcome_arrays

    arm_first = _arm(ctx, first, scenario=scenario)
    arm_cand = _arm(ctx, candidate, scenario=scenario)
    _disjoint(arm_first, arm_cand)
    arm_ctrl = _arm(ctx, control, scenario=scenario) if control else None
    if arm_ctrl is not None:
        _disjoint(arm_first, arm_ctrl)
        _disjoint(arm_cand, arm_ctrl)
    first_a = outcome_arrays(arm_first.runs)
    if not first_a[1].any():
        raise InputError(None, first, "outcome.passed", "the first run has no failing inputs to re-run")
    check = fix_check(first_a, outcome_arrays(arm_cand.runs),
                      outcome_arrays(arm_ctrl.runs) if arm_ctrl else None, within=within, q=q_level)
    _, f, n = failure_counts(*first_a[:2])
    chance = consistency(f, n)
    payload = show.fixcheck_payload(arm_first, arm_cand, arm_ctrl, check, chance, within)
    if ctx.as_json:
        emit_json("fixcheck", payload)
        return
    show.print_fixcheck(payload, check, chance, within)


@click.command()
@click.argument("agents", nargs=-1, required=True, metavar="AGENT...")
@click.option("--scenario", help="Only scenarios matching this (* wildcards).")
@json_option
@pass_context
def consistency(ctx: Context, agents: tuple[str, ...], scenario: str | None) -> None:
    """Failure consistency per agent: C = P(fail again | failed once), p, and κ.

    Intervals are clustered by scenario. Beside them: what re-running a failing input would call
    "fixed" by pure chance, 1 − p once and 1 − p³ within three.

    \b
    Example:
      fluke consistency model=gpt-4o
      fluke consistency model=gpt-4o@0-1 model=gpt-4o@2-3 --json
    """
    from ..comparison import consistency as consistency_of
    from ..comparison import failure_counts, outcome_arrays

    rows = []
    for text in agents:
        arm = _arm(ctx, text, scenario=scenario)
        inputs, failed, _ = outcome_arrays(arm.runs)
        _, f, n = failure_counts(inputs, failed)
        rows.append((arm, consistency_of(f, n)))
    payload = show.consistency_payload(rows)
    if ctx.as_json:
        emit_json("consistency", payload)
        return
    show.print_consistency(rows)


from ._simulate import calibrate, simulate

__all__ = ["Arm", "calibrate", "compare", "consistency", "fixcheck", "simulate"]

