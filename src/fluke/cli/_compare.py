"""``fluke compare``, ``fixcheck``, ``consistency``, ``simulate`` and ``calibrate``: parse, call, print.

Each verb calls one function of :mod:`fluke.analysis` and prints the result it returns.

>>> from click.testing import CliRunner
>>> CliRunner().invoke(compare, ["--help"]).exit_code
0
"""

from __future__ import annotations

import sys

import click

from ._common import Context, output_options, pass_context, unknown_both_option, unknown_option

_ARM_HELP = ("a version selector (hash prefix or field=value[,field=value]), optionally with "
             "@TRIALS (e.g. model=gpt-4o@0-1 or @0,2,4)")
_LEVEL = click.FloatRange(0, 1, min_open=True, max_open=True)
_RATIO = click.FloatRange(1, None, min_open=True)


@click.command()
@click.argument("version_a", metavar="A")
@click.argument("version_b", metavar="B")
@click.option("--scenario", help="Only scenarios matching this (* wildcards), e.g. 'airline/*'.")
@click.option("--condition", help="Only runs under these conditions key=value[,key=value].")
@click.option("--spec", type=click.Path(exists=True, dir_okay=False),
              help="Grading spec: failed runs with no recorded died_at die at their first hard violation.")
@click.option("--alpha", type=_LEVEL, default=0.05, show_default=True, help="Significance level.")
@click.option("--power", type=_LEVEL, default=0.8, show_default=True, help="Power used for the detection limit.")
@click.option("--ceiling", type=click.FloatRange(0, 100, min_open=True), default=5.0, show_default=True,
              help="Largest detection limit, in pass-rate points, below which 'no significant difference' "
                   "may be said (the size of change teams act on).")
@click.option("--hazard-ceiling", type=_RATIO, default=1.3, show_default=True,
              help="Largest detection limit (hazard ratio) for where runs die, when failure steps are known.")
@unknown_both_option
@click.option("--sequential", is_flag=True,
              help="Add the anytime-valid test over the ledger's ingests (look after every batch, α still holds).")
@click.option("--steps", "show_steps", type=click.IntRange(min=0), default=8, show_default=True,
              help="Print at most this many per-step and per-cell rows (lowest q first).")
@click.option("--no-record", is_flag=True, help="Do not record this comparison in the ledger.")
@click.option("--judge", "judge_sel", metavar="JUDGE",
              help="Compare PPI-corrected pass rates: this judge's verdicts (fluke judge run), corrected by --labels.")
@click.option("--labels", "labels_path", type=click.Path(dir_okay=False),
              help="With --judge: the people's labels (the filled audit sample, or a CSV of run,label).")
@click.option("--margin", type=click.FloatRange(0, 100, min_open=True),
              help="Non-inferiority margin in points: is B not worse (the interval's low end above -MARGIN) "
                   "and cheaper (the spend difference paired by scenario below zero)?")
@click.option("--cost", "cost_key", default="usd", show_default=True,
              help="With --margin: the cost keys that make a run's spend (those ending in this).")
@click.option("--groups", help="B − A per group of a condition key (e.g. group), or 'condition' for the whole "
                               "condition, with Holm across groups; flags a group B makes worse.")
@click.option("--harm", type=click.FloatRange(0, 100), default=0.0, show_default=True,
              help="With --groups: flag a group only when B is worse there by more than this many points.")
@output_options
@pass_context
def compare(ctx: Context, version_a: str, version_b: str, scenario: str | None, condition: str | None,
            spec: str | None, alpha: float, power: float, ceiling: float, hazard_ceiling: float, unknown: str,
            sequential: bool, show_steps: int, no_record: bool, judge_sel: str | None,
            labels_path: str | None, margin: float | None, cost_key: str, groups: str | None, harm: float) -> None:
    """Compare B against A: the difference in pass rate, its test, and what the runs could have seen.

    A and B are version selectors (@TRIALS picks trials). Runs are stratified by
    scenario × condition; only strata both arms ran are compared. The verdict (*different*,
    *no significant difference* or *too small to tell*) comes from a stratified test of failure
    proportions (Cochran–Mantel–Haenszel; exact for small counts; exact McNemar with one run per
    arm per scenario), and the smallest difference in points these runs could have detected prints
    with every one. Where runs die is analysed only when failure steps are known.

    \b
    Example:
      fluke compare model=gpt-4.1 model=ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm
      fluke compare model=gpt-4.1 model=ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm \\
          --scenario 'telecom/*' --json
      fluke compare model=gpt-4.1 model=ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm --unknown both
      fluke compare model=agent-v1 model=agent-v2 --judge 3f2a9c --labels audit.jsonl
      fluke compare model=tradeoff-a model=tradeoff-b --margin 2 --groups group
    """
    from ..analysis import compare as compare_arms

    if judge_sel is not None or labels_path is not None:
        from ..analysis import compare_corrected
        from ..errors import UsageError

        if judge_sel is None or labels_path is None:
            raise UsageError("corrected rates need both --judge JUDGE and --labels FILE")
        given = [name for name, value in (("--scenario", scenario), ("--condition", condition), ("--spec", spec),
                                          ("--sequential", sequential), ("--margin", margin),
                                          ("--groups", groups)) if value]
        if given:
            raise UsageError(f"{given[0]} does not apply to a comparison of corrected rates (--judge)")
        ctx.emit(compare_corrected(ctx.ledger(), version_a, version_b, judge=judge_sel, labels=labels_path,
                                   alpha=alpha, power=power, ceiling=ceiling))
        return

    ctx.emit(compare_arms(ctx.ledger(), version_a, version_b, scenario=scenario, condition=condition, spec=spec,
                          alpha=alpha, power=power, ceiling=ceiling, hazard_ceiling=hazard_ceiling, unknown=unknown,
                          sequential=sequential, rows=show_steps, record=not no_record,
                          every=ctx.all_rows, margin=margin, groups=groups, harm=harm, cost=cost_key))


@click.command()
@click.argument("first", metavar="FIRST")
@click.argument("candidate", metavar="CANDIDATE")
@click.option("--control", help="The unchanged agent re-run the same way: " + _ARM_HELP)
@click.option("--scenario", help="Only scenarios matching this (* wildcards).")
@click.option("--within", type=click.IntRange(min=1), default=3, show_default=True,
              help="'Fixed within N': any of up to N re-runs did not fail.")
@click.option("--q", "q_level", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="Flag inputs whose BH q-value is below this.")
@unknown_option
@output_options
@pass_context
def fixcheck(ctx: Context, first: str, candidate: str, control: str | None, scenario: str | None,
             within: int, q_level: float, unknown: str) -> None:
    """Check a fix: the first run's failing inputs, re-run on the candidate and on a control.

    FIRST is the run whose failures the fix targets; CANDIDATE the re-run with the fix; the
    control is the unchanged agent re-run the same way. Without a control, the "fixed" share
    cannot be told from failures that come back by chance; the chance share is printed beside it.

    \b
    Example:
      fluke fixcheck model=gpt-4o@0-1 model=gpt-4o@2-3
      fluke fixcheck model=agent-v1@0 model=agent-v2 --control model=agent-v1@1-3
    """
    from ..analysis import fixcheck as check_fix

    ctx.emit(check_fix(ctx.ledger(), first, candidate, control=control, scenario=scenario, within=within,
                       q=q_level, unknown=unknown))


@click.command()
@click.argument("agents", nargs=-1, required=True, metavar="AGENT...")
@click.option("--scenario", help="Only scenarios matching this (* wildcards).")
@unknown_option
@output_options
@pass_context
def consistency(ctx: Context, agents: tuple[str, ...], scenario: str | None, unknown: str) -> None:
    """Failure consistency per agent: C = P(fail again | failed once), p, and κ.

    Intervals are clustered by scenario. Beside them: what re-running a failing input would call
    "fixed" by pure chance, 1 − p once and 1 − p³ within three.

    \b
    Example:
      fluke consistency model=gpt-4o
      fluke consistency model=gpt-4o@0-1 model=gpt-4o@2-3 --json
    """
    from ..analysis import consistency as consistency_of

    ctx.emit(consistency_of(ctx.ledger(), agents, scenario=scenario, unknown=unknown))


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
@output_options
@pass_context
def simulate(ctx: Context, tasks: int, runs_per_task: tuple[int, ...], factor: float, seal_file: str | None,
             reveal_file: str | None, force: bool) -> None:
    """Run the staged synthetic agent: arms A, A′ (fresh salt) and B (one stage made worse).

    Each episode calls review, sample and measure (each fails at 10%), then replies. Which
    stage B changes is drawn from the OS random source and sealed by digest in the ledger
    before any run; the stage itself goes to a private seal file. Each size (2 and 40 runs per
    task by default) gets its own three arms under the one seal. Compare the arms, then
    --reveal the file (it refuses to open before every B arm has been compared, unless
    --force). Exit 1 when a reveal check fails.

    \b
    Example:
      fluke simulate --runs-per-task 2 --runs-per-task 40
      fluke compare <A prefix> <B prefix>
      fluke simulate --reveal planted-<digest>.json
    """
    from .. import analysis

    if reveal_file:
        opened = analysis.reveal(ctx.ledger(), reveal_file, force=force)
        ctx.emit(opened)
        if not opened.holds:
            sys.exit(1)
        return
    ctx.emit(analysis.simulate(ctx.ledger(), tasks=tasks, runs_per_task=runs_per_task, factor=factor,
                               seal_file=seal_file))


@click.command()
@click.option("--pairs", type=click.IntRange(min=1), default=200, show_default=True, help="Unchanged pairs.")
@click.option("--tasks", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--runs-per-task", type=click.IntRange(min=1), default=40, show_default=True)
@click.option("--alpha", type=_LEVEL, default=0.05, show_default=True)
@click.option("--test", type=click.Choice(["pass rate", "log-rank"]), default="pass rate", show_default=True,
              help="The comparison to calibrate: the pass-rate test compare decides by, or the log-rank on steps.")
@click.option("--ceiling", type=float, default=None,
              help="Detection-limit ceiling: points for the pass-rate test (default 5), a hazard ratio for the "
                   "log-rank (default 1.3).")
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh from the OS, printed).")
@output_options
@pass_context
def calibrate(ctx: Context, pairs: int, tasks: int, runs_per_task: int, alpha: float, test: str,
              ceiling: float | None, seed: int | None) -> None:
    """False-alarm calibration: compare many unchanged pairs of the staged agent.

    Prints how many pairs the test called different (with a Wilson interval that should
    contain alpha), the p-value histogram in 20 bins and two uniformity tests. Exit 1 when the
    interval misses alpha. Nothing is written to the ledger.

    \b
    Example:
      fluke calibrate --pairs 200 --seed 1
    """
    from ..analysis import calibrate as calibrate_null

    result = calibrate_null(pairs=pairs, tasks=tasks, runs_per_task=runs_per_task, alpha=alpha, ceiling=ceiling,
                            test=test, seed=seed)
    ctx.emit(result)
    if not result.holds:
        sys.exit(1)


__all__ = ["calibrate", "compare", "consistency", "fixcheck", "simulate"]
